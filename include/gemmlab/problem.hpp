// The GEMM problem: C <- alpha * op(A) * op(B) + beta * C, with cuBLAS's semantics.
#pragma once

#include <cstdint>
#include <string>

#include "gemmlab/matrix.hpp"
#include "gemmlab/status.hpp"
#include "gemmlab/types.hpp"

namespace gemmlab {

struct GemmProblem {
  std::int64_t m = 0, n = 0, k = 0;
  Op op_a = Op::N;  // A is stored m x k for N, k x m for T
  Op op_b = Op::N;  // B is stored k x n for N, n x k for T
  double alpha = 1.0;
  double beta = 0.0;
  Matrix a, b, c;   // c is m x n
  DType compute = DType::F32;  // arithmetic the variant is asked to use

  // "1000x513x77 NT row" for people and logs.
  std::string describe() const;
};

// Checks every argument (cuBLAS semantics); the message names the bad one:
// negative m/n/k; a view whose shape disagrees with m, n, k and op; ld below the
// contiguous extent; null data for a non-empty matrix; offsets that overflow 64 bits.
Status validate(const GemmProblem& problem);

// True when the answer is C <- beta * C without touching A or B (k = 0 or alpha = 0).
inline bool is_scale_only(const GemmProblem& p) { return p.k == 0 || p.alpha == 0.0; }

// Any problem rewritten as one on row-major storage, which is all a kernel needs
// to handle: C row-major m x n; op(A)(i, p) = trans_a ? a[p * lda + i] : a[i * lda + p];
// op(B)(p, j) = trans_b ? b[j * ldb + p] : b[p * ldb + j].
// A column-major operand is the row-major storage of its transpose, and a
// column-major C is computed as C^T = op(B)^T op(A)^T.
struct RowMajorGemm {
  std::int64_t m, n, k;
  bool trans_a, trans_b;
  const void* a;
  std::int64_t lda;
  const void* b;
  std::int64_t ldb;
  void* c;
  std::int64_t ldc;
  double alpha, beta;
};
RowMajorGemm canonicalize(const GemmProblem& problem);

}  // namespace gemmlab
