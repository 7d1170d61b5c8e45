// The consumers' pieces beyond the plain MMA loop (kernel.cuh): a tf32 A read into registers
// from the layout it is stored in, and promoted sums (3xTF32's big·big pass, every FP8 stage).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/arch/smem.cuh"
#include "cuda/arch/wgmma.cuh"
#include "cuda/hopper/config.cuh"

namespace gemmlab::cuda::hopper {

// This thread's A fragments of one stage (tf32 A stored k x m, read into registers):
// register 4 kk + i is a_i of wgmma step kk (arch::wgmma_m64n256k8_tf32_rs): rows
// permuted_row(warp, lane, i % 2) of the warpgroup's 64, k 8 kk + lane%4 + 4 (i / 2).
__device__ __forceinline__ void load_a_fragments(const unsigned char* a_stage, int warpgroup,
                                                 std::uint32_t (&f)[kFragmentRegs]) {
  const int lane = threadIdx.x % 32, warp = (threadIdx.x % kWarpgroup) / 32;
  const unsigned block = arch::smem_address(a_stage) + static_cast<unsigned>((warpgroup * 2 + warp / 2) * kMnBlockBytes);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = permuted_row(warp, lane, h) % kMnBlock;  // within the block
#pragma unroll
    for (int kk = 0; kk < kKSteps<Tf32Operand>; ++kk)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int k = 8 * kk + lane % 4 + 4 * half;
        const unsigned offset = static_cast<unsigned>(k * kRowBytes + (((row / 4) ^ (k % 8)) * 16) + (row % 4) * 4);
        asm volatile("ld.shared.b32 %0, [%1];" : "=r"(f[4 * kk + 2 * half + h]) : "r"(block + offset) : "memory");
      }
  }
}

// Promoted sums (the kernel's Promote): the tensor cores' adders lose bits over a long K.
// 3xTF32: they truncate, which costs f32 sums about four bits (measured at 8192^3: 1.9e-5
// relative error against cuBLAS SGEMM's 1.6e-6). FP8: they keep about 14 bits of the sum.
// So every few stages' products are summed by the tensor cores into a short partial sum that
// the threads then add into separate registers, `sums`, with round-to-nearest (3xTF32
// measured: 2.8e-7). Registers allow a partial of half the tile's columns, so the stages run
// as two m64n128 halves, each waited for before its adds; the other consumer warpgroup's
// MMAs fill the tensor cores meanwhile. (FP8 in m64n64 quarters, two partials in flight so
// that one quarter's adds overlap the next one's MMAs, ran 6-7 % slower; the two warpgroups
// taking turns at issuing changed nothing: what-did-not-pay.md.)
// `sums` takes over from the wgmma accumulators after the unpromoted passes (3xTF32's small
// ones; none for FP8): adds into registers a wgmma accumulates into make ptxas serialise
// every wgmma of the kernel (C7515). Measured for 3xTF32 at 8192^3 on an H100 (TFLOP/s):
// 133.6 unpromoted; 97.7 promoting every pass stage by stage; 102.7 every pass two stages at
// a time; 114.5 the last pass only, adding into the accumulators (serialised); 113.5 the
// same with the small passes' groups waited for (not serialised); 119.7 the last pass only
// into `sums` (this kernel).
// Stages per promoted partial sum: 3xTF32 two (64 of K; three, fewer waits, measured 12 %
// slower than two on an H200: the producer is left one free stage of four); FP8 one, 128 of
// K, the interval the FP8 tolerance assumes (core/verify.cpp).
template <class E>
constexpr int kPromoteStages = E::kPromoted ? 1 : 2;
template <class E>
constexpr int kPromoteK = kPromoteStages<E> * kBK<E>;
static_assert(kPromoteStages<Tf32Operand> < kStages, "the producer needs a free stage");

template <class E, bool TransA, bool TransB>
__device__ __forceinline__ void promoted_stages(float (&sums)[128],
                                                const unsigned char* const (&stages)[kPromoteStages<E>], int count,
                                                int warpgroup) {
  static_assert(!TransA && TransB, "promoted sums: both operands K-major");
  constexpr int kHalves = 2;
  constexpr int kHalfBBytes = kBN / kHalves * kRowBytes;  // K-major rows of B per half
  constexpr int kHalfRegs = 128 / kHalves;                // m64n128 register i is m64n256 register h * kHalfRegs + i
  float part[kHalfRegs];  // (64, BN / 2) partial sum
#pragma unroll
  for (int h = 0; h < kHalves; ++h) {
#pragma unroll
    for (int i = 0; i < kHalfRegs; ++i) arch::fence_accumulator(part[i]);
    arch::wgmma_fence();
#pragma unroll
    for (int g = 0; g < kPromoteStages<E>; ++g) {
      if (g < count) {
#pragma unroll
        for (int kk = 0; kk < kKSteps<E>; ++kk) {
          const std::uint64_t a = a_descriptor<false>(stages[g], warpgroup, kk);
          const std::uint64_t b = b_descriptor<true>(stages[g] + kABytes + h * kHalfBBytes, kk);
          E::mma_half(part, a, b, g > 0 || kk > 0);
        }
      }
    }
    arch::wgmma_commit();
    arch::wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < kHalfRegs; ++i) {
      arch::fence_accumulator(part[i]);
      sums[h * kHalfRegs + i] += part[i];
    }
  }
}

}  // namespace gemmlab::cuda::hopper
