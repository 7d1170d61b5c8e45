#include "core/verify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

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
  double sums = 0;
  if (promote_every > 0) {
    // Partial sums of promote_every K-terms, promoted into float32 (tolerance.hpp).
    const auto partial_sums = static_cast<double>((k + promote_every - 1) / promote_every);
    const double partial = gamma_bound(static_cast<double>(std::min(k, promote_every)) * terms_per_k, partial_u);
    const double promoted = gamma_bound(partial_sums + 2.0, accumulate_u);
    sums = partial + promoted + partial * promoted;
  } else {
    sums = gamma_bound(terms_per_k * static_cast<double>(k) + 2.0, accumulate_u);
  }
  const double computed = (operands + sums + operands * sums) * magnitude;
  const double stored = output_u * std::max(std::fabs(reference) + computed, output_min_normal);
  return computed + stored + underflow_floor;
}

Tolerance tolerance_for(DType input, DType compute, DType output) {
  const bool tensor_cores = compute == DType::TF32 || input == DType::BF16 || input == DType::F16 || is_fp8(input);
  // Truncation (round toward zero) errs by up to one ulp, twice the unit roundoff.
  const double directed = tensor_cores ? 2.0 : 1.0;
  // Every rung sums in float32 (SIMT and tensor cores alike) or, for a float64 reference
  // check, in float64; tf32, bf16 and f16 are formats of operands, not of sums.
  const DType accumulate = compute == DType::F64 ? DType::F64 : DType::F32;
  // Operands narrower in the compute type than in storage are reduced on the way in.
  const double input_u =
      unit_roundoff(compute) > unit_roundoff(input) ? directed * unit_roundoff(compute) : 0.0;
  Tolerance t{input_u, directed * unit_roundoff(accumulate), unit_roundoff(output)};
  if (output == DType::F16) t.output_min_normal = 0x1p-14;
  if (is_fp8(input)) {
    // The kernels promote their partial sums as verify.hpp says; the tensor core's own adder
    // keeps about 14 bits.
    t.promote_every = kFp8PromoteEvery;
    t.partial_u = kFp8PartialU;
  }
  return t;
}

std::string Verification::summary() const {
  const char* what = sampled ? "sampled elements" : "elements";
  if (passed) {
    if (sampled) return fmt::format("ok at {} sampled elements (rel. Frobenius error {:.2e})", checked, rel_frobenius);
    return fmt::format("ok (rel. Frobenius error {:.2e})", rel_frobenius);
  }
  std::string text = fmt::format("FAILED: {} of {} {} over the bound", failures, checked, what);
  if (unwritten) text += fmt::format(", {} unwritten", unwritten);
  if (padding_clobbered) text += fmt::format(", {} written outside the matrix", padding_clobbered);
  if (worst_row >= 0)
    text += fmt::format("; worst C({}, {}) = {:.9g}, reference {:.9g}, bound {:.3g}", worst_row,
                        worst_col, worst_value, worst_reference, worst_bound);
  return text;
}

namespace {

// Compares elements one at a time against their bounds and keeps the totals.
class ElementCheck {
 public:
  ElementCheck(const GemmProblem& p, const std::optional<Tolerance>& tolerance, bool poisoned, Verification& v)
      : k_(p.k), tol_(tolerance ? *tolerance : tolerance_for(p.a.dtype, p.compute, p.c.dtype)), poisoned_(poisoned),
        v_(v) {}

  void operator()(std::int64_t i, std::int64_t j, double got, double want, double magnitude) {
    const double bound = tol_.bound(k_, magnitude, want);
    const double err = std::fabs(got - want);
    ++v_.checked;
    const bool bad = !(err <= bound);  // NaN compares false: a NaN is always a failure
    if (bad) {
      ++v_.failures;
      if (poisoned_ && std::isnan(got) && !std::isnan(want)) ++unwritten_;
    }
    if (std::isfinite(err)) {
      err_sq_ += err * err;
      v_.max_abs_error = std::max(v_.max_abs_error, err);
    } else {
      err_sq_ = std::numeric_limits<double>::infinity();
    }
    ref_sq_ += want * want;
    const double ratio = std::isnan(err) ? std::numeric_limits<double>::infinity() : err / (bound > 0 ? bound : 1.0);
    if (ratio > worst_ratio_) {
      worst_ratio_ = ratio;
      v_.worst_row = i;
      v_.worst_col = j;
      v_.worst_value = got;
      v_.worst_reference = want;
      v_.worst_bound = bound;
    }
  }
  // Poisoned elements among those compared.
  std::int64_t unwritten() const { return unwritten_; }
  double rel_frobenius() const { return ref_sq_ > 0 ? std::sqrt(err_sq_ / ref_sq_) : std::sqrt(err_sq_); }

 private:
  std::int64_t k_;
  Tolerance tol_;
  bool poisoned_;
  Verification& v_;
  std::int64_t unwritten_ = 0;
  double err_sq_ = 0, ref_sq_ = 0, worst_ratio_ = -1;
};

// Whether the buffers hold C and the reference is of the size `m` x `n`; if not, `v` says
// it failed.
bool shapes_agree(const GemmProblem& p, std::span<const float> result, std::span<const float> before,
                  const ReferenceResult& ref, std::int64_t m, std::int64_t n, Verification& v) {
  const std::int64_t span = p.c.span_elements();
  if (static_cast<std::int64_t>(result.size()) >= span && static_cast<std::int64_t>(before.size()) >= span &&
      ref.m == m && ref.n == n && static_cast<std::int64_t>(ref.value.size()) == m * n &&
      static_cast<std::int64_t>(ref.magnitude.size()) == m * n)
    return true;
  v.failures = 1;
  v.worst_row = -1;
  return false;
}

// Between the contiguous extent and ld lies memory that is not C: it must be untouched
// (bitwise, since it may hold NaN). The last line's padding lies past the span of C, so
// the limit is the buffers handed in, not the span.
std::int64_t padding_clobbered(const GemmProblem& p, std::span<const float> result, std::span<const float> before) {
  std::int64_t clobbered = 0;
  const std::int64_t extent = p.c.contiguous_extent();
  const auto buffer = static_cast<std::int64_t>(std::min(result.size(), before.size()));
  for (std::int64_t line = 0; line < p.c.lines(); ++line)
    for (std::int64_t e = extent; e < p.c.ld; ++e) {
      const std::int64_t off = line * p.c.ld + e;
      if (off >= buffer) break;
      if (std::memcmp(&result[static_cast<std::size_t>(off)], &before[static_cast<std::size_t>(off)],
                      sizeof(float)) != 0)
        ++clobbered;
    }
  return clobbered;
}

}  // namespace

Verification verify(const GemmProblem& p, std::span<const float> result,
                    std::span<const float> buffer_before, const ReferenceResult& ref,
                    bool poisoned, const std::optional<Tolerance>& tolerance) {
  Verification v;
  if (!shapes_agree(p, result, buffer_before, ref, p.m, p.n, v)) return v;
  ElementCheck check(p, tolerance, poisoned, v);
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      const auto idx = static_cast<std::size_t>(i * p.n + j);
      check(i, j, result[static_cast<std::size_t>(p.c.offset(i, j))], ref.value[idx], ref.magnitude[idx]);
    }
  v.unwritten = check.unwritten();
  v.padding_clobbered = padding_clobbered(p, result, buffer_before);
  v.rel_frobenius = check.rel_frobenius();
  v.passed = v.failures == 0 && v.padding_clobbered == 0;
  return v;
}

Verification verify_sampled(const GemmProblem& p, std::span<const float> result,
                            std::span<const float> buffer_before, const SamplePositions& positions,
                            const ReferenceResult& ref, bool poisoned, const std::optional<Tolerance>& tolerance) {
  Verification v;
  v.sampled = true;
  const auto rows = static_cast<std::int64_t>(positions.rows.size());
  const auto cols = static_cast<std::int64_t>(positions.cols.size());
  const auto inside = [](const std::vector<std::int64_t>& lines, std::int64_t extent) {
    return std::all_of(lines.begin(), lines.end(), [extent](std::int64_t x) { return x >= 0 && x < extent; });
  };
  if (!inside(positions.rows, p.m) || !inside(positions.cols, p.n)) {
    v.failures = 1;  // positions outside C: nothing was checked
    return v;
  }
  if (!shapes_agree(p, result, buffer_before, ref, rows, cols, v)) return v;
  ElementCheck check(p, tolerance, poisoned, v);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      const std::int64_t i = positions.rows[static_cast<std::size_t>(r)];
      const std::int64_t j = positions.cols[static_cast<std::size_t>(c)];
      const auto idx = static_cast<std::size_t>(r * cols + c);
      check(i, j, result[static_cast<std::size_t>(p.c.offset(i, j))], ref.value[idx], ref.magnitude[idx]);
    }
  // The poison needs no reference: every element of C is looked at (m x n reads, against
  // the m x n x k of a reference), so an element no rung wrote is found wherever it is.
  if (poisoned)
    for (std::int64_t i = 0; i < p.m; ++i)
      for (std::int64_t j = 0; j < p.n; ++j)
        if (std::isnan(result[static_cast<std::size_t>(p.c.offset(i, j))])) ++v.unwritten;
  v.padding_clobbered = padding_clobbered(p, result, buffer_before);
  v.rel_frobenius = check.rel_frobenius();
  v.passed = v.failures == 0 && v.unwritten == 0 && v.padding_clobbered == 0;
  return v;
}

}  // namespace gemmlab
