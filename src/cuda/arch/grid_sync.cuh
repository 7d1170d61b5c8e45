// Counters in global memory that blocks of one grid use to hand data to each other (the
// stream-K fix-up of wgmma_ws.cuh): a release add after a block's writes, an acquire load
// before another block reads them. PTX ISA 8.x, "red" and "ld" with .release / .acquire at
// .gpu scope (memory consistency model, section 8). Device code only.
#pragma once

#include <cuda_runtime.h>

namespace gemmlab::cuda::arch {

// *counter += value, after (release) every write this thread has made or has seen through
// a barrier before: the writes of the whole block when it follows bar.sync (cumulativity).
__device__ __forceinline__ void release_add_gpu(int* counter, int value) {
  asm volatile("red.release.gpu.global.add.s32 [%0], %1;\n" ::"l"(counter), "r"(value) : "memory");
}

// *counter, before (acquire) every later read of this thread and, through a following
// bar.sync, of the block.
__device__ __forceinline__ int load_acquire_gpu(const int* counter) {
  int value;
  asm volatile("ld.acquire.gpu.global.s32 %0, [%1];\n" : "=r"(value) : "l"(counter) : "memory");
  return value;
}

// *counter = value, with no ordering (a reset no other block reads before the grid ends).
__device__ __forceinline__ void store_relaxed_gpu(int* counter, int value) {
  asm volatile("st.relaxed.gpu.global.s32 [%0], %1;\n" ::"l"(counter), "r"(value) : "memory");
}

}  // namespace gemmlab::cuda::arch
