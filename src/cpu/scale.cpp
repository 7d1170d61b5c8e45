// C <- beta * C on the host: the answer when k = 0 or alpha = 0 (A and B are not read).
#include "cpu/scale.hpp"

#include <cstdint>

#include "core/element.hpp"

namespace gemmlab::cpu {
namespace {

// C stored as T (float, or the bits of a 2-byte type that `to_bits` rounds to); beta * C in
// float, rounded once. beta = 0 writes zeros, never reads (NaN stays out).
template <class T, class Load, class Store>
void scale(const GemmProblem& p, Load load, Store store) {
  auto* c = static_cast<T*>(p.c.data);
  const auto beta = static_cast<float>(p.beta);
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      T& x = c[p.c.offset(i, j)];
      x = store(p.beta == 0.0 ? 0.0f : beta * load(x));
    }
}

}  // namespace

Status scale_c(const GemmProblem& p) {
  switch (p.c.dtype) {
    case DType::F32:
      scale<float>(p, [](float x) { return x; }, [](float x) { return x; });
      return Status::ok();
    case DType::BF16:
      scale<std::uint16_t>(
          p, [](std::uint16_t x) { return static_cast<float>(bf16_bits_to_double(x)); },
          [](float x) { return float_to_bf16_bits(x); });
      return Status::ok();
    case DType::F16:
      scale<_Float16>(p, [](_Float16 x) { return static_cast<float>(x); }, [](float x) { return static_cast<_Float16>(x); });
      return Status::ok();
    default: return {StatusCode::NotSupported, "cpu backend: C must hold f32, bf16 or f16"};
  }
}

}  // namespace gemmlab::cpu
