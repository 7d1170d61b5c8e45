// The AVX2 + FMA peak kernel: kFmaPeakChains ymm accumulators, one vfmadd231ps each per
// step, nothing else in the loop (fma_peak.hpp has the contract). 12 accumulators + the
// two constants = 14 of the 16 ymm registers. Compiled for AVX2 + FMA by attribute only;
// runs only where cpu_features() says so.
#include <immintrin.h>

#include "cpu/machine/fma_peak.hpp"

#define GEMMLAB_AVX2 __attribute__((target("avx2,fma")))

namespace gemmlab::cpu {
namespace {

constexpr int kLanes = 8;

GEMMLAB_AVX2 void peak_avx2(std::int64_t steps, float multiplier, float addend, const float* start,
                            float* out) {
  const __m256 m = _mm256_set1_ps(multiplier), a = _mm256_set1_ps(addend);
  __m256 acc[kFmaPeakChains];  // (chains, 8): fully unrolled below, so GCC keeps it in registers
#pragma GCC unroll 16
  for (int c = 0; c < kFmaPeakChains; ++c) acc[c] = _mm256_loadu_ps(start + c * kLanes);
  for (std::int64_t s = 0; s < steps; ++s) {
#pragma GCC unroll 16
    for (int c = 0; c < kFmaPeakChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], m, a);
  }
#pragma GCC unroll 16
  for (int c = 0; c < kFmaPeakChains; ++c) _mm256_storeu_ps(out + c * kLanes, acc[c]);
}

}  // namespace

const FmaPeakKernel kAvx2FmaPeak{Isa::Avx2, "avx2_fma_ymm", 32 * kLanes, kFmaPeakChains, 2, peak_avx2};

}  // namespace gemmlab::cpu
