// The float64 reference (blocked, threaded) against the textbook triple loop, and both
// against a product worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "core/reference.hpp"
#include "core/verify.hpp"
#include "support/encoded.hpp"
#include "support/host_problem.hpp"
#include "support/seeds.hpp"

namespace gemmlab {
namespace {

using testing::Dims;
using testing::HostProblem;
using testing::kLayouts;
using testing::kOps;
using testing::make_host_problem;
using testing::ProblemSpec;

// Shapes that take the reference's other paths: across its k and n blocks (128 and 256),
// and past the 2^20 multiply-adds from which it splits rows of C across threads.
constexpr Dims kAcrossBlocks{37, 259, 131};
constexpr Dims kThreaded{131, 97, 89};
static_assert(kThreaded.m * kThreaded.n * kThreaded.k > (1 << 20), "must take the threaded path");

// alpha and beta are dyadic, so with integer inputs every result is exact in float64.
constexpr double kAlpha = 0.75;
constexpr double kBeta = -1.5;
constexpr std::int64_t kPadding = 3;

std::vector<Dims> reference_shapes() {
  std::vector<Dims> shapes(testing::kAwkwardDims.begin(), testing::kAwkwardDims.end());
  shapes.push_back(kAcrossBlocks);
  shapes.push_back(kThreaded);
  return shapes;
}

struct BothReferences {
  ReferenceResult blocked, naive;
};

BothReferences run_both(const HostProblem& hp) {
  BothReferences r;
  EXPECT_TRUE(reference_gemm(hp.problem, r.blocked).is_ok());
  EXPECT_TRUE(reference_gemm_naive(hp.problem, r.naive).is_ok());
  return r;
}

// Every (layout, op_a, op_b) over every shape, with ld padding on every other case.
template <class Check>
void for_each_case(Distribution distribution, double beta, bool nan_c, Check check) {
  testing::Seeds seeds;
  int index = 0;
  for (const Dims& d : reference_shapes())
    for (const Layout layout : kLayouts)
      for (const Op op_a : kOps)
        for (const Op op_b : kOps) {
          const ProblemSpec spec{.m = d.m, .n = d.n, .k = d.k, .op_a = op_a, .op_b = op_b,
                                 .layout = layout, .ld_padding = (index++ % 2) * kPadding,
                                 .alpha = kAlpha, .beta = beta, .seed = seeds.next(),
                                 .distribution = distribution, .nan_c = nan_c};
          SCOPED_TRACE(spec.describe() + ", " + seeds.describe(spec.seed));
          check(make_host_problem(spec));
        }
}

TEST(Reference, EqualsTripleLoopExactlyOnIntegerInputs) {
  for_each_case(Distribution::Integer, kBeta, /*nan_c=*/false, [](const HostProblem& hp) {
    const BothReferences r = run_both(hp);
    ASSERT_EQ(r.blocked.value.size(), static_cast<std::size_t>(hp.problem.m * hp.problem.n));
    ASSERT_EQ(r.naive.value.size(), r.blocked.value.size());
    for (std::size_t idx = 0; idx < r.naive.value.size(); ++idx) {
      // NaN sits in the padding of A and B: reading past a line would show here.
      ASSERT_TRUE(std::isfinite(r.blocked.value[idx])) << "element " << idx;
      ASSERT_EQ(r.blocked.value[idx], r.naive.value[idx]) << "element " << idx;
      ASSERT_EQ(r.blocked.magnitude[idx], r.naive.magnitude[idx]) << "element " << idx;
    }
  });
}

TEST(Reference, AgreesWithTripleLoopOnUniformInputs) {
  for_each_case(Distribution::Uniform, kBeta, /*nan_c=*/false, [](const HostProblem& hp) {
    const BothReferences r = run_both(hp);
    ASSERT_EQ(r.naive.value.size(), r.blocked.value.size());
    // Two float64 sums of the same k + 2 terms differ by at most twice gamma of each.
    const double bound = 2.0 * gamma_bound(static_cast<double>(hp.problem.k + 2), unit_roundoff(DType::F64));
    for (std::size_t idx = 0; idx < r.naive.value.size(); ++idx) {
      const double magnitude = r.naive.magnitude[idx];
      ASSERT_GT(magnitude, 0.0) << "element " << idx;
      ASSERT_LE(std::fabs(r.blocked.value[idx] - r.naive.value[idx]), bound * magnitude) << "element " << idx;
      ASSERT_LE(std::fabs(r.blocked.magnitude[idx] - magnitude), bound * magnitude) << "element " << idx;
    }
  });
}

TEST(Reference, BetaZeroNeverReadsC) {
  for_each_case(Distribution::Integer, /*beta=*/0.0, /*nan_c=*/true, [](const HostProblem& hp) {
    const BothReferences r = run_both(hp);
    for (std::size_t idx = 0; idx < r.naive.value.size(); ++idx) {
      ASSERT_TRUE(std::isfinite(r.blocked.value[idx])) << "NaN of C leaked into element " << idx;
      ASSERT_EQ(r.blocked.value[idx], r.naive.value[idx]) << "element " << idx;
    }
  });
}

// k = 0 (A and B null) and alpha = 0 (A and B NaN): value = beta * C0, magnitude |beta * C0|.
TEST(Reference, ScaleOnlyProblemsIgnoreAAndB) {
  testing::Seeds seeds;
  for (const Layout layout : kLayouts)
    for (const bool k_zero : {true, false}) {
      const ProblemSpec spec{.m = 9, .n = 14, .k = k_zero ? 0 : 6, .op_a = Op::T, .layout = layout,
                             .ld_padding = kPadding, .alpha = k_zero ? kAlpha : 0.0, .beta = kBeta,
                             .seed = seeds.next(), .nan_a = !k_zero, .nan_b = !k_zero,
                             .null_when_empty = true};
      SCOPED_TRACE(spec.describe() + ", " + seeds.describe(spec.seed));
      const HostProblem hp = make_host_problem(spec);
      if (k_zero) {
        ASSERT_EQ(hp.problem.a.data, nullptr);
        ASSERT_EQ(hp.problem.b.data, nullptr);
      }
      const BothReferences r = run_both(hp);
      for (std::int64_t i = 0; i < spec.m; ++i)
        for (std::int64_t j = 0; j < spec.n; ++j) {
          const double c0 = hp.c.at(i, j);
          const auto idx = static_cast<std::size_t>(i * spec.n + j);
          EXPECT_EQ(r.blocked.value[idx], kBeta * c0) << "C(" << i << ", " << j << ")";
          EXPECT_EQ(r.naive.value[idx], kBeta * c0) << "C(" << i << ", " << j << ")";
          EXPECT_EQ(r.blocked.magnitude[idx], std::fabs(kBeta * c0)) << "C(" << i << ", " << j << ")";
        }
    }
}

// A product small enough to check by hand, stored every way the problem allows.
TEST(Reference, MatchesAProductWorkedOutByHand) {
  constexpr std::int64_t kM = 2, kN = 3, kK = 2;
  const double a[kM][kK] = {{1, 2}, {3, 4}};
  const double b[kK][kN] = {{5, 6, 7}, {8, 9, 10}};
  const double c0[kM][kN] = {{1, -2, 3}, {-4, 5, -6}};
  // A B = {{21, 24, 27}, {47, 54, 61}}; 2 A B - C0:
  const double expected[kM][kN] = {{41, 50, 51}, {98, 103, 128}};
  constexpr double kHandAlpha = 2.0, kHandBeta = -1.0;
  testing::Seeds seeds;  // the padding stays random
  for (const Layout layout : kLayouts)
    for (const Op op_a : kOps)
      for (const Op op_b : kOps) {
        HostProblem hp = make_host_problem({.m = kM, .n = kN, .k = kK, .op_a = op_a, .op_b = op_b,
                                            .layout = layout, .ld_padding = 1, .alpha = kHandAlpha,
                                            .beta = kHandBeta, .seed = seeds.next()});
        SCOPED_TRACE(hp.spec.describe());
        for (std::int64_t i = 0; i < kM; ++i)
          for (std::int64_t p = 0; p < kK; ++p)
            (op_a == Op::T ? hp.a.at(p, i) : hp.a.at(i, p)) = static_cast<float>(a[i][p]);
        for (std::int64_t p = 0; p < kK; ++p)
          for (std::int64_t j = 0; j < kN; ++j)
            (op_b == Op::T ? hp.b.at(j, p) : hp.b.at(p, j)) = static_cast<float>(b[p][j]);
        for (std::int64_t i = 0; i < kM; ++i)
          for (std::int64_t j = 0; j < kN; ++j) hp.c.at(i, j) = static_cast<float>(c0[i][j]);
        const BothReferences r = run_both(hp);
        for (std::int64_t i = 0; i < kM; ++i)
          for (std::int64_t j = 0; j < kN; ++j) {
            EXPECT_EQ(r.blocked.value[static_cast<std::size_t>(i * kN + j)], expected[i][j]);
            EXPECT_EQ(r.naive.value[static_cast<std::size_t>(i * kN + j)], expected[i][j]);
          }
      }
}

// FP8 operands: the sums are of the stored elements and their scales multiply them with
// alpha, so value and magnitude are those of the dequantised operands (scale times stored).
TEST(Reference, AppliesTheFp8ScalesWithAlpha) {
  testing::Seeds seeds;
  for (const DType type : {DType::E4M3, DType::E5M2})
    for (const Layout layout : kLayouts) {
      const ProblemSpec spec{.m = 9, .n = 14, .k = 33, .op_a = Op::T, .layout = layout, .ld_padding = kPadding,
                             .alpha = kAlpha, .beta = kBeta, .seed = seeds.next()};
      SCOPED_TRACE(spec.describe() + ", " + seeds.describe(spec.seed) + ", " + std::string(to_string(type)));
      HostProblem hp = make_host_problem(spec);
      testing::Encoded stored;
      testing::store_as(hp, type, stored);  // hp.a, hp.b: the stored elements as floats
      const double scale_a = hp.problem.scale_a, scale_b = hp.problem.scale_b;
      ASSERT_NE(scale_a, 1.0);
      ASSERT_NE(scale_b, 1.0);
      const BothReferences r = run_both(hp);
      for (std::int64_t i = 0; i < spec.m; ++i)
        for (std::int64_t j = 0; j < spec.n; ++j) {
          double value = 0, magnitude = 0;
          for (std::int64_t q = 0; q < spec.k; ++q) {
            const double x = scale_a * hp.a.at(q, i), y = scale_b * hp.b.at(q, j);
            value += x * y;
            magnitude += std::fabs(x * y);
          }
          const double c0 = hp.c.at(i, j);
          value = kAlpha * value + kBeta * c0;
          magnitude = std::fabs(kAlpha) * magnitude + std::fabs(kBeta * c0);
          const auto idx = static_cast<std::size_t>(i * spec.n + j);
          // Summed in another order: a few float64 roundings apart.
          EXPECT_NEAR(r.blocked.value[idx], value, 1e-13 * magnitude) << "C(" << i << ", " << j << ")";
          EXPECT_NEAR(r.naive.value[idx], value, 1e-13 * magnitude) << "C(" << i << ", " << j << ")";
          EXPECT_NEAR(r.blocked.magnitude[idx], magnitude, 1e-13 * magnitude) << "C(" << i << ", " << j << ")";
        }
    }
}

TEST(Reference, RejectsAnInvalidProblem) {
  testing::Seeds seeds;
  HostProblem hp = make_host_problem({.m = 4, .n = 4, .k = 4, .seed = seeds.next()});
  hp.problem.a.ld = 2;
  ReferenceResult out;
  EXPECT_EQ(reference_gemm(hp.problem, out).code(), StatusCode::InvalidValue);
  EXPECT_EQ(reference_gemm_naive(hp.problem, out).code(), StatusCode::InvalidValue);
}

}  // namespace
}  // namespace gemmlab
