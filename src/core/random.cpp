#include "core/random.hpp"

#include <chrono>
#include <cstdint>

namespace gemmlab {
namespace {

// SplitMix64 (Steele, Lea, Flood 2014): a counter-based generator, so any element can be
// drawn independently and large matrices fill fast.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

template <class T>
void fill(std::span<T> out, std::uint64_t seed, std::uint64_t stream, Distribution distribution,
          std::uint64_t first = 0) {
  const std::uint64_t key = mix(seed ^ mix(stream + 0x5851F42D4C957F2Dull));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::uint64_t bits = mix(key + first + i);
    if (distribution == Distribution::Integer) {
      out[i] = static_cast<T>(static_cast<int>(bits % 9) - 4);
    } else {
      // 53 (or 24) random mantissa bits mapped to [-1, 1).
      const double unit = static_cast<double>(bits >> 11) * 0x1p-53;
      out[i] = static_cast<T>(2.0 * unit - 1.0);
    }
  }
}

}  // namespace

void fill_random(std::span<float> out, std::uint64_t seed, std::uint64_t stream,
                 Distribution distribution) {
  fill(out, seed, stream, distribution);
}
void fill_random(std::span<double> out, std::uint64_t seed, std::uint64_t stream,
                 Distribution distribution) {
  fill(out, seed, stream, distribution);
}

void fill_random_at(std::span<float> out, std::uint64_t seed, std::uint64_t stream, std::uint64_t first,
                    Distribution distribution) {
  fill(out, seed, stream, distribution, first);
}

std::uint64_t fresh_seed() {
  static int anchor = 0;
  const auto now = static_cast<std::uint64_t>(
      std::chrono::high_resolution_clock::now().time_since_epoch().count());
  return mix(now ^ reinterpret_cast<std::uintptr_t>(&anchor)) % 1000000007ull;
}

}  // namespace gemmlab
