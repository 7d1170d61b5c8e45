// The AVX-512 micro-kernel: a 12 x 32 tile of C in twenty-four zmm registers.
//
// Per step p of kc: two aligned loads of B (32 floats), twelve broadcasts of A, twenty-four
// FMAs (24 FMA per 14 loads = 1.7; 768 flops per 44 loaded floats). 24 accumulators + 2 B
// + 1 broadcast = 27 of the 32 zmm registers. The same structure as the AVX2 kernel
// (named accumulators, one fma_row per row of the tile), twice the width and the rows.
// The driver keeps the A micro-panel in L1 and streams the B micro-panels from L2
// (L1Panel::A, microkernel.hpp), so the kernel prefetches B (and A) kPrefetchSteps ahead
// into L1, and fetches the C tile only near the end of the loop: fetched at the start, it
// would be evicted again by the 48 KiB of B that pass through L1 before it is used.
// Measured on an Emerald Rapids core (docs/cpu-ladder.md): +2 % at 2048 over no prefetch.
// Compiled for AVX-512 by attribute only; runs only where cpu_features() reports
// AVX-512 F/BW/VL/DQ.
#include <immintrin.h>

#include "cpu/blis/microkernel.hpp"

#define GEMMLAB_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")))
#define GEMMLAB_AVX512_INLINE \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma"), always_inline)) inline

namespace gemmlab::cpu {
namespace {

constexpr int kMr = 12;
constexpr int kNr = 32;
constexpr int kPrefetchSteps = 8;  // 8 steps x 12 cycles: ~100 cycles, several L2 latencies
constexpr int kCPrefetchSteps = 24;  // C tile fetched this many steps before the end
static_assert(kMr <= kMaxMr && kNr <= kMaxNr, "raise kMaxMr/kMaxNr in microkernel.hpp");

// One row of the tile, one step: C(r, 0:32) += A(r, p) * B(p, 0:32).
GEMMLAB_AVX512_INLINE void fma_row(__m512& c0, __m512& c1, const float* a, __m512 b0, __m512 b1) {
  const __m512 x = _mm512_set1_ps(*a);  // a broadcast load
  c0 = _mm512_fmadd_ps(x, b0, c0);
  c1 = _mm512_fmadd_ps(x, b1, c1);
}

// C(r, 0:32) <- alpha * acc (+ beta * C(r, 0:32) unless beta == 0: then C is not read).
GEMMLAB_AVX512_INLINE void store_row(float* c, __m512 c0, __m512 c1, __m512 alpha, __m512 beta,
                                     bool beta_zero) {
  if (beta_zero) {
    _mm512_storeu_ps(c, _mm512_mul_ps(alpha, c0));
    _mm512_storeu_ps(c + 16, _mm512_mul_ps(alpha, c1));
  } else {
    _mm512_storeu_ps(c, _mm512_fmadd_ps(alpha, c0, _mm512_mul_ps(beta, _mm512_loadu_ps(c))));
    _mm512_storeu_ps(c + 16,
                     _mm512_fmadd_ps(alpha, c1, _mm512_mul_ps(beta, _mm512_loadu_ps(c + 16))));
  }
}

GEMMLAB_AVX512 void kernel_12x32(std::int64_t kc, const float* ap, const float* bp, float* c,
                                 std::int64_t ldc, float alpha, float beta) {
  __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00,
         c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00,
         c61 = c00, c70 = c00, c71 = c00, c80 = c00, c81 = c00, c90 = c00, c91 = c00,
         ca0 = c00, ca1 = c00, cb0 = c00, cb1 = c00;  // (12, 32)
#pragma GCC unroll 2
  for (std::int64_t p = 0; p < kc; ++p) {
    if (p == kc - kCPrefetchSteps || (p == 0 && kc < kCPrefetchSteps)) {
      for (int r = 0; r < kMr; ++r) {
        _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + kNr - 1), _MM_HINT_T0);
      }
    }
    _mm_prefetch(reinterpret_cast<const char*>(ap + kPrefetchSteps * kMr), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(bp + kPrefetchSteps * kNr), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(bp + kPrefetchSteps * kNr + 16), _MM_HINT_T0);
    const __m512 b0 = _mm512_load_ps(bp);       // B(p, 0:16)
    const __m512 b1 = _mm512_load_ps(bp + 16);  // B(p, 16:32)
    fma_row(c00, c01, ap + 0, b0, b1);
    fma_row(c10, c11, ap + 1, b0, b1);
    fma_row(c20, c21, ap + 2, b0, b1);
    fma_row(c30, c31, ap + 3, b0, b1);
    fma_row(c40, c41, ap + 4, b0, b1);
    fma_row(c50, c51, ap + 5, b0, b1);
    fma_row(c60, c61, ap + 6, b0, b1);
    fma_row(c70, c71, ap + 7, b0, b1);
    fma_row(c80, c81, ap + 8, b0, b1);
    fma_row(c90, c91, ap + 9, b0, b1);
    fma_row(ca0, ca1, ap + 10, b0, b1);
    fma_row(cb0, cb1, ap + 11, b0, b1);
    ap += kMr;
    bp += kNr;
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  const bool beta_zero = beta == 0.0f;
  store_row(c + 0 * ldc, c00, c01, va, vb, beta_zero);
  store_row(c + 1 * ldc, c10, c11, va, vb, beta_zero);
  store_row(c + 2 * ldc, c20, c21, va, vb, beta_zero);
  store_row(c + 3 * ldc, c30, c31, va, vb, beta_zero);
  store_row(c + 4 * ldc, c40, c41, va, vb, beta_zero);
  store_row(c + 5 * ldc, c50, c51, va, vb, beta_zero);
  store_row(c + 6 * ldc, c60, c61, va, vb, beta_zero);
  store_row(c + 7 * ldc, c70, c71, va, vb, beta_zero);
  store_row(c + 8 * ldc, c80, c81, va, vb, beta_zero);
  store_row(c + 9 * ldc, c90, c91, va, vb, beta_zero);
  store_row(c + 10 * ldc, ca0, ca1, va, vb, beta_zero);
  store_row(c + 11 * ldc, cb0, cb1, va, vb, beta_zero);
}

}  // namespace

const MicroKernel kAvx512Kernel{Isa::Avx512, "avx512_12x32", kMr, kNr, 512, L1Panel::A, kernel_12x32};

}  // namespace gemmlab::cpu
