// Portable SIMD values for the portable rungs (04_register_tiled, the portable micro-kernel):
// std::experimental::native_simd<float> (ISO TS 19570, libstdc++ >= 11), as wide as the
// build's target (4 floats with SSE on baseline x86-64). A library without the TS gets a
// one-lane stand-in with the same interface, so the code stays correct, only narrower.
//
// Why not float arrays: GCC keeps a float acc[4][8] register block in memory (or
// vectorises across the wrong loop), 6.7 GFLOP/s against 29 for the same loop on
// simd values, which it keeps in registers (measured on the Zen 3 of docs/cpu-ladder.md).
#pragma once

#include <cstddef>
#include <type_traits>

#if __has_include(<experimental/simd>)
#include <experimental/simd>
#define GEMMLAB_HAVE_STDX_SIMD 1
#endif

namespace gemmlab::cpu {

#ifdef GEMMLAB_HAVE_STDX_SIMD
using Vec = std::experimental::native_simd<float>;
inline constexpr auto kVecAligned = std::experimental::element_aligned;
#else
struct VecElementAligned {};
inline constexpr VecElementAligned kVecAligned{};
struct Vec {
  float x = 0;
  Vec() = default;
  Vec(float v) : x(v) {}  // broadcast, as simd's converting constructor
  template <class G, class = decltype(std::declval<G>()(std::integral_constant<std::size_t, 0>{}))>
  explicit Vec(G&& gen) : x(gen(std::integral_constant<std::size_t, 0>{})) {}
  static constexpr std::size_t size() { return 1; }
  void copy_from(const float* p, VecElementAligned) { x = *p; }
  void copy_to(float* p, VecElementAligned) const { *p = x; }
  Vec& operator+=(const Vec& o) {
    x += o.x;
    return *this;
  }
  friend Vec operator*(const Vec& a, const Vec& b) { return Vec(a.x * b.x); }
};
#endif

// Floats per Vec.
inline constexpr int kVecWidth = static_cast<int>(Vec::size());

}  // namespace gemmlab::cpu
