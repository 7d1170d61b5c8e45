#include <fmt/format.h>

#include <utility>

#include "gemmlab/problem.hpp"

namespace gemmlab {

std::string GemmProblem::describe() const {
  std::string text = fmt::format("{}x{}x{} {}{} {} alpha={} beta={}", m, n, k, to_string(op_a), to_string(op_b),
                                 to_string(c.layout), alpha, beta);
  if (scale_a != 1.0 || scale_b != 1.0) text += fmt::format(" scale_a={} scale_b={}", scale_a, scale_b);
  return text;
}

RowMajorGemm canonicalize(const GemmProblem& p) {
  // A row-major X read through op T, or a column-major X read through op N, is the
  // row-major storage of op(X)^T: the kernel reads it transposed.
  const bool a_trans = (p.op_a == Op::T) != (p.a.layout == Layout::ColMajor);
  const bool b_trans = (p.op_b == Op::T) != (p.b.layout == Layout::ColMajor);
  // The scales are one factor of the product whichever operand carries them.
  const double alpha = effective_alpha(p);
  RowMajorGemm g{p.m,     p.n,      p.k,   a_trans, b_trans, p.a.data, p.a.ld,
                 p.b.data, p.b.ld, p.c.data, p.c.ld, alpha, p.beta};
  if (p.c.layout == Layout::ColMajor) {
    // A column-major C is the row-major C^T = op(B)^T op(A)^T: swap the operands, swap m
    // and n, and flip both transposition flags.
    g = RowMajorGemm{p.n,      p.m,    p.k,      !b_trans, !a_trans, p.b.data, p.b.ld,
                     p.a.data, p.a.ld, p.c.data, p.c.ld,   alpha,    p.beta};
  }
  return g;
}

}  // namespace gemmlab
