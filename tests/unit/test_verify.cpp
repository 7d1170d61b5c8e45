// Verification: passes a correct result and catches a wrong element (with its position), an
// unwritten element and a write into the ld padding; the tolerance follows gamma(n, u).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/element.hpp"
#include "core/verify.hpp"
#include "support/assertions.hpp"
#include "support/host_problem.hpp"
#include "support/seeds.hpp"

namespace gemmlab {
namespace {

using testing::HostProblem;
using testing::kLayouts;
using testing::make_host_problem;
using testing::ProblemSpec;

constexpr std::int64_t kPadding = 2;
constexpr double kF32 = 0x1p-24;  // unit roundoff of float32

// A problem, its reference and a correct float32 result: the reference rounded to float
// in C's storage, padding as it was.
struct Fixture {
  HostProblem hp;
  ReferenceResult reference;
  std::vector<float> result;

  float& element(std::int64_t i, std::int64_t j) {
    return result[static_cast<std::size_t>(hp.problem.c.offset(i, j))];
  }
  double reference_at(std::int64_t i, std::int64_t j) const {
    return reference.value[static_cast<std::size_t>(i * hp.problem.n + j)];
  }
  double magnitude_at(std::int64_t i, std::int64_t j) const {
    return reference.magnitude[static_cast<std::size_t>(i * hp.problem.n + j)];
  }
  Verification check() const { return testing::verify_result(hp, result, reference); }
};

Fixture make_fixture(const ProblemSpec& spec) {
  Fixture f{make_host_problem(spec), {}, {}};
  EXPECT_TRUE(testing::host_reference(f.hp, f.reference).is_ok());
  f.result = f.hp.c_before;
  for (std::int64_t i = 0; i < spec.m; ++i)
    for (std::int64_t j = 0; j < spec.n; ++j) f.element(i, j) = static_cast<float>(f.reference_at(i, j));
  return f;
}

ProblemSpec spec_for(Layout layout, std::uint64_t seed, bool nan_c = false) {
  return {.m = 23, .n = 17, .k = 41, .op_a = Op::T, .layout = layout, .ld_padding = kPadding,
          .alpha = 1.25, .beta = nan_c ? 0.0 : -0.5, .seed = seed, .nan_c = nan_c};
}

// A position drawn from the seed, so every run plants somewhere else.
struct Position {
  std::int64_t i, j;
};
Position random_position(std::uint64_t seed, std::int64_t m, std::int64_t n) {
  std::mt19937_64 engine(seed);
  return {std::uniform_int_distribution<std::int64_t>(0, m - 1)(engine),
          std::uniform_int_distribution<std::int64_t>(0, n - 1)(engine)};
}

TEST(Verify, PassesACorrectResult) {
  testing::Seeds seeds;
  for (const Layout layout : kLayouts)
    for (const bool nan_c : {false, true}) {
      const std::uint64_t seed = seeds.next();
      SCOPED_TRACE(seeds.describe(seed));
      const Fixture f = make_fixture(spec_for(layout, seed, nan_c));
      const Verification v = f.check();
      EXPECT_TRUE(v.passed) << v.summary();
      EXPECT_EQ(v.checked, f.hp.problem.m * f.hp.problem.n);
      EXPECT_EQ(v.failures, 0);
      EXPECT_EQ(v.unwritten, 0);
      EXPECT_EQ(v.padding_clobbered, 0);
      // Rounding to float32 is the only error: at most u relative, element by element.
      EXPECT_LE(v.rel_frobenius, kF32);
      EXPECT_TRUE(testing::contains(v.summary(), "ok"));
    }
}

TEST(Verify, ReportsAPlantedWrongElementAndItsPosition) {
  testing::Seeds seeds;
  for (const Layout layout : kLayouts) {
    const std::uint64_t seed = seeds.next();
    SCOPED_TRACE(seeds.describe(seed));
    Fixture f = make_fixture(spec_for(layout, seed));
    const Position at = random_position(seed, f.hp.problem.m, f.hp.problem.n);
    // Off by a thousandth of the element's magnitude: far beyond float32 rounding.
    const double wrong = f.reference_at(at.i, at.j) + 1e-3 * f.magnitude_at(at.i, at.j);
    f.element(at.i, at.j) = static_cast<float>(wrong);
    const Verification v = f.check();
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.failures, 1);
    EXPECT_EQ(v.unwritten, 0);
    EXPECT_EQ(v.worst_row, at.i);
    EXPECT_EQ(v.worst_col, at.j);
    EXPECT_EQ(v.worst_value, static_cast<float>(wrong));
    EXPECT_EQ(v.worst_reference, f.reference_at(at.i, at.j));
    EXPECT_GT(v.max_abs_error, v.worst_bound);
    EXPECT_TRUE(testing::contains(v.summary(), "FAILED"));
    EXPECT_TRUE(testing::contains(v.summary(), "C(" + std::to_string(at.i) + ", " + std::to_string(at.j) + ")"));
  }
}

TEST(Verify, ReportsAnUnwrittenElement) {
  testing::Seeds seeds;
  for (const Layout layout : kLayouts) {
    const std::uint64_t seed = seeds.next();
    SCOPED_TRACE(seeds.describe(seed));
    Fixture f = make_fixture(spec_for(layout, seed, /*nan_c=*/true));
    const Position at = random_position(seed, f.hp.problem.m, f.hp.problem.n);
    f.element(at.i, at.j) = std::numeric_limits<float>::quiet_NaN();  // the poison, left in place
    const Verification v = f.check();
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.failures, 1);
    EXPECT_EQ(v.unwritten, 1);
    EXPECT_EQ(v.worst_row, at.i);
    EXPECT_EQ(v.worst_col, at.j);
    EXPECT_TRUE(testing::contains(v.summary(), "1 unwritten"));

    // Without poisoning a NaN is still a failure, but no evidence of an unwritten element.
    const Verification plain = verify(f.hp.problem, f.result, f.hp.c_before, f.reference, false);
    EXPECT_FALSE(plain.passed);
    EXPECT_EQ(plain.failures, 1);
    EXPECT_EQ(plain.unwritten, 0);
  }
}

// A write between the contiguous extent and ld, in the first, a middle and the last line.
TEST(Verify, ReportsAWriteIntoTheLdPadding) {
  testing::Seeds seeds;
  for (const Layout layout : kLayouts) {
    const std::uint64_t seed = seeds.next();
    SCOPED_TRACE(seeds.describe(seed));
    const Fixture clean = make_fixture(spec_for(layout, seed));
    const Matrix& c = clean.hp.problem.c;
    ASSERT_EQ(c.ld, c.contiguous_extent() + kPadding);
    for (const std::int64_t line : {std::int64_t{0}, c.lines() / 2, c.lines() - 1})
      for (std::int64_t e = c.contiguous_extent(); e < c.ld; ++e) {
        SCOPED_TRACE("line " + std::to_string(line) + ", position " + std::to_string(e));
        std::vector<float> result = clean.result;
        float& target = result[static_cast<std::size_t>(line * c.ld + e)];
        target = std::nextafter(target, std::numeric_limits<float>::infinity());
        const Verification v = testing::verify_result(clean.hp, result, clean.reference);
        EXPECT_FALSE(v.passed);
        EXPECT_EQ(v.padding_clobbered, 1);
        EXPECT_EQ(v.failures, 0);
        EXPECT_TRUE(testing::contains(v.summary(), "written outside the matrix"));
      }
  }
}

TEST(Verify, FailsWhenTheResultIsShorterThanC) {
  testing::Seeds seeds;
  const std::uint64_t seed = seeds.next();
  SCOPED_TRACE(seeds.describe(seed));
  const Fixture f = make_fixture(spec_for(Layout::RowMajor, seed));
  const std::span<const float> truncated(f.result.data(), static_cast<std::size_t>(f.hp.problem.c.span_elements() - 1));
  EXPECT_FALSE(testing::verify_result(f.hp, truncated, f.reference).passed);
}

TEST(Tolerance, GammaIsNuOverOneMinusNu) {
  for (const DType type : {DType::F32, DType::TF32, DType::BF16, DType::F64}) {
    const double u = unit_roundoff(type);
    for (const double n : {1.0, 2.0, 17.0, 1024.0}) {
      const double nu = n * u;
      if (nu >= 1.0) continue;
      EXPECT_DOUBLE_EQ(gamma_bound(n, u), nu / (1.0 - nu)) << "n=" << n << " u=" << u;
      // First order it is n u; the correction is positive.
      EXPECT_GT(gamma_bound(n, u), nu);
    }
  }
  EXPECT_EQ(gamma_bound(0.0, kF32), 0.0);
  EXPECT_LT(gamma_bound(100.0, kF32), gamma_bound(101.0, kF32));
  // n u >= 1: no bound at all.
  EXPECT_TRUE(std::isinf(gamma_bound(1.0 / 0x1p-8, 0x1p-8)));
  EXPECT_TRUE(std::isinf(gamma_bound(1e9, 0x1p-8)));
}

TEST(Tolerance, UnitRoundoffsFollowThePrecision) {
  // f32 on the SIMT cores: operands exact, float32 round-to-nearest sums.
  const Tolerance f32 = tolerance_for(DType::F32, DType::F32, DType::F32);
  EXPECT_EQ(f32.input_u, 0.0);
  EXPECT_EQ(f32.accumulate_u, 0x1p-24);
  EXPECT_EQ(f32.output_u, 0x1p-24);
  // tf32: float32 operands reduced to tf32 (by truncation at worst: one tf32 ulp), sums in
  // float32 on adders that truncate (one float32 ulp).
  const Tolerance tf32 = tolerance_for(DType::F32, DType::TF32, DType::F32);
  EXPECT_EQ(tf32.input_u, 0x1p-10);
  EXPECT_EQ(tf32.accumulate_u, 0x1p-23);
  EXPECT_EQ(tf32.output_u, 0x1p-24);
  // bf16 and f16: operands exact (their products fit float32), tensor-core sums.
  for (const DType input : {DType::BF16, DType::F16}) {
    const Tolerance t = tolerance_for(input, DType::F32, DType::F32);
    EXPECT_EQ(t.input_u, 0.0) << to_string(input);
    EXPECT_EQ(t.accumulate_u, 0x1p-23) << to_string(input);
  }
  // C stored in bf16 or f16: the sums rounded once more, to C's type; f16's smallest normal.
  for (const DType output : {DType::BF16, DType::F16}) {
    const Tolerance t = tolerance_for(output, DType::F32, output);
    EXPECT_EQ(t.input_u, 0.0) << to_string(output);
    EXPECT_EQ(t.accumulate_u, 0x1p-23) << to_string(output);
    EXPECT_EQ(t.output_u, unit_roundoff(output)) << to_string(output);
  }
  EXPECT_EQ(tolerance_for(DType::BF16, DType::F32, DType::BF16).output_u, 0x1p-8);
  EXPECT_EQ(tolerance_for(DType::F16, DType::F32, DType::F16).output_u, 0x1p-11);
  EXPECT_EQ(tolerance_for(DType::BF16, DType::F32, DType::BF16).output_min_normal, 0x1p-126);
  EXPECT_EQ(tolerance_for(DType::F16, DType::F32, DType::F16).output_min_normal, 0x1p-14);
  EXPECT_EQ(f32.output_min_normal, 0x1p-126);
  // Every --dtype name has a tolerance from its precision.
  for (const DType name : kDTypeNames) {
    const Precision p = *precision_for(name);
    const Tolerance t = tolerance_for(p.input, p.compute, p.output);
    EXPECT_GT(t.accumulate_u, 0.0) << to_string(name);
    EXPECT_LT(t.accumulate_u, 0x1p-20) << to_string(name) << ": every rung sums in float32";
  }
}

TEST(Tolerance, BoundIsGammaOfKPlusTwoTimesMagnitudePlusOutputRounding) {
  const Tolerance tol = tolerance_for(DType::F32, DType::F32, DType::F32);
  for (const std::int64_t k : {std::int64_t{0}, std::int64_t{1}, std::int64_t{77}, std::int64_t{4096}}) {
    const double magnitude = 3.5, reference = -2.25;
    const double floor = tol.bound(k, 0.0, 0.0);  // what remains for a zero result
    EXPECT_GT(floor, 0.0);
    EXPECT_LT(floor, tol.bound(k, magnitude, reference) * kF32);
    // C's rounding is of the value stored, |reference| plus the sums' error at most.
    const double sums = gamma_bound(static_cast<double>(k + 2), kF32) * magnitude;
    EXPECT_DOUBLE_EQ(tol.bound(k, magnitude, reference) - floor, sums + kF32 * (std::fabs(reference) + sums));
  }
  EXPECT_LT(tol.bound(10, 1.0, 1.0), tol.bound(1000, 1.0, 1.0));
  EXPECT_LT(tol.bound(10, 1.0, 1.0), tol.bound(10, 2.0, 1.0));
  EXPECT_LT(tolerance_for(DType::F32, DType::F32, DType::F32).bound(10, 1.0, 1.0),
            tolerance_for(DType::F32, DType::TF32, DType::F32).bound(10, 1.0, 1.0));
}

// Reduced operands: (1 + gamma(2, input_u)) (1 + gamma(k + 2, accumulate_u)) - 1 times the
// magnitude. For tf32 the operand term dominates and does not grow with k.
TEST(Tolerance, ReducedOperandsMultiplyTheAccumulationBound) {
  const Tolerance tf32 = tolerance_for(DType::F32, DType::TF32, DType::F32);
  for (const std::int64_t k : {std::int64_t{1}, std::int64_t{257}, std::int64_t{8192}}) {
    const double magnitude = 5.0, reference = 1.5;
    const double g2 = gamma_bound(2.0, 0x1p-10), gk = gamma_bound(static_cast<double>(k + 2), 0x1p-23);
    const double floor = tf32.bound(k, 0.0, 0.0);
    const double computed = ((1 + g2) * (1 + gk) - 1) * magnitude;
    const double expected = computed + 0x1p-24 * (std::fabs(reference) + computed);
    EXPECT_NEAR(tf32.bound(k, magnitude, reference) - floor, expected, 1e-12 * expected);  // summed in another order
    // Meaningful at every k a GEMM here runs: far below the magnitude itself.
    EXPECT_LT(tf32.bound(k, magnitude, reference), 0.01 * magnitude);
  }
}

// FP8: operands exact, partial sums of 128 K-terms at 2^-13 per addition promoted into
// float32 (truncating, as the other tensor-core types), C rounded to its own type.
TEST(Tolerance, Fp8SumsInTwoLevels) {
  for (const DType input : {DType::E4M3, DType::E5M2})
    for (const DType output : kOutDTypeNames) {
      SCOPED_TRACE(fmt::format("{} into {}", to_string(input), to_string(output)));
      const Tolerance t = tolerance_for(input, DType::F32, output);
      EXPECT_EQ(t.input_u, 0.0);
      EXPECT_EQ(t.accumulate_u, 0x1p-23);
      EXPECT_EQ(t.promote_every, 128);
      EXPECT_EQ(t.partial_u, 0x1p-13);
      EXPECT_EQ(t.output_u, unit_roundoff(output));
      EXPECT_EQ(t.output_min_normal, output == DType::F16 ? 0x1p-14 : 0x1p-126);
    }
  // Every other precision keeps one accumulator.
  for (const DType name : {DType::F32, DType::TF32, DType::BF16, DType::F16}) {
    const Precision p = *precision_for(name);
    EXPECT_EQ(tolerance_for(p.input, p.compute, p.output).promote_every, 0) << to_string(name);
  }
}

// The bound of promoted sums: ((1 + g_p)(1 + g_f) - 1) * magnitude with g_p = gamma(min(k,
// P) * terms_per_k, partial_u) and g_f = gamma(ceil(k / P) + 2, accumulate_u), then C's
// rounding; with promote_every = 0, the one-accumulator bound exactly.
TEST(Tolerance, PromotedSumsBoundFollowsTheTwoLevels) {
  const Tolerance fp8 = tolerance_for(DType::E4M3, DType::F32, DType::F32);
  const double magnitude = 7.0, reference = -3.0;
  for (const std::int64_t k : {1, 127, 128, 129, 1000, 4096, 65537}) {
    SCOPED_TRACE(k);
    const double p = static_cast<double>(std::min<std::int64_t>(k, 128));
    const double partial_sums = std::ceil(static_cast<double>(k) / 128);
    const double g_p = gamma_bound(p, 0x1p-13), g_f = gamma_bound(partial_sums + 2, 0x1p-23);
    const double computed = ((1 + g_p) * (1 + g_f) - 1) * magnitude;
    const double floor = fp8.bound(k, 0.0, 0.0);
    const double expected = computed + 0x1p-24 * (std::fabs(reference) + computed);
    EXPECT_NEAR(fp8.bound(k, magnitude, reference) - floor, expected, 1e-12 * expected);
    // terms_per_k multiplies the terms of a partial sum only.
    Tolerance split = fp8;
    split.terms_per_k = 3;
    const double g_p3 = gamma_bound(3 * p, 0x1p-13);
    const double computed3 = ((1 + g_p3) * (1 + g_f) - 1) * magnitude;
    EXPECT_NEAR(split.bound(k, magnitude, reference) - floor, computed3 + 0x1p-24 * (std::fabs(reference) + computed3),
                1e-12 * computed3);
    // No promotion: the one-accumulator formula, whatever partial_u says.
    Tolerance single = fp8;
    single.promote_every = 0;
    const double sums = gamma_bound(static_cast<double>(k) + 2, 0x1p-23) * magnitude;
    EXPECT_DOUBLE_EQ(single.bound(k, magnitude, reference) - floor, sums + 0x1p-24 * (std::fabs(reference) + sums));
  }
}

TEST(Tolerance, PromotedSumsBoundGrowsWithKAndStaysFarBelowOneNarrowSum) {
  const Tolerance fp8 = tolerance_for(DType::E5M2, DType::F32, DType::F32);
  double previous = fp8.bound(0, 1.0, 1.0);
  for (std::int64_t k = 1; k <= 20000; ++k) {
    const double bound = fp8.bound(k, 1.0, 1.0);
    ASSERT_GE(bound, previous) << "k = " << k;
    previous = bound;
  }
  // At k = 4096 a single 14-bit sum could lose everything (gamma = 1); promoted every 128
  // K-terms, under 2 %.
  const double one_narrow_sum = gamma_bound(4096, 0x1p-13);
  EXPECT_GE(one_narrow_sum, 1.0);
  EXPECT_LT(fp8.bound(4096, 1.0, 0.0), 0.02);
  EXPECT_LT(fp8.bound(4096, 1.0, 0.0), one_narrow_sum / 50);
  // Past the first partial sum, the partial sums' share stops growing: the bound at 64 K
  // terms is within a float32 rounding or so of the bound at 4 K terms (per unit magnitude).
  EXPECT_LT(fp8.bound(65536, 1.0, 0.0) - fp8.bound(4096, 1.0, 0.0), 1e-4);
}

// A C stored in 16 bits is held to its own rounding, to nearest: half an ulp of the value,
// and below f16's smallest normal half the subnormals' spacing (2^-25), where the relative
// bound alone would fail a correctly rounded result. Without that floor, one does fail.
TEST(Tolerance, HalfPrecisionCIsHeldToHalfAnUlpOfItsType) {
  testing::Seeds seeds;
  const std::uint64_t seed = seeds.next();
  SCOPED_TRACE(seeds.describe(seed));
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> exponent(-30.0, 15.0);  // f16's subnormals to near its largest
  std::uniform_int_distribution<int> sign(0, 1);
  for (const DType type : {DType::BF16, DType::F16}) {
    const Tolerance tol = tolerance_for(type, DType::F32, type);
    Tolerance no_floor = tol;
    no_floor.output_min_normal = 0x1p-126;
    bool subnormal_needs_floor = false;
    for (int i = 0; i < 20000; ++i) {
      // An exact result (no sums' error: magnitude 0, k 0) stored in `type`.
      const float exact = static_cast<float>((sign(engine) ? -1.0 : 1.0) * std::exp2(exponent(engine)));
      const double stored = round_to_storage(exact, type);
      const double error = std::fabs(stored - static_cast<double>(exact));
      const double floor = tol.bound(0, 0.0, 0.0) - tol.output_u * tol.output_min_normal;  // (k + 2) float minima
      ASSERT_LE(error, tol.bound(0, 0.0, exact) - floor) << to_string(type) << std::hexfloat << " " << exact;
      ASSERT_LE(error, tol.output_u * std::max(std::fabs(static_cast<double>(exact)), tol.output_min_normal));
      if (error > no_floor.bound(0, 0.0, exact)) subnormal_needs_floor = true;
    }
    EXPECT_EQ(subnormal_needs_floor, type == DType::F16) << to_string(type);
  }
}

// verify() draws the line where the bound says: just inside passes, beyond it fails.
TEST(Tolerance, VerifyAcceptsErrorsWithinTheBoundAndRejectsTheRest) {
  testing::Seeds seeds;
  const std::uint64_t seed = seeds.next();
  SCOPED_TRACE(seeds.describe(seed));
  Fixture f = make_fixture(spec_for(Layout::RowMajor, seed));
  const Tolerance tol = tolerance_for(f.hp.problem.a.dtype, f.hp.problem.compute, f.hp.problem.c.dtype);
  const Position at = random_position(seed, f.hp.problem.m, f.hp.problem.n);
  const auto idx = static_cast<std::size_t>(at.i * f.hp.problem.n + at.j);
  const double got = f.element(at.i, at.j);
  const double magnitude = f.magnitude_at(at.i, at.j);
  // Move the reference away from the stored value; the bound grows with |reference| at
  // most by output_u * error, so these factors stay on their side of it.
  constexpr double kInside = 0.9, kOutside = 2.0;
  const double direction = got >= 0 ? 1.0 : -1.0;
  const double bound = tol.bound(f.hp.problem.k, magnitude, got);

  f.reference.value[idx] = got + direction * kInside * bound;
  Verification v = f.check();
  EXPECT_TRUE(v.passed) << v.summary();

  f.reference.value[idx] = got + direction * kOutside * bound;
  v = f.check();
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.failures, 1);
  EXPECT_EQ(v.worst_row, at.i);
  EXPECT_EQ(v.worst_col, at.j);
}

}  // namespace
}  // namespace gemmlab
