// Programmatic dependent launch (sm_90): a kernel lets the next kernel on its stream start
// early, and that kernel waits for the first's memory before reading it. PTX ISA 8.x,
// "Parallel Synchronization and Communication Instructions: griddepcontrol". Before sm_90 (and for launches without the
// programmatic-serialization attribute) kernels on a stream run one after the other anyway,
// so both are no-ops there. (cudaTriggerProgrammaticLaunchCompletion and
// cudaGridDependencySynchronize emit griddepcontrol unguarded, which ptxas refuses below sm_90.)
#pragma once

#include <cuda_runtime.h>

#include "cuda/arch/target.cuh"

namespace gemmlab::cuda::arch {

// griddepcontrol.launch_dependents: the next kernel may launch (its blocks start as SMs free up).
__device__ __forceinline__ void launch_dependents() {
#if GEMMLAB_CODE_SM90
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// griddepcontrol.wait: waits until the kernels this one depends on have finished and their
// memory is visible.
__device__ __forceinline__ void wait_for_dependencies() {
#if GEMMLAB_CODE_SM90
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

}  // namespace gemmlab::cuda::arch
