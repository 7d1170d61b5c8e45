// Verification against the float64 reference, with a tolerance from error analysis.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/reference.hpp"
#include "gemmlab/problem.hpp"

namespace gemmlab {

// gamma(n, u) = n u / (1 - n u): the classic bound on the relative error of an
// n-term dot product in arithmetic with unit roundoff u (Higham, Accuracy and Stability, 3.1).
double gamma_bound(double n, double u);

struct Tolerance {
  double compute_u;  // unit roundoff of the products and sums (fp32, tf32, bf16 ...)
  double output_u;   // unit roundoff of the stored result
  // |C - C_ref| <= gamma(k + 2, compute_u) * magnitude + output_u * |C_ref| + floor
  // (k products and sums, then alpha and beta scaling: two more roundings).
  double bound(std::int64_t k, double magnitude, double reference) const;
};

Tolerance tolerance_for(DType compute, DType output);

struct Verification {
  bool passed = false;
  std::int64_t checked = 0;
  std::int64_t failures = 0;         // elements over their bound (NaN counts)
  std::int64_t unwritten = 0;        // elements still holding the poison or out of range writes
  std::int64_t padding_clobbered = 0;// elements between cols and ld that were changed
  double rel_frobenius = 0;          // ||C - C_ref||_F / ||C_ref||_F
  double max_abs_error = 0;
  // The worst element: the largest error relative to its own bound.
  std::int64_t worst_row = -1, worst_col = -1;
  double worst_value = 0, worst_reference = 0, worst_bound = 0;
  std::string summary() const;
};

// Compares `result` (the problem's C as the variant left it, copied to the host) with the
// reference. `buffer_before` is C's buffer before the run: the elements between the
// contiguous extent and ld must be unchanged. `poisoned` says C held NaN before the run
// (beta = 0), so any NaN left is an unwritten element.
Verification verify(const GemmProblem& problem, std::span<const float> result,
                    std::span<const float> buffer_before, const ReferenceResult& reference,
                    bool poisoned);

}  // namespace gemmlab
