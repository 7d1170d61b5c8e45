#include "library/workspace.hpp"

#include <algorithm>
#include <limits>

namespace gemmlab {
namespace {

// Saturating: a bound that overflows is "more than anything fits".
std::uint64_t add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  return __builtin_add_overflow(a, b, &out) ? std::numeric_limits<std::uint64_t>::max() : out;
}
std::uint64_t mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? std::numeric_limits<std::uint64_t>::max() : out;
}
std::uint64_t u64(std::int64_t x) { return x > 0 ? static_cast<std::uint64_t>(x) : 0; }

}  // namespace

std::uint64_t workspace_bound(const Variant& v, std::int64_t m, std::int64_t n, std::int64_t k) {
  if (v.backend != Backend::Cuda || v.anchor) return 0;
  if (v.name == "pitched") {
    // run() copies A (m lines of k) and B (k lines of n) into rows rounded up to the pitch
    // alignment (at most 512 bytes on the GPUs gemmlab runs on).
    constexpr std::uint64_t kPitchAlignment = 512;
    const std::uint64_t element = storage_bytes(v.input);
    const auto pitched = [&](std::int64_t lines, std::int64_t extent) {
      const std::uint64_t line = mul(u64(extent), element);
      return mul(u64(std::max<std::int64_t>(lines, 1)),
                 std::max<std::uint64_t>(add(line, kPitchAlignment - 1) / kPitchAlignment, 1) * kPitchAlignment);
    };
    return add(pitched(m, k), pitched(k, n));
  }
  if (!v.prepare) return 0;
  constexpr std::uint64_t kTilePadding = 64;
  const bool split = v.tensor_cores && v.input == DType::F32 && v.compute == DType::F32;
  const std::uint64_t padded_k = add(u64(k), kTilePadding);
  const std::uint64_t elements = mul(add(add(u64(m), kTilePadding), add(u64(n), kTilePadding)), padded_k);
  const std::uint64_t copies = mul(mul(elements, sizeof(float)), split ? 2 : 1);
  // A rung that counts its own workspace counts, for an empty problem, what every problem of
  // it may hold beyond the copies (the Hopper rungs' stream-K partials).
  return v.workspace_bytes ? add(copies, v.workspace_bytes(GemmProblem{})) : copies;
}

std::uint64_t workspace_bound(const Variant& v, const GemmProblem& p) {
  if (v.backend == Backend::Cuda && !v.anchor && v.prepare && v.workspace_bytes) return v.workspace_bytes(p);
  return workspace_bound(v, p.m, p.n, p.k);
}

}  // namespace gemmlab
