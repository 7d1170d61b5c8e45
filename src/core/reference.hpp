// The float64 reference GEMM on the host.
#pragma once

#include <vector>

#include "gemmlab/problem.hpp"

namespace gemmlab {

// What the reference computes, for a problem whose data is in host memory:
//   value(i, j)     = alpha * sum_p op(A)(i,p) op(B)(p,j) + beta * C0(i,j)   (in float64)
//   magnitude(i, j) = |alpha| * sum_p |op(A)(i,p)| |op(B)(p,j)| + |beta| * |C0(i,j)|
// both m x n row-major. The magnitude scales the error bound of every element.
// With beta = 0, C0 is not read. Blocked and threaded over all cores.
struct ReferenceResult {
  std::int64_t m = 0, n = 0;
  std::vector<double> value;
  std::vector<double> magnitude;
};

Status reference_gemm(const GemmProblem& problem, ReferenceResult& out);

// The last step of both: value <- alpha * value + beta * C0 and the same for the
// magnitude (beta = 0 does not read C0), for a result holding the bare sums.
void apply_alpha_beta(const GemmProblem& problem, ReferenceResult& out);

// The textbook triple loop in float64, for testing the reference itself.
Status reference_gemm_naive(const GemmProblem& problem, ReferenceResult& out);

}  // namespace gemmlab
