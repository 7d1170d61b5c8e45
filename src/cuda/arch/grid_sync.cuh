// Counters in global memory that blocks of one grid use to hand data to each other (the
// stream-K tail of wgmma_ws.cuh): an acquire-release add after a block's writes, whose old
// value tells the block whether it came last and, if so, orders its later reads after the
// others' writes. PTX ISA 8.x, "atom" with .acq_rel at .gpu scope (memory consistency
// model, section 8). Device code only.
#pragma once

#include <cuda_runtime.h>

namespace gemmlab::cuda::arch {

// *counter += value, returning the old value: after (release) every write this thread has
// made or has seen through a barrier before (the writes of the whole block when it follows
// bar.sync: cumulativity), and before (acquire) its later reads and, through a following
// bar.sync, the block's.
__device__ __forceinline__ int acq_rel_add_gpu(int* counter, int value) {
  int old;
  asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], %2;\n" : "=r"(old) : "l"(counter), "r"(value) : "memory");
  return old;
}

// *counter = value, with no ordering (a reset no other block reads before the grid ends).
__device__ __forceinline__ void store_relaxed_gpu(int* counter, int value) {
  asm volatile("st.relaxed.gpu.global.s32 [%0], %1;\n" ::"l"(counter), "r"(value) : "memory");
}

}  // namespace gemmlab::cuda::arch
