// The portable peak kernel: kFmaPeakChains SIMD values of the build's baseline width
// (simd.hpp: 4 floats with SSE on x86-64), a multiply and an add each per step (baseline
// x86-64 has no FMA), plain C++ without intrinsics (fma_peak.hpp has the contract).
#include "cpu/machine/fma_peak.hpp"
#include "cpu/blis/simd.hpp"

namespace gemmlab::cpu {
namespace {

static_assert(kVecWidth <= kFmaPeakMaxLanes, "raise kFmaPeakMaxLanes in fma_peak.hpp");

void peak_portable(std::int64_t steps, float multiplier, float addend, const float* start, float* out) {
  const Vec m(multiplier), a(addend);
  Vec acc[kFmaPeakChains];  // (chains, kVecWidth)
#pragma GCC unroll 16
  for (int c = 0; c < kFmaPeakChains; ++c) acc[c].copy_from(start + c * kVecWidth, kVecAligned);
  for (std::int64_t s = 0; s < steps; ++s) {
#pragma GCC unroll 16
    for (int c = 0; c < kFmaPeakChains; ++c) {
      acc[c] = acc[c] * m;
      acc[c] += a;
    }
  }
#pragma GCC unroll 16
  for (int c = 0; c < kFmaPeakChains; ++c) acc[c].copy_to(out + c * kVecWidth, kVecAligned);
}

}  // namespace

const FmaPeakKernel kPortableFmaPeak{Isa::Portable, "portable_simd", 32 * kVecWidth, kFmaPeakChains, 2,
                                     peak_portable};

}  // namespace gemmlab::cpu
