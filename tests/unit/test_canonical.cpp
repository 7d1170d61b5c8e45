// canonicalize(): every problem rewritten as a row-major one. Checked field by field where
// the mapping is documented, and by evaluating the rewritten problem exactly as a kernel
// would (the formulas in problem.hpp) for every layout of A, B and C and every op.
#include <gtest/gtest.h>

#include <cstdint>

#include "core/reference.hpp"
#include "gemmlab/problem.hpp"
#include "support/assertions.hpp"
#include "support/host_problem.hpp"
#include "support/seeds.hpp"

namespace gemmlab {
namespace {

using testing::HostProblem;
using testing::kLayouts;
using testing::kOps;
using testing::make_host_problem;
using testing::ProblemSpec;

// What a kernel does with a RowMajorGemm, in float64 (exact for integer inputs).
void evaluate(const RowMajorGemm& g) {
  const auto* a = static_cast<const float*>(g.a);
  const auto* b = static_cast<const float*>(g.b);
  auto* c = static_cast<float*>(g.c);
  for (std::int64_t i = 0; i < g.m; ++i)
    for (std::int64_t j = 0; j < g.n; ++j) {
      double sum = 0;
      for (std::int64_t p = 0; p < g.k; ++p)
        sum += static_cast<double>(g.trans_a ? a[p * g.lda + i] : a[i * g.lda + p]) *
               static_cast<double>(g.trans_b ? b[j * g.ldb + p] : b[p * g.ldb + j]);
      float& out = c[i * g.ldc + j];
      out = static_cast<float>(g.alpha * sum + (g.beta == 0.0 ? 0.0 : g.beta * out));
    }
}

TEST(Canonicalize, RowMajorProblemKeepsItsOperands) {
  testing::Seeds seeds;
  const HostProblem hp = make_host_problem({.m = 5, .n = 7, .k = 3, .op_b = Op::T, .ld_padding = 2,
                                            .alpha = 0.5, .beta = 2.0, .seed = seeds.next()});
  const RowMajorGemm g = canonicalize(hp.problem);
  EXPECT_EQ(g.m, 5);
  EXPECT_EQ(g.n, 7);
  EXPECT_EQ(g.k, 3);
  EXPECT_FALSE(g.trans_a);
  EXPECT_TRUE(g.trans_b);
  EXPECT_EQ(g.a, hp.problem.a.data);
  EXPECT_EQ(g.lda, hp.problem.a.ld);
  EXPECT_EQ(g.b, hp.problem.b.data);
  EXPECT_EQ(g.ldb, hp.problem.b.ld);
  EXPECT_EQ(g.c, hp.problem.c.data);
  EXPECT_EQ(g.ldc, hp.problem.c.ld);
  EXPECT_EQ(g.alpha, 0.5);
  EXPECT_EQ(g.beta, 2.0);
}

// A column-major operand is the row-major storage of its transpose.
TEST(Canonicalize, ColumnMajorOperandIsReadTransposed) {
  testing::Seeds seeds;
  for (const Op op : kOps) {
    const HostProblem hp = make_host_problem({.m = 5, .n = 7, .k = 3, .op_a = op, .op_b = op,
                                              .layout_a = Layout::ColMajor, .seed = seeds.next()});
    const RowMajorGemm g = canonicalize(hp.problem);
    EXPECT_EQ(g.trans_a, op == Op::N) << to_string(op);  // col-major A read through N: transposed
    EXPECT_EQ(g.trans_b, op == Op::T) << to_string(op);  // row-major B: as the op says
    EXPECT_EQ(g.a, hp.problem.a.data);
  }
}

// FP8 scales are one factor of the product: folded into alpha, whichever way C is stored
// (the column-major branch swaps the operands, and their scales with them, into the same
// product). A zero scale leaves C <- beta C.
TEST(Canonicalize, FoldsTheScalesIntoAlpha) {
  testing::Seeds seeds;
  for (const Layout layout : kLayouts) {
    const HostProblem hp = make_host_problem({.m = 5, .n = 7, .k = 3, .layout = layout, .alpha = 1.5, .beta = 2.0,
                                              .seed = seeds.next()});
    GemmProblem p = hp.problem;
    p.scale_a = 0.25;
    p.scale_b = -3.0;
    EXPECT_EQ(effective_alpha(p), 1.5 * 0.25 * -3.0);
    const RowMajorGemm g = canonicalize(p);
    EXPECT_EQ(g.alpha, effective_alpha(p)) << to_string(layout);
    EXPECT_EQ(g.beta, 2.0);
    EXPECT_FALSE(is_scale_only(p));
    p.scale_b = 0.0;
    EXPECT_TRUE(is_scale_only(p)) << "a zero scale zeroes the product";
  }
}

// A column-major C is computed as the row-major C^T = op(B)^T op(A)^T.
TEST(Canonicalize, ColumnMajorCSwapsTheOperands) {
  testing::Seeds seeds;
  const HostProblem hp = make_host_problem({.m = 5, .n = 7, .k = 3, .op_a = Op::T,
                                            .layout = Layout::ColMajor, .ld_padding = 1,
                                            .alpha = -1.0, .beta = 3.0, .seed = seeds.next()});
  const RowMajorGemm g = canonicalize(hp.problem);
  EXPECT_EQ(g.m, 7);
  EXPECT_EQ(g.n, 5);
  EXPECT_EQ(g.k, 3);
  EXPECT_EQ(g.a, hp.problem.b.data);
  EXPECT_EQ(g.lda, hp.problem.b.ld);
  EXPECT_EQ(g.b, hp.problem.a.data);
  EXPECT_EQ(g.ldb, hp.problem.a.ld);
  EXPECT_EQ(g.c, hp.problem.c.data);
  EXPECT_EQ(g.ldc, hp.problem.c.ld);
  // The new A is op(B)^T: column-major k x n B is exactly its row-major storage (as is).
  // The new B is op(A)^T: column-major k x m A under T is the row-major storage of op(A),
  // so it is read transposed.
  EXPECT_FALSE(g.trans_a);
  EXPECT_TRUE(g.trans_b);
  EXPECT_EQ(g.alpha, -1.0);
  EXPECT_EQ(g.beta, 3.0);
}

TEST(Canonicalize, EvaluatesToTheReferenceForEveryLayoutAndOp) {
  testing::Seeds seeds;
  for (const Layout layout_a : kLayouts)
    for (const Layout layout_b : kLayouts)
      for (const Layout layout_c : kLayouts)
        for (const Op op_a : kOps)
          for (const Op op_b : kOps) {
            const ProblemSpec spec{.m = 6, .n = 9, .k = 4, .op_a = op_a, .op_b = op_b,
                                   .layout_a = layout_a, .layout_b = layout_b, .layout_c = layout_c,
                                   .ld_padding = 2, .alpha = 0.75, .beta = -1.5, .seed = seeds.next(),
                                   .distribution = Distribution::Integer};
            SCOPED_TRACE(spec.describe() + ", " + seeds.describe(spec.seed));
            HostProblem hp = make_host_problem(spec);
            ReferenceResult reference;
            ASSERT_TRUE(testing::host_reference(hp, reference).is_ok());
            evaluate(canonicalize(hp.problem));
            EXPECT_TRUE(testing::equals_reference(hp, hp.c.storage, reference));
            // The ld padding of C is not part of the rewritten problem either.
            for (std::size_t idx = 0; idx < hp.c.storage.size(); ++idx)
              if (hp.c.is_padding(idx)) {
                ASSERT_EQ(hp.c.storage[idx], hp.c_before[idx]) << idx;
              }
          }
}

}  // namespace
}  // namespace gemmlab
