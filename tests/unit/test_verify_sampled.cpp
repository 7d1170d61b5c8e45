// Verification at a sample of C: the positions (corners, last row and column, a few thousand,
// from the seed), the sampled reference against the full one, and the check itself: a correct
// result passes, a wrong sampled element fails, the poison is found anywhere in C, and the
// harness verifies at a sample where the full reference is out of reach.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "bench/harness.hpp"
#include "core/executor.hpp"
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

bool has(const std::vector<std::int64_t>& lines, std::int64_t x) {
  return std::find(lines.begin(), lines.end(), x) != lines.end();
}

TEST(SamplePositions, CornersLastRowAndColumnAndAFewThousand) {
  testing::Seeds seeds;
  for (const auto& [m, n] : {std::pair<std::int64_t, std::int64_t>{100000, 100000}, {200000, 16}, {16, 200000},
                             {1000, 513}, {1, 1}, {3, 5}, {70, 70}}) {
    const std::uint64_t seed = seeds.next();
    SCOPED_TRACE(seeds.describe(seed));
    SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n));
    const SamplePositions s = sample_positions(m, n, seed);
    ASSERT_FALSE(s.rows.empty());
    ASSERT_FALSE(s.cols.empty());
    // The four corners: the first and last row and column are all sampled.
    EXPECT_TRUE(has(s.rows, 0) && has(s.rows, m - 1));
    EXPECT_TRUE(has(s.cols, 0) && has(s.cols, n - 1));
    EXPECT_TRUE(std::is_sorted(s.rows.begin(), s.rows.end()));
    EXPECT_TRUE(std::adjacent_find(s.rows.begin(), s.rows.end()) == s.rows.end());
    EXPECT_TRUE(std::adjacent_find(s.cols.begin(), s.cols.end()) == s.cols.end());
    EXPECT_GE(s.rows.front(), 0);
    EXPECT_LT(s.rows.back(), m);
    EXPECT_LT(s.cols.back(), n);
    // A few thousand, or all of a smaller C.
    EXPECT_EQ(s.count(), std::min<std::int64_t>(m * n, s.count()));
    if (m * n >= kVerifySamples) {
      EXPECT_GE(s.count(), kVerifySamples);
      EXPECT_LE(s.count(), 2 * kVerifySamples);
    } else {
      EXPECT_EQ(s.count(), m * n);
    }
    // The run's seed picks them: the same seed the same positions.
    const SamplePositions again = sample_positions(m, n, seed);
    EXPECT_EQ(again.rows, s.rows);
    EXPECT_EQ(again.cols, s.cols);
  }
  // Another seed, other positions.
  EXPECT_NE(sample_positions(100000, 100000, 1).rows, sample_positions(100000, 100000, 2).rows);
}

// A problem, the positions, the sampled reference and a correct result (the full reference
// rounded to float32 everywhere).
struct Fixture {
  HostProblem hp;
  SamplePositions positions;
  ReferenceResult sampled, full;
  std::vector<float> result;

  float& element(std::int64_t i, std::int64_t j) {
    return result[static_cast<std::size_t>(hp.problem.c.offset(i, j))];
  }
  Verification check() const {
    return verify_sampled(hp.problem, result, hp.c_before, positions, sampled, hp.spec.nan_c);
  }
};

Fixture make_fixture(const ProblemSpec& spec, std::int64_t samples) {
  Fixture f{make_host_problem(spec), {}, {}, {}, {}};
  f.positions = sample_positions(spec.m, spec.n, spec.seed, samples);
  GemmProblem before = f.hp.problem;
  before.c.data = f.hp.c_before.data();
  EXPECT_TRUE(reference_sampled(before, f.positions, f.sampled).is_ok());
  EXPECT_TRUE(testing::host_reference(f.hp, f.full).is_ok());
  f.result = f.hp.c_before;
  for (std::int64_t i = 0; i < spec.m; ++i)
    for (std::int64_t j = 0; j < spec.n; ++j)
      f.element(i, j) = static_cast<float>(f.full.value[static_cast<std::size_t>(i * spec.n + j)]);
  return f;
}

ProblemSpec spec_for(Layout layout, Op op_a, Op op_b, std::uint64_t seed, bool nan_c) {
  return {.m = 67, .n = 45, .k = 2100,  // K over one block of the sampled reference
          .op_a = op_a, .op_b = op_b, .layout = layout, .ld_padding = 3,
          .alpha = 1.25, .beta = nan_c ? 0.0 : -0.5, .seed = seed, .nan_c = nan_c};
}

TEST(ReferenceSampled, AgreesWithTheFullReferenceAtEveryPosition) {
  testing::Seeds seeds;
  for (const Layout layout : kLayouts)
    for (const Op op_a : testing::kOps)
      for (const Op op_b : testing::kOps) {
        const std::uint64_t seed = seeds.next();
        SCOPED_TRACE(seeds.describe(seed));
        // Every element of this C, over two blocks of K, on threads.
        const Fixture f = make_fixture(spec_for(layout, op_a, op_b, seed, false), kVerifySamples);
        ASSERT_EQ(f.sampled.m, static_cast<std::int64_t>(f.positions.rows.size()));
        ASSERT_EQ(f.sampled.n, static_cast<std::int64_t>(f.positions.cols.size()));
        for (std::int64_t r = 0; r < f.sampled.m; ++r)
          for (std::int64_t c = 0; c < f.sampled.n; ++c) {
            const std::int64_t i = f.positions.rows[static_cast<std::size_t>(r)];
            const std::int64_t j = f.positions.cols[static_cast<std::size_t>(c)];
            const auto full = static_cast<std::size_t>(i * f.hp.problem.n + j);
            const auto at = static_cast<std::size_t>(r * f.sampled.n + c);
            // Both in float64, summed in other orders: within float64 rounding of the magnitude.
            const double slack = 1e-13 * f.full.magnitude[full];
            EXPECT_NEAR(f.sampled.value[at], f.full.value[full], slack) << "C(" << i << ", " << j << ")";
            EXPECT_NEAR(f.sampled.magnitude[at], f.full.magnitude[full], slack) << "C(" << i << ", " << j << ")";
          }
      }
}

TEST(ReferenceSampled, RejectsPositionsOutsideC) {
  const HostProblem hp = make_host_problem({.m = 5, .n = 4, .k = 3, .seed = 1});
  ReferenceResult out;
  EXPECT_EQ(reference_sampled(hp.problem, {{0, 5}, {0}}, out).code(), StatusCode::InvalidValue);
  EXPECT_EQ(reference_sampled(hp.problem, {{0}, {-1}}, out).code(), StatusCode::InvalidValue);
}

TEST(VerifySampled, PassesACorrectResult) {
  testing::Seeds seeds;
  for (const Layout layout : kLayouts)
    for (const bool nan_c : {false, true}) {
      const std::uint64_t seed = seeds.next();
      SCOPED_TRACE(seeds.describe(seed));
      const Fixture f = make_fixture(spec_for(layout, Op::T, Op::N, seed, nan_c), 500);
      const Verification v = f.check();
      EXPECT_TRUE(v.passed) << v.summary();
      EXPECT_TRUE(v.sampled);
      EXPECT_EQ(v.checked, f.positions.count());
      EXPECT_LT(v.checked, f.hp.problem.m * f.hp.problem.n);  // a sample, not all of C
      EXPECT_EQ(v.failures, 0);
      EXPECT_EQ(v.unwritten, 0);
      EXPECT_TRUE(testing::contains(v.summary(), "sampled"));
    }
}

TEST(VerifySampled, FailsOnOneWrongSampledElement) {
  testing::Seeds seeds;
  for (const Layout layout : kLayouts) {
    const std::uint64_t seed = seeds.next();
    SCOPED_TRACE(seeds.describe(seed));
    Fixture f = make_fixture(spec_for(layout, Op::N, Op::T, seed, false), 500);
    std::mt19937_64 pick(seed);
    // Any sampled position, the corners included.
    const std::int64_t i = f.positions.rows[pick() % f.positions.rows.size()];
    const std::int64_t j = f.positions.cols[pick() % f.positions.cols.size()];
    const double magnitude = f.full.magnitude[static_cast<std::size_t>(i * f.hp.problem.n + j)];
    f.element(i, j) += static_cast<float>(1e-3 * magnitude);  // far beyond float32 rounding
    const Verification v = f.check();
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.failures, 1);
    EXPECT_EQ(v.worst_row, i);
    EXPECT_EQ(v.worst_col, j);
    EXPECT_TRUE(testing::contains(v.summary(), "of " + std::to_string(v.checked) + " sampled elements"));
    // The last element of C, a corner, is always among them.
    Fixture g = make_fixture(spec_for(layout, Op::N, Op::T, seed, false), 500);
    const std::int64_t last = g.hp.problem.m * g.hp.problem.n - 1;
    g.element(g.hp.problem.m - 1, g.hp.problem.n - 1) += static_cast<float>(1e-3 * g.full.magnitude[static_cast<std::size_t>(last)]);
    EXPECT_FALSE(g.check().passed);
  }
}

TEST(VerifySampled, FindsThePoisonAnywhereInC) {
  testing::Seeds seeds;
  for (const Layout layout : kLayouts) {
    const std::uint64_t seed = seeds.next();
    SCOPED_TRACE(seeds.describe(seed));
    Fixture f = make_fixture(spec_for(layout, Op::N, Op::N, seed, /*nan_c=*/true), 100);
    // An element no sample looks at, left holding the poison: the scan of all of C finds it.
    std::int64_t i = 0, j = 0;
    for (i = 0; i < f.hp.problem.m && std::binary_search(f.positions.rows.begin(), f.positions.rows.end(), i);) ++i;
    ASSERT_LT(i, f.hp.problem.m) << "every row sampled: the test needs an unsampled one";
    j = f.hp.problem.n / 2;
    f.element(i, j) = std::numeric_limits<float>::quiet_NaN();
    Verification v = f.check();
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.failures, 0);  // no sampled element is wrong
    EXPECT_EQ(v.unwritten, 1);
    EXPECT_TRUE(testing::contains(v.summary(), "1 unwritten"));
    // A sampled element still holding the poison fails as a wrong element too.
    f.element(f.positions.rows.front(), f.positions.cols.back()) = std::numeric_limits<float>::quiet_NaN();
    v = f.check();
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.failures, 1);
    EXPECT_EQ(v.unwritten, 2);
  }
}

TEST(VerifySampled, ReportsAWriteIntoTheLdPadding) {
  Fixture f = make_fixture(spec_for(Layout::RowMajor, Op::N, Op::N, 11, false), 100);
  f.result[static_cast<std::size_t>(f.hp.problem.c.offset(3, f.hp.problem.n))] = 42.0f;  // past the row's end
  const Verification v = f.check();
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.padding_clobbered, 1);
}

TEST(VerifySampled, MismatchedReferenceFails) {
  const Fixture f = make_fixture(spec_for(Layout::RowMajor, Op::N, Op::N, 12, false), 100);
  SamplePositions other = f.positions;
  other.cols.pop_back();
  EXPECT_FALSE(verify_sampled(f.hp.problem, f.result, f.hp.c_before, other, f.sampled, false).passed);
}

// The harness end to end: with the host reference's limit lowered, a small CPU run is
// verified at a sample, and says so.
TEST(HarnessSampled, VerifiesAtASampleBeyondTheReferenceLimit) {
  bench::Options o;
  o.variants = {"loop_order", "packed_simd"};
  o.shapes = {{130, 150, 70}, {8, 8, 8}};
  o.seed = 99;
  o.time = false;
  o.beta = 0;
  o.host_reference_max_fmas = 1000;  // the second shape (512) stays under it
  const std::unique_ptr<Executor> executor = make_cpu_executor();
  std::vector<bench::Record> records;
  ASSERT_TRUE(bench::run(o, *executor, records).is_ok());
  ASSERT_EQ(records.size(), 4u);
  for (const bench::Record& r : records) {
    SCOPED_TRACE(r.variant + " " + std::to_string(r.m));
    ASSERT_TRUE(r.verified) << r.message;
    EXPECT_TRUE(r.verification.passed) << r.verification.summary();
    if (r.m == 130) {
      EXPECT_TRUE(r.verification.sampled);
      EXPECT_EQ(r.verification.checked, sample_positions(130, 150, o.seed).count());
      EXPECT_TRUE(testing::contains(r.verification_note, "too long")) << r.verification_note;
    } else {
      EXPECT_FALSE(r.verification.sampled);
      EXPECT_EQ(r.verification.checked, 64);
    }
  }
}

TEST(HarnessSampled, RefusesARunThatCannotFitBeforeAllocating) {
  bench::Options o;
  o.variants = {"naive"};
  o.shapes = {{8, 8, 8}, {1000000, 1000000, 1000000}};  // 4 TB a matrix
  o.seed = 1;
  const std::unique_ptr<Executor> executor = make_cpu_executor();
  std::vector<bench::Record> records;
  const Status s = bench::run(o, *executor, records);
  EXPECT_EQ(s.code(), StatusCode::AllocFailed);
  EXPECT_TRUE(testing::contains(s.message(), "1000000x1000000x1000000 (f32) does not fit")) << s.message();
  EXPECT_TRUE(records.empty());  // not even the small shape ran
}

}  // namespace
}  // namespace gemmlab
