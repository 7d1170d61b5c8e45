// Asynchronous global -> shared copies (sm_80+), one wrapper per instruction.
// PTX ISA 8.x, section 9.7.9.25.3 "Data Movement and Conversion Instructions: cp.async",
// cp.async.commit_group and cp.async.wait_group.
#pragma once

#include <cuda_runtime.h>

#include "cuda/arch/smem.cuh"

namespace gemmlab::cuda::arch {

// cp.async.cg.shared.global [dst], [src], 16, src_bytes: copies src_bytes (0..16) and
// zero-fills the rest of the 16 bytes; .cg bypasses L1 (the tile is read once per block).
// Both addresses must be 16-byte aligned.
__device__ __forceinline__ void cp_async_16(void* smem_dst, const void* gmem_src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(smem_dst)),
               "l"(gmem_src), "r"(src_bytes)
               : "memory");
}

// cp.async.ca.shared.global [dst], [src], 4, src_bytes: one word, zero-filled when
// src_bytes is 0 (an element outside the matrix). For operands that are not 16-byte aligned.
__device__ __forceinline__ void cp_async_4(void* smem_dst, const void* gmem_src, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_address(smem_dst)),
               "l"(gmem_src), "r"(src_bytes)
               : "memory");
}

// cp.async.ca.shared.global [dst], [src], 4: one word known to lie inside the matrix.
__device__ __forceinline__ void cp_async_4(void* smem_dst, const void* gmem_src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(smem_address(smem_dst)), "l"(gmem_src) : "memory");
}

// cp.async.commit_group: closes the group of copies this thread issued since the last commit.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// cp.async.wait_group N: waits until at most N of this thread's committed groups are pending.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

}  // namespace gemmlab::cuda::arch
