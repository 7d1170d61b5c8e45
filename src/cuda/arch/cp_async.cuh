// Asynchronous global -> shared copies (sm_80+), one wrapper per instruction.
// PTX ISA 8.x, section 9.7.9.25.3 "Data Movement and Conversion Instructions: cp.async",
// cp.async.commit_group and cp.async.wait_group.
//
// Before sm_80 (Turing) there is no cp.async: each copy is an ordinary load and shared
// store, done when the wrapper returns, and commit and wait have nothing to do. A pipeline
// written for cp.async stays correct (a copy that has landed early satisfies every wait; the
// barriers that protect a stage from being overwritten are the same), it only loses the
// overlap, so the SIMT rungs built on it run on every GPU of the build.
#pragma once

#include <cuda_runtime.h>

#include "cuda/arch/smem.cuh"
#include "cuda/arch/target.cuh"

namespace gemmlab::cuda::arch {

// cp.async.cg.shared.global [dst], [src], 16, src_bytes: copies src_bytes (0..16) and
// zero-fills the rest of the 16 bytes; .cg bypasses L1 (the tile is read once per block).
// Both addresses must be 16-byte aligned.
__device__ __forceinline__ void cp_async_16(void* smem_dst, const void* gmem_src, int src_bytes) {
#if !GEMMLAB_CODE_SM80
  if (src_bytes == 16) {
    *static_cast<uint4*>(smem_dst) = *static_cast<const uint4*>(gmem_src);
    return;
  }
  // A ragged edge: the bytes that exist, zeros after them (as cp.async's zero-fill).
  unsigned char* dst = static_cast<unsigned char*>(smem_dst);
  const unsigned char* src = static_cast<const unsigned char*>(gmem_src);
  for (int i = 0; i < 16; ++i) dst[i] = i < src_bytes ? src[i] : 0;
#else
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(smem_dst)),
               "l"(gmem_src), "r"(src_bytes)
               : "memory");
#endif
}

// cp.async.ca.shared.global [dst], [src], 4, src_bytes: one word, zero-filled when
// src_bytes is 0 (an element outside the matrix). For operands that are not 16-byte aligned.
__device__ __forceinline__ void cp_async_4(void* smem_dst, const void* gmem_src, int src_bytes) {
#if !GEMMLAB_CODE_SM80
  *static_cast<unsigned*>(smem_dst) = src_bytes == 4 ? *static_cast<const unsigned*>(gmem_src) : 0u;
#else
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_address(smem_dst)),
               "l"(gmem_src), "r"(src_bytes)
               : "memory");
#endif
}

// cp.async.ca.shared.global [dst], [src], 4: one word known to lie inside the matrix.
__device__ __forceinline__ void cp_async_4(void* smem_dst, const void* gmem_src) {
#if !GEMMLAB_CODE_SM80
  *static_cast<unsigned*>(smem_dst) = *static_cast<const unsigned*>(gmem_src);
#else
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(smem_address(smem_dst)), "l"(gmem_src) : "memory");
#endif
}

// cp.async.commit_group: closes the group of copies this thread issued since the last commit.
__device__ __forceinline__ void cp_async_commit() {
#if GEMMLAB_CODE_SM80
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// cp.async.wait_group N: waits until at most N of this thread's committed groups are pending.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if GEMMLAB_CODE_SM80
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

}  // namespace gemmlab::cuda::arch
