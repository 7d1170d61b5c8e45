// The statistics behind gemmlab compare, and the noise flags of the harness.
#include <gtest/gtest.h>

#include <vector>

#include "bench/compare.hpp"
#include "bench/harness.hpp"

namespace gemmlab::bench {
namespace {

TEST(MannWhitney, SeparatedSamplesAreSignificant) {
  const std::vector<double> a = {1.00, 1.01, 1.02, 1.00, 1.01, 1.02, 1.01, 1.00};
  const std::vector<double> b = {1.10, 1.11, 1.12, 1.10, 1.11, 1.12, 1.11, 1.10};
  EXPECT_LT(mann_whitney_p(a, b), 0.01);
  EXPECT_LT(mann_whitney_p(b, a), 0.01);  // two-sided
}

TEST(MannWhitney, OneDistributionIsNot) {
  const std::vector<double> a = {1.0, 3.0, 5.0, 7.0, 9.0, 11.0};
  const std::vector<double> b = {2.0, 4.0, 6.0, 8.0, 10.0, 12.0};
  EXPECT_GT(mann_whitney_p(a, b), 0.5);
  EXPECT_DOUBLE_EQ(mann_whitney_p(a, a), 1.0);
  EXPECT_DOUBLE_EQ(mann_whitney_p({2.0, 2.0}, {2.0, 2.0, 2.0}), 1.0);  // all tied
  EXPECT_DOUBLE_EQ(mann_whitney_p({}, {1.0}), 1.0);
}

Record timed(const std::string& variant, bool anchor, int threads, double median_ms, double spread) {
  Record r;
  r.backend = "cpu";
  r.variant = variant;
  r.anchor = anchor;
  r.threads = threads;
  r.m = r.n = r.k = 512;
  r.timed = true;
  r.timing.median_ms = median_ms;
  r.timing.spread = spread;
  r.timing.reps = 10;
  return r;
}

TEST(FlagNoise, SpreadAboveTheThresholdIsNoisy) {
  Options o;
  o.max_spread = 0.05;
  std::vector<Record> records = {timed("quiet", false, 1, 10, 0.01), timed("loud", false, 1, 10, 0.2)};
  flag_noise(records, o);
  EXPECT_FALSE(records[0].noisy);
  EXPECT_TRUE(records[0].warnings.empty());
  EXPECT_TRUE(records[1].noisy);
  ASSERT_EQ(records[1].warnings.size(), 1u);
  EXPECT_NE(records[1].warnings[0].find("spread 20.0%"), std::string::npos) << records[1].warnings[0];
}

TEST(FlagNoise, AThreadedAnchorNoFasterThanItsTwinIsSuspectAndSoAreRatiosToIt) {
  Options o;
  std::vector<Record> records = {timed("openblas_sgemm_1t", true, 1, 20, 0.01),
                                 timed("openblas_sgemm", true, 2, 19.9, 0.01), timed("threaded", false, 2, 13, 0.01)};
  attach_anchor_ratios(records);
  flag_noise(records, o);
  EXPECT_FALSE(records[0].noisy);
  EXPECT_TRUE(records[1].noisy);
  ASSERT_FALSE(records[1].warnings.empty());
  EXPECT_NE(records[1].warnings[0].find("no faster than openblas_sgemm_1t"), std::string::npos);
  EXPECT_EQ(records[2].anchor_variant, "openblas_sgemm");
  EXPECT_TRUE(records[2].noisy);
  // Twice as fast: nothing to say.
  records[1] = timed("openblas_sgemm", true, 2, 10.5, 0.01);
  records[2] = timed("threaded", false, 2, 13, 0.01);
  attach_anchor_ratios(records);
  flag_noise(records, o);
  EXPECT_FALSE(records[1].noisy);
  EXPECT_FALSE(records[2].noisy);
}

TEST(FlagNoise, ACappedTimingSaysSo) {
  Options o;
  o.min_reps = 10;
  o.max_seconds = 3;
  std::vector<Record> records = {timed("slow", false, 1, 1500, 0.0)};
  records[0].timing.reps = 2;
  records[0].timing.capped = true;
  flag_noise(records, o);
  ASSERT_EQ(records[0].warnings.size(), 1u);
  EXPECT_NE(records[0].warnings[0].find("2 repetitions of the 10 asked"), std::string::npos);
}

TEST(Summarise, KeepsTheSamplesInTheirOrder) {
  Timing t;
  ASSERT_TRUE(summarise({3.0, 1.0, 2.0}, t));
  EXPECT_EQ(t.samples, (std::vector<double>{3.0, 1.0, 2.0}));
  EXPECT_DOUBLE_EQ(t.median_ms, 2.0);
  EXPECT_DOUBLE_EQ(t.min_ms, 1.0);
  EXPECT_DOUBLE_EQ(t.max_ms, 3.0);
}

// A rung of one dtype with C stored two ways is two rows (auto's name is the same for both);
// a file from before --out-dtype stored C in f32.
TEST(CompareRuns, CStoredAnotherWayIsAnotherRow) {
  const auto result = [](const char* out_dtype, double median_ms) {
    nlohmann::json r = {{"backend", "cuda"}, {"variant", "auto"}, {"dtype", "bf16"}, {"m", 64}, {"n", 64},
                        {"k", 64},           {"trans", "NN"},     {"layout", "row"}, {"status", "ok"},
                        {"time_ms", {{"median", median_ms}, {"spread", 0.01}, {"reps", 10}}}};
    if (out_dtype) r["out_dtype"] = out_dtype;
    return r;
  };
  const auto run = [](nlohmann::json results) {
    return nlohmann::json{{"tool", "gemmlab"}, {"command", "bench"}, {"results", std::move(results)}};
  };
  const nlohmann::json before = run({result(nullptr, 1.0), result("bf16", 2.0)});
  const nlohmann::json after = run({result("f32", 1.0), result("bf16", 2.0)});
  CompareReport report;
  ASSERT_TRUE(compare_runs(before, after, {}, report).is_ok());
  ASSERT_EQ(report.rows.size(), 2u);
  EXPECT_EQ(report.rows[0].out_dtype, "f32");
  EXPECT_EQ(report.rows[1].out_dtype, "bf16");
  for (const Comparison& c : report.rows) {
    EXPECT_TRUE(c.before && c.after) << c.out_dtype << ": both runs have it";
    EXPECT_EQ(c.verdict, Verdict::Same) << c.out_dtype;
  }
  EXPECT_NE(format_compare_table(report, "a", "b").find(" bf16_bf16 "), std::string::npos);
  EXPECT_EQ(compare_json(report, "a", "b").at("rows")[1].at("out_dtype"), "bf16");
}

}  // namespace
}  // namespace gemmlab::bench
