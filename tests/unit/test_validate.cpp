// Every argument check of validate(), each with a message that names the argument.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "gemmlab/problem.hpp"
#include "support/assertions.hpp"
#include "support/host_problem.hpp"
#include "support/seeds.hpp"

namespace gemmlab {
namespace {

using testing::contains;
using testing::HostProblem;
using testing::kLayouts;
using testing::kOps;
using testing::make_host_problem;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

// m, n and k all different, so a view that swaps two of them is caught.
HostProblem valid_problem(Layout layout, Op op_a, Op op_b, std::uint64_t seed) {
  return make_host_problem({.m = 5, .n = 7, .k = 3, .op_a = op_a, .op_b = op_b, .layout = layout,
                            .ld_padding = 2, .alpha = 1.5, .beta = 0.5, .seed = seed});
}

::testing::AssertionResult rejected(const GemmProblem& p, std::string_view names) {
  const Status s = validate(p);
  if (s.code() != StatusCode::InvalidValue)
    return ::testing::AssertionFailure() << "expected invalid value naming '" << names << "', got "
                                         << s.describe();
  return contains(s.message(), names);
}

// The matrices of a problem, by the name their messages use.
struct Operand {
  char name;
  Matrix GemmProblem::*member;
};
constexpr Operand kOperands[] = {{'A', &GemmProblem::a}, {'B', &GemmProblem::b}, {'C', &GemmProblem::c}};

std::string ld_name(char matrix) {
  return std::string("ld") + static_cast<char>(matrix - 'A' + 'a');
}

// Runs `check` on a valid problem of every layout and transposition.
template <class Check>
void for_each_valid_problem(Check check) {
  testing::Seeds seeds;
  for (const Layout layout : kLayouts)
    for (const Op op_a : kOps)
      for (const Op op_b : kOps) {
        HostProblem hp = valid_problem(layout, op_a, op_b, seeds.next());
        SCOPED_TRACE(hp.spec.describe());
        ASSERT_TRUE(validate(hp.problem).is_ok()) << validate(hp.problem).describe();
        check(hp.problem);
      }
}

TEST(Validate, AcceptsAValidProblem) {
  for_each_valid_problem([](const GemmProblem& p) {
    GemmProblem tight = p;  // ld exactly the contiguous extent is legal
    for (const Operand& x : kOperands) (tight.*x.member).ld = (tight.*x.member).contiguous_extent();
    EXPECT_TRUE(validate(tight).is_ok()) << validate(tight).describe();
  });
}

TEST(Validate, RejectsNegativeDimensions) {
  for_each_valid_problem([](const GemmProblem& p) {
    GemmProblem bad = p;
    bad.m = -1;
    EXPECT_TRUE(rejected(bad, "m (-1)"));
    bad = p;
    bad.n = -2;
    EXPECT_TRUE(rejected(bad, "n (-2)"));
    bad = p;
    bad.k = -3;
    EXPECT_TRUE(rejected(bad, "k (-3)"));
  });
}

TEST(Validate, RejectsAViewWhoseShapeDisagreesWithTheProblem) {
  for_each_valid_problem([](const GemmProblem& p) {
    for (const Operand& x : kOperands) {
      SCOPED_TRACE(std::string(1, x.name));
      const std::string named = std::string(1, x.name) + " is ";
      GemmProblem bad = p;
      ++(bad.*x.member).rows;
      EXPECT_TRUE(rejected(bad, named));
      bad = p;
      std::swap((bad.*x.member).rows, (bad.*x.member).cols);  // the transposed view
      EXPECT_TRUE(rejected(bad, named));
    }
    // The op disagrees with how A and B are stored (m != k and n != k).
    GemmProblem bad = p;
    bad.op_a = p.op_a == Op::N ? Op::T : Op::N;
    EXPECT_TRUE(rejected(bad, "A is "));
    bad = p;
    bad.op_b = p.op_b == Op::N ? Op::T : Op::N;
    EXPECT_TRUE(rejected(bad, "B is "));
    // m changes with the views left as they were: C is checked first.
    bad = p;
    bad.m += 1;
    EXPECT_TRUE(rejected(bad, "C is "));
  });
}

TEST(Validate, RejectsALeadingDimensionBelowTheContiguousExtent) {
  for_each_valid_problem([](const GemmProblem& p) {
    for (const Operand& x : kOperands) {
      GemmProblem bad = p;
      Matrix& m = bad.*x.member;
      m.ld = m.contiguous_extent() - 1;
      EXPECT_TRUE(rejected(bad, ld_name(x.name) + " (" + std::to_string(m.ld) + ")"));
      m.ld = 0;
      EXPECT_TRUE(rejected(bad, ld_name(x.name) + " (0)"));
      m.ld = -m.contiguous_extent();
      EXPECT_TRUE(rejected(bad, ld_name(x.name)));
    }
  });
}

// cuBLAS's rule ld >= max(1, extent) holds for matrices without elements too.
TEST(Validate, RejectsAZeroLeadingDimensionOfAnEmptyMatrix) {
  testing::Seeds seeds;
  for (const Layout layout : kLayouts) {
    // C without columns (row-major) or without rows (column-major): a contiguous extent of 0.
    const bool row = layout == Layout::RowMajor;
    HostProblem hp = make_host_problem(
        {.m = row ? 4 : 0, .n = row ? 0 : 6, .k = 3, .layout = layout, .seed = seeds.next()});
    SCOPED_TRACE(hp.spec.describe());
    ASSERT_EQ(hp.problem.c.contiguous_extent(), 0);
    ASSERT_TRUE(validate(hp.problem).is_ok());
    hp.problem.c.ld = 0;
    EXPECT_TRUE(rejected(hp.problem, "ldc (0)"));
  }
}

TEST(Validate, RejectsNullDataForANonEmptyMatrix) {
  for_each_valid_problem([](const GemmProblem& p) {
    for (const Operand& x : kOperands) {
      GemmProblem bad = p;
      (bad.*x.member).data = nullptr;
      EXPECT_TRUE(rejected(bad, std::string(1, x.name) + " is "));
      EXPECT_TRUE(contains(validate(bad).message(), "null"));
    }
  });
}

// m = 0, n = 0 or k = 0 leave some matrices without elements: those may be null.
TEST(Validate, AcceptsNullDataForAnEmptyMatrix) {
  testing::Seeds seeds;
  struct EmptyCase {
    std::int64_t m, n, k;
    bool a_null, b_null, c_null;
  };
  constexpr EmptyCase kCases[] = {
      {0, 6, 3, true, false, true}, {4, 0, 3, false, true, true}, {4, 6, 0, true, true, false},
      {0, 0, 0, true, true, true}};
  for (const Layout layout : kLayouts)
    for (const Op op_a : kOps)
      for (const EmptyCase& e : kCases) {
        const HostProblem hp =
            make_host_problem({.m = e.m, .n = e.n, .k = e.k, .op_a = op_a, .layout = layout,
                               .ld_padding = 1, .seed = seeds.next(), .null_when_empty = true});
        SCOPED_TRACE(hp.spec.describe());
        EXPECT_EQ(hp.problem.a.data == nullptr, e.a_null);
        EXPECT_EQ(hp.problem.b.data == nullptr, e.b_null);
        EXPECT_EQ(hp.problem.c.data == nullptr, e.c_null);
        EXPECT_TRUE(validate(hp.problem).is_ok()) << validate(hp.problem).describe();
      }
}

// Offsets are never formed here, so a leading dimension can be as large as a test likes.
TEST(Validate, RejectsOffsetsThatOverflow64Bits) {
  for_each_valid_problem([](const GemmProblem& p) {
    for (const Operand& x : kOperands) {
      SCOPED_TRACE(std::string(1, x.name));
      const std::string named = std::string(1, x.name) + ": ";
      GemmProblem bad = p;
      Matrix& m = bad.*x.member;
      const std::int64_t steps = m.lines() - 1;  // ld is multiplied by this
      ASSERT_GT(steps, 0);
      // (lines - 1) * ld itself overflows.
      m.ld = kInt64Max / steps + 1;
      EXPECT_TRUE(rejected(bad, named));
      EXPECT_TRUE(contains(validate(bad).message(), "overflow"));
      // The element offsets fit, the byte offsets do not.
      const auto bytes = static_cast<std::int64_t>(storage_bytes(m.dtype));
      m.ld = kInt64Max / bytes / steps + 1;
      EXPECT_TRUE(rejected(bad, named));
      // The largest span whose bytes fit passes.
      m.ld = (kInt64Max / bytes - m.contiguous_extent()) / steps;
      EXPECT_TRUE(validate(bad).is_ok()) << validate(bad).describe();
    }
  });
}

TEST(Validate, RejectsAAndBOfDifferentTypes) {
  for_each_valid_problem([](const GemmProblem& p) {
    GemmProblem bad = p;
    bad.b.dtype = DType::BF16;
    EXPECT_TRUE(rejected(bad, "A holds f32 but B holds bf16"));
    bad.a.dtype = DType::E4M3;
    bad.b.dtype = DType::E5M2;
    EXPECT_TRUE(rejected(bad, "A holds e4m3 but B holds e5m2"));
  });
}

// A scale is how an FP8 operand's stored elements become its values: anywhere else it is a
// misplaced alpha, and it must be finite. C is never FP8.
TEST(Validate, ScalesBelongToFp8OperandsAndCIsNeverFp8) {
  for_each_valid_problem([](const GemmProblem& p) {
    GemmProblem bad = p;
    bad.scale_a = 2.0;
    EXPECT_TRUE(rejected(bad, "scale_a = 2: a scale applies to e4m3 and e5m2 operands only, not to f32"));
    bad = p;
    bad.scale_b = 0.5;
    EXPECT_TRUE(rejected(bad, "scale_b = 0.5"));

    GemmProblem fp8 = p;
    for (const DType type : {DType::E4M3, DType::E5M2}) {
      fp8.a.dtype = fp8.b.dtype = type;
      fp8.scale_a = 0.25;
      fp8.scale_b = -3.0;
      EXPECT_TRUE(validate(fp8).is_ok()) << validate(fp8).describe();
      fp8.scale_b = std::numeric_limits<double>::quiet_NaN();
      EXPECT_TRUE(rejected(fp8, "scale_b (nan) must be finite"));
      fp8.scale_b = 1.0;
      fp8.scale_a = std::numeric_limits<double>::infinity();
      EXPECT_TRUE(rejected(fp8, "scale_a (inf) must be finite"));
      fp8.scale_a = 1.0;
      for (const DType c : {DType::E4M3, DType::E5M2}) {
        GemmProblem fp8_c = fp8;
        fp8_c.c.dtype = c;
        EXPECT_TRUE(rejected(fp8_c, "C in e4m3/e5m2 is not supported: store C as f32, bf16 or f16"));
      }
    }
  });
}

}  // namespace
}  // namespace gemmlab
