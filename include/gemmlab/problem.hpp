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
  // The dequantisation scales of FP8 operands: op(A)'s value is scale_a times the stored
  // element, op(B)'s scale_b times its own (cuBLASLt's A and B scales). 1 for every other
  // type (validate() refuses anything else there).
  double scale_a = 1.0, scale_b = 1.0;

  // "1000x513x77 NT row alpha=1 beta=0" for people and logs (and the scales where not 1).
  std::string describe() const;
};

// What the sum of products is multiplied by: alpha times the operands' scales. Every rung
// that goes through canonicalize() and the float64 reference apply it, and nothing else.
inline double effective_alpha(const GemmProblem& p) { return p.alpha * p.scale_a * p.scale_b; }

// Checks every argument (cuBLAS semantics); the message names the bad one:
// negative m/n/k; a view whose shape disagrees with m, n, k and op; ld below the
// contiguous extent; null data for a non-empty matrix; offsets that overflow 64 bits;
// A and B of different types; C in an FP8 type; a scale that is not finite, or not 1 on an
// operand that is not FP8.
Status validate(const GemmProblem& problem);

// True when the answer is C <- beta * C without touching A or B (k = 0, or alpha or a scale 0).
inline bool is_scale_only(const GemmProblem& p) { return p.k == 0 || effective_alpha(p) == 0.0; }

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
  double alpha, beta;  // alpha: effective_alpha(), the FP8 scales folded in
};
RowMajorGemm canonicalize(const GemmProblem& problem);

}  // namespace gemmlab
