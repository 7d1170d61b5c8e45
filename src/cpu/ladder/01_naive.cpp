// Rung 1 (cpu): the textbook ijk triple loop, one dot product per element of C.
// op(B) is walked down a column in the innermost loop: a cache miss per element once a
// row of B no longer fits (seed 002: CM(K) = n for row-major B).
#include <fmt/format.h>

#include "core/traffic.hpp"
#include "cpu/ladder/rungs.hpp"

namespace gemmlab::cpu {
namespace {

Status run_naive(const GemmProblem& problem, RunContext&) {
  const RowMajorGemm g = canonicalize(problem);
  const auto* a = static_cast<const float*>(g.a);
  const auto* b = static_cast<const float*>(g.b);
  auto* c = static_cast<float*>(g.c);
  const auto alpha = static_cast<float>(g.alpha), beta = static_cast<float>(g.beta);
  for (std::int64_t i = 0; i < g.m; ++i)
    for (std::int64_t j = 0; j < g.n; ++j) {
      float sum = 0.0f;
      for (std::int64_t p = 0; p < g.k; ++p) {
        const float x = g.trans_a ? a[p * g.lda + i] : a[i * g.lda + p];
        const float y = g.trans_b ? b[j * g.ldb + p] : b[p * g.ldb + j];
        sum += x * y;
      }
      float& out = c[i * g.ldc + j];
      out = g.beta == 0.0 ? alpha * sum : alpha * sum + beta * out;
    }
  return Status::ok();
}

}  // namespace

Variant naive_variant() {
  Variant v;
  v.rung = 1;
  v.name = "naive";
  v.backend = Backend::Cpu;
  v.technique = "ijk triple loop, one float32 dot product per element of C";
  v.threads = 1;
  v.can_implement = [](const GemmProblem& p) { return require_f32_host(p, "naive"); };
  v.run = run_naive;
  v.model = [](const GemmProblem& p) {
    // Seed 002's view, as for every CPU rung: the cache lines the innermost loop touches
    // (CM(K) = k + k/16 + 1 for row-major NN), times the m * n iterations around it.
    Traffic t = minimum_traffic(p);
    const RowMajorGemm g = canonicalize(p);
    const double lines = choose_loop_order(g).cost[2] * static_cast<double>(g.m) * static_cast<double>(g.n);
    t.global_load_bytes = lines * 64.0;
    t.cgma = t.flops / (t.global_load_bytes / 4.0);
    return t;
  };
  return v;
}

Status require_f32_host(const GemmProblem& p, std::string_view rung) {
  if (p.a.dtype != DType::F32 || p.c.dtype != DType::F32)
    return {StatusCode::NotSupported,
            fmt::format("cpu rung {} takes f32 A, B and C (got {} and {})", rung,
                        to_string(p.a.dtype), to_string(p.c.dtype))};
  if (p.compute != DType::F32)
    return {StatusCode::NotSupported,
            fmt::format("cpu rung {} computes in f32, not {}", rung, to_string(p.compute))};
  return Status::ok();
}

}  // namespace gemmlab::cpu
