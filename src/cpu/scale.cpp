// C <- beta * C on the host: the answer when k = 0 or alpha = 0 (A and B are not read).
#include "cpu/scale.hpp"

namespace gemmlab::cpu {

Status scale_c(const GemmProblem& p) {
  if (p.c.dtype != DType::F32)
    return {StatusCode::NotSupported, "cpu backend: C must hold f32"};
  auto* c = static_cast<float*>(p.c.data);
  const auto beta = static_cast<float>(p.beta);
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      float& x = c[p.c.offset(i, j)];
      x = p.beta == 0.0 ? 0.0f : beta * x;  // beta = 0 writes zeros, never reads (NaN stays out)
    }
  return Status::ok();
}

}  // namespace gemmlab::cpu
