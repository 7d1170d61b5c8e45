// Warp-collective loads of 8x8 matrices of 16-bit elements from shared memory into the
// register fragments mma.sync takes (sm_75+), one wrapper per instruction form.
// PTX ISA 8.x, section 9.7.14.5.15 "Warp-level matrix load instruction: ldmatrix".
//
// Each of the four 8x8 matrices is eight rows of 16 bytes anywhere in shared memory:
// lanes 8i .. 8i+7 give the addresses of rows 0..7 of matrix i (16-byte aligned). Lane l
// receives, in register i, two neighbouring elements of matrix i:
//   plain:   row l/4, columns 2(l%4) and 2(l%4)+1
//   .trans:  column l/4, rows 2(l%4) and 2(l%4)+1   (the matrix transposed on the way)
#pragma once

#include <cuda_runtime.h>

#include "cuda/arch/smem.cuh"

namespace gemmlab::cuda::arch {

// ldmatrix.sync.aligned.m8n8.x4.shared.b16
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(smem_row)));
}

// ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(smem_row)));
}

}  // namespace gemmlab::cuda::arch
