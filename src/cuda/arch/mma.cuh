// Warp-level tensor-core multiply-accumulate (sm_80+), one struct per instruction.
// PTX ISA 8.x, section 9.7.14.5.14 "Multiply-and-Accumulate Instruction: mma", fragments
// in 9.7.14.5.8 "Matrix Fragments for mma.m16n8k16 with floating point type".
//
// D (16x8, f32) += A (16x16, row-major) * B (16x8, "col": k contiguous per column). With
// g = lane / 4 and t = lane % 4, each lane holds
//   a[0]: A(g, 2t..2t+1)     a[1]: A(g+8, 2t..2t+1)   a[2]: A(g, 2t+8..)   a[3]: A(g+8, 2t+8..)
//   b[0]: B(2t..2t+1, g)     b[1]: B(2t+8..2t+9, g)
//   d[0..1]: D(g, 2t..2t+1)  d[2..3]: D(g+8, 2t..2t+1)
// two 16-bit elements per 32-bit register, the lower k (or column) in the low half.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cuda/arch/target.cuh"

// (sm_80 code: mma_sync_kernel compiles its body only where GEMMLAB_CODE_SM80, and so never
// instantiates these for sm_75.)
namespace gemmlab::cuda::arch {

// mma.sync.aligned.m16n8k16.row.col.f32.<T>.<T>.f32 for T = bf16 or f16: products exact,
// sums in float32.
template <class T>
struct MmaM16N8K16F32;

template <>
struct MmaM16N8K16F32<__nv_bfloat16> {
  __device__ __forceinline__ static void run(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

template <>
struct MmaM16N8K16F32<__half> {
  __device__ __forceinline__ static void run(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

}  // namespace gemmlab::cuda::arch
