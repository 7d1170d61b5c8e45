#include "core/verify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/element.hpp"

namespace gemmlab {

double gamma_bound(double n, double u) {
  const double nu = n * u;
  return nu < 1.0 ? nu / (1.0 - nu) : std::numeric_limits<double>::infinity();
}

double Tolerance::bound(std::int64_t k, double magnitude, double reference) const {
  // Subnormal results lose relative accuracy: allow one smallest-normal per operation.
  const double underflow_floor = static_cast<double>(k + 2) * std::numeric_limits<float>::min();
  const double operands = gamma_bound(2.0, input_u);
  const double sums = gamma_bound(terms_per_k * static_cast<double>(k) + 2.0, accumulate_u);
  return (operands + sums + operands * sums) * magnitude + output_u * std::fabs(reference) + underflow_floor;
}

Tolerance tolerance_for(DType input, DType compute, DType output) {
  const bool tensor_cores = compute == DType::TF32 || input == DType::BF16 || input == DType::F16;
  // Truncation (round toward zero) errs by up to one ulp, twice the unit roundoff.
  const double directed = tensor_cores ? 2.0 : 1.0;
  // Every rung sums in float32 (SIMT and tensor cores alike) or, for a float64 reference
  // check, in float64; tf32, bf16 and f16 are formats of operands, not of sums.
  const DType accumulate = compute == DType::F64 ? DType::F64 : DType::F32;
  // Operands narrower in the compute type than in storage are reduced on the way in.
  const double input_u =
      unit_roundoff(compute) > unit_roundoff(input) ? directed * unit_roundoff(compute) : 0.0;
  return {input_u, directed * unit_roundoff(accumulate), unit_roundoff(output)};
}

std::string Verification::summary() const {
  if (passed) return fmt::format("ok (rel. Frobenius error {:.2e})", rel_frobenius);
  std::string text = fmt::format("FAILED: {} of {} elements over the bound", failures, checked);
  if (unwritten) text += fmt::format(", {} unwritten", unwritten);
  if (padding_clobbered) text += fmt::format(", {} written outside the matrix", padding_clobbered);
  if (worst_row >= 0)
    text += fmt::format("; worst C({}, {}) = {:.9g}, reference {:.9g}, bound {:.3g}", worst_row,
                        worst_col, worst_value, worst_reference, worst_bound);
  return text;
}

Verification verify(const GemmProblem& p, std::span<const float> result,
                    std::span<const float> buffer_before, const ReferenceResult& ref,
                    bool poisoned, const std::optional<Tolerance>& tolerance) {
  Verification v;
  const Tolerance tol = tolerance ? *tolerance : tolerance_for(p.a.dtype, p.compute, p.c.dtype);
  const std::int64_t span = p.c.span_elements();
  if (static_cast<std::int64_t>(result.size()) < span ||
      static_cast<std::int64_t>(buffer_before.size()) < span || ref.m != p.m || ref.n != p.n) {
    v.failures = 1;
    v.worst_row = -1;
    return v;
  }
  double err_sq = 0, ref_sq = 0, worst_ratio = -1;
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      const double got = result[static_cast<std::size_t>(p.c.offset(i, j))];
      const double want = ref.value[static_cast<std::size_t>(i * p.n + j)];
      const double bound = tol.bound(p.k, ref.magnitude[static_cast<std::size_t>(i * p.n + j)], want);
      const double err = std::fabs(got - want);
      ++v.checked;
      const bool bad = !(err <= bound);  // NaN compares false: a NaN is always a failure
      if (bad) {
        ++v.failures;
        if (poisoned && std::isnan(got) && !std::isnan(want)) ++v.unwritten;
      }
      if (std::isfinite(err)) {
        err_sq += err * err;
        v.max_abs_error = std::max(v.max_abs_error, err);
      } else {
        err_sq = std::numeric_limits<double>::infinity();
      }
      ref_sq += want * want;
      const double ratio = std::isnan(err) ? std::numeric_limits<double>::infinity()
                                           : err / (bound > 0 ? bound : 1.0);
      if (ratio > worst_ratio) {
        worst_ratio = ratio;
        v.worst_row = i;
        v.worst_col = j;
        v.worst_value = got;
        v.worst_reference = want;
        v.worst_bound = bound;
      }
    }
  // Between the contiguous extent and ld lies memory that is not C: it must be untouched
  // (bitwise, since it may hold NaN). The last line's padding lies past the span of C, so
  // the limit is the buffers handed in, not the span.
  const std::int64_t extent = p.c.contiguous_extent();
  const auto buffer = static_cast<std::int64_t>(std::min(result.size(), buffer_before.size()));
  for (std::int64_t line = 0; line < p.c.lines(); ++line)
    for (std::int64_t e = extent; e < p.c.ld; ++e) {
      const std::int64_t off = line * p.c.ld + e;
      if (off >= buffer) break;
      if (std::memcmp(&result[static_cast<std::size_t>(off)],
                      &buffer_before[static_cast<std::size_t>(off)], sizeof(float)) != 0)
        ++v.padding_clobbered;
    }
  v.rel_frobenius = ref_sq > 0 ? std::sqrt(err_sq / ref_sq) : std::sqrt(err_sq);
  v.passed = v.failures == 0 && v.padding_clobbered == 0;
  return v;
}

}  // namespace gemmlab
