// The AVX2 + FMA micro-kernel: a 6 x 16 tile of C in twelve ymm registers.
//
// Per step p of kc: two aligned loads of B (16 floats), six broadcasts of A, twelve FMAs
// (12 FMA per 8 loads = 1.5; 192 flops per 22 loaded floats). Twelve independent
// accumulators cover the FMA latency (4 cycles) times two FMA ports with room to spare;
// 12 + 2 + 1 = 15 of the 16 ymm registers. The accumulators are named variables, not an
// array: GCC keeps an array of vectors on the stack and reloads it every step.
// Compiled for AVX2 + FMA by attribute only: the rest of the build targets baseline x86-64,
// and this function runs only where cpu_features() says so.
#include <immintrin.h>

#include "cpu/blis/microkernel.hpp"

#define GEMMLAB_AVX2 __attribute__((target("avx2,fma")))
#define GEMMLAB_AVX2_INLINE __attribute__((target("avx2,fma"), always_inline)) inline

namespace gemmlab::cpu {
namespace {

constexpr int kMr = 6;
constexpr int kNr = 16;

// One row of the tile, one step: C(r, 0:16) += A(r, p) * B(p, 0:16).
GEMMLAB_AVX2_INLINE void fma_row(__m256& c0, __m256& c1, const float* a, __m256 b0, __m256 b1) {
  const __m256 x = _mm256_broadcast_ss(a);
  c0 = _mm256_fmadd_ps(x, b0, c0);
  c1 = _mm256_fmadd_ps(x, b1, c1);
}

// C(r, 0:16) <- alpha * acc (+ beta * C(r, 0:16) unless beta == 0: then C is not read).
GEMMLAB_AVX2_INLINE void store_row(float* c, __m256 c0, __m256 c1, __m256 alpha, __m256 beta,
                                   bool beta_zero) {
  if (beta_zero) {
    _mm256_storeu_ps(c, _mm256_mul_ps(alpha, c0));
    _mm256_storeu_ps(c + 8, _mm256_mul_ps(alpha, c1));
  } else {
    _mm256_storeu_ps(c, _mm256_fmadd_ps(alpha, c0, _mm256_mul_ps(beta, _mm256_loadu_ps(c))));
    _mm256_storeu_ps(c + 8, _mm256_fmadd_ps(alpha, c1, _mm256_mul_ps(beta, _mm256_loadu_ps(c + 8))));
  }
}

GEMMLAB_AVX2 void kernel_6x16(std::int64_t kc, const float* ap, const float* bp, float* c,
                              std::int64_t ldc, float alpha, float beta) {
  // The C tile is needed only after the loop: start fetching it now.
  for (int r = 0; r < kMr; ++r) {
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + kNr - 1), _MM_HINT_T0);
  }
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00,
         c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;  // (6, 16)
#pragma GCC unroll 4
  for (std::int64_t p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_load_ps(bp);      // B(p, 0:8)
    const __m256 b1 = _mm256_load_ps(bp + 8);  // B(p, 8:16)
    fma_row(c00, c01, ap + 0, b0, b1);
    fma_row(c10, c11, ap + 1, b0, b1);
    fma_row(c20, c21, ap + 2, b0, b1);
    fma_row(c30, c31, ap + 3, b0, b1);
    fma_row(c40, c41, ap + 4, b0, b1);
    fma_row(c50, c51, ap + 5, b0, b1);
    ap += kMr;
    bp += kNr;
  }
  const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
  const bool beta_zero = beta == 0.0f;
  store_row(c + 0 * ldc, c00, c01, va, vb, beta_zero);
  store_row(c + 1 * ldc, c10, c11, va, vb, beta_zero);
  store_row(c + 2 * ldc, c20, c21, va, vb, beta_zero);
  store_row(c + 3 * ldc, c30, c31, va, vb, beta_zero);
  store_row(c + 4 * ldc, c40, c41, va, vb, beta_zero);
  store_row(c + 5 * ldc, c50, c51, va, vb, beta_zero);
}

}  // namespace

const MicroKernel kAvx2Kernel{Isa::Avx2, "avx2_fma_6x16", kMr, kNr, 256, L1Panel::B, kernel_6x16};

}  // namespace gemmlab::cpu
