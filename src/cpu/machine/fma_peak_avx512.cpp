// The AVX-512 peak kernel: kFmaPeakChains zmm accumulators, one vfmadd231ps each per step,
// nothing else in the loop (fma_peak.hpp has the contract). Compiled for AVX-512 by
// attribute only; runs only where cpu_features() reports AVX-512 F/BW/VL/DQ.
#include <immintrin.h>

#include "cpu/machine/fma_peak.hpp"

#define GEMMLAB_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")))

namespace gemmlab::cpu {
namespace {

constexpr int kLanes = 16;
static_assert(kLanes <= kFmaPeakMaxLanes, "raise kFmaPeakMaxLanes in fma_peak.hpp");

GEMMLAB_AVX512 void peak_avx512(std::int64_t steps, float multiplier, float addend, const float* start,
                                float* out) {
  const __m512 m = _mm512_set1_ps(multiplier), a = _mm512_set1_ps(addend);
  __m512 acc[kFmaPeakChains];  // (chains, 16): fully unrolled below, so GCC keeps it in registers
#pragma GCC unroll 16
  for (int c = 0; c < kFmaPeakChains; ++c) acc[c] = _mm512_loadu_ps(start + c * kLanes);
  for (std::int64_t s = 0; s < steps; ++s) {
#pragma GCC unroll 16
    for (int c = 0; c < kFmaPeakChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], m, a);
  }
#pragma GCC unroll 16
  for (int c = 0; c < kFmaPeakChains; ++c) _mm512_storeu_ps(out + c * kLanes, acc[c]);
}

}  // namespace

const FmaPeakKernel kAvx512FmaPeak{Isa::Avx512, "avx512_zmm", 32 * kLanes, kFmaPeakChains, 2, peak_avx512};

}  // namespace gemmlab::cpu
