// The harness on the CPU executor: what each record carries, that the CPU rungs verify, that
// an unknown name is a bad selection, and how each rung is put beside its anchor.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "bench/harness.hpp"
#include "bench/host_operands.hpp"
#include "bench/report.hpp"
#include "core/executor.hpp"
#include "cpu/ladder/openblas.hpp"
#include "gemmlab/registry.hpp"
#include "support/assertions.hpp"
#include "support/seeds.hpp"

namespace gemmlab::bench {
namespace {

using gemmlab::testing::contains;

constexpr int kReps = 2;

// Quick settings: no warm-up, exactly kReps timed runs, no minimum time.
Options quick_options(std::uint64_t seed) {
  Options o;
  o.shapes = {{19, 11, 7}, {6, 1, 5}};
  o.op_a = Op::T;
  o.op_b = Op::N;
  o.layout = Layout::ColMajor;
  o.alpha = 0.5;
  o.beta = 2.0;
  o.ld_padding = 1;
  o.seed = seed;
  o.warmup = 0;
  o.min_reps = kReps;
  o.max_reps = kReps;
  o.min_seconds = 0;
  return o;
}

// The anchors are OpenBLAS: without it they are recorded as skipped, and nothing here
// can be compared with them.
bool skip_without_openblas() { return !cpu::openblas_info().loaded; }

TEST(Harness, RecordsEveryCpuRungOnEveryShape) {
  if (skip_without_openblas()) GTEST_SKIP() << cpu::openblas_info().error;
  gemmlab::testing::Seeds seeds;
  const Options o = quick_options(seeds.next());
  SCOPED_TRACE(seeds.describe(o.seed));
  const auto executor = make_cpu_executor();
  std::vector<Record> records;
  const Status status = run(o, *executor, records);
  ASSERT_TRUE(status.is_ok()) << status.describe();

  const auto ladder = variants(Backend::Cpu);
  ASSERT_EQ(records.size(), o.shapes.size() * ladder.size());
  for (std::size_t s = 0; s < o.shapes.size(); ++s)
    for (std::size_t v = 0; v < ladder.size(); ++v) {
      const Record& r = records[s * ladder.size() + v];
      const Shape& shape = o.shapes[s];
      SCOPED_TRACE(r.variant);
      EXPECT_EQ(r.backend, "cpu");
      EXPECT_EQ(r.variant, ladder[v].name);
      EXPECT_EQ(r.technique, ladder[v].technique);
      EXPECT_EQ(r.anchor, ladder[v].anchor);
      EXPECT_EQ(r.threads, ladder[v].threads);
      EXPECT_EQ(r.m, shape.m);
      EXPECT_EQ(r.n, shape.n);
      EXPECT_EQ(r.k, shape.k);
      // Column-major, A through T (stored k x m): ld = rows + padding.
      EXPECT_EQ(r.lda, shape.k + o.ld_padding);
      EXPECT_EQ(r.ldb, shape.k + o.ld_padding);
      EXPECT_EQ(r.ldc, shape.m + o.ld_padding);
      EXPECT_EQ(r.trans, "TN");
      EXPECT_EQ(r.layout, "col");
      EXPECT_EQ(r.alpha, o.alpha);
      EXPECT_EQ(r.beta, o.beta);
      EXPECT_EQ(r.seed, o.seed + s);  // fresh inputs per shape
      EXPECT_EQ(r.status, "ok") << r.message;
      EXPECT_TRUE(r.verified);
      EXPECT_TRUE(r.verification.passed) << r.verification.summary();
      EXPECT_EQ(r.verification.checked, shape.m * shape.n);
      EXPECT_FALSE(r.failed());
      EXPECT_TRUE(r.timed);
      EXPECT_EQ(r.timing.reps, kReps);
      EXPECT_GT(r.timing.median_ms, 0.0);
      EXPECT_LE(r.timing.min_ms, r.timing.median_ms);
      EXPECT_LE(r.timing.median_ms, r.timing.max_ms);
      EXPECT_DOUBLE_EQ(r.model.flops, 2.0 * static_cast<double>(shape.m * shape.n * shape.k));
      EXPECT_DOUBLE_EQ(r.gflops, r.model.flops / (r.timing.median_ms * 1e-3) * 1e-9);
    }
}

// Each rung is compared with the anchor on as many threads, of the same shape.
TEST(Harness, ComputesRatiosToTheAnchor) {
  if (skip_without_openblas()) GTEST_SKIP() << cpu::openblas_info().error;
  gemmlab::testing::Seeds seeds;
  const Options o = quick_options(seeds.next());
  SCOPED_TRACE(seeds.describe(o.seed));
  const auto executor = make_cpu_executor();
  std::vector<Record> records;
  ASSERT_TRUE(run(o, *executor, records).is_ok());
  for (const Record& r : records) {
    SCOPED_TRACE(r.variant + " " + std::to_string(r.m));
    ASSERT_TRUE(r.ratio_to_anchor.has_value());
    const char* expected_anchor = r.threads == 1 ? "openblas_sgemm_1t" : "openblas_sgemm";
    if (r.threads == 1 || r.threads == 0) {
      EXPECT_EQ(r.anchor_variant, expected_anchor);
    }
    const Record* anchor = nullptr;
    for (const Record& a : records)
      if (a.variant == r.anchor_variant && a.m == r.m && a.n == r.n && a.k == r.k) anchor = &a;
    ASSERT_NE(anchor, nullptr);
    EXPECT_TRUE(anchor->anchor);
    EXPECT_DOUBLE_EQ(*r.ratio_to_anchor, anchor->timing.median_ms / r.timing.median_ms);
    if (r.anchor) {
      EXPECT_EQ(r.anchor_variant, r.variant);
    }
  }
}

TEST(Harness, VerifyOnlyRunIsNotTimed) {
  gemmlab::testing::Seeds seeds;
  Options o = quick_options(seeds.next());
  SCOPED_TRACE(seeds.describe(o.seed));
  o.time = false;
  o.variants = {"naive"};
  o.beta = 0.0;  // C poisoned with NaN: every element must be written
  const auto executor = make_cpu_executor();
  std::vector<Record> records;
  ASSERT_TRUE(run(o, *executor, records).is_ok());
  ASSERT_EQ(records.size(), o.shapes.size());
  for (const Record& r : records) {
    EXPECT_EQ(r.variant, "naive");
    EXPECT_TRUE(r.verified);
    EXPECT_TRUE(r.verification.passed) << r.verification.summary();
    EXPECT_FALSE(r.timed);
    EXPECT_FALSE(r.ratio_to_anchor.has_value());
  }
}

TEST(Harness, UnknownVariantIsInvalidValue) {
  Options o = quick_options(gemmlab::testing::Seeds().next());
  o.variants = {"naive", "no_such_rung"};
  const auto executor = make_cpu_executor();
  std::vector<Record> records;
  const Status s = run(o, *executor, records);
  EXPECT_EQ(s.code(), StatusCode::InvalidValue);
  EXPECT_TRUE(contains(s.message(), "'no_such_rung'"));
  EXPECT_TRUE(records.empty());
}

// A 16-bit C the CPU cannot compute is refused before anything is allocated, naming both
// flags; the jobs on host operands keep C in float32 and say so.
TEST(Harness, HalfPrecisionCIsRefusedWhereNoRungStoresIt) {
  Options o = quick_options(gemmlab::testing::Seeds().next());
  o.dtype = o.out_dtype = DType::BF16;
  const auto executor = make_cpu_executor();
  std::vector<Record> records;
  Status s = run(o, *executor, records);
  EXPECT_EQ(s.code(), StatusCode::InvalidValue);
  EXPECT_TRUE(contains(s.message(), "--dtype bf16 --out-dtype bf16")) << s.message();
  o.dtype = DType::F32;
  s = run(o, *executor, records);
  EXPECT_TRUE(contains(s.message(), "--out-dtype bf16 goes with --dtype bf16, e4m3 or e5m2 only")) << s.message();
  EXPECT_TRUE(records.empty());
  o.dtype = DType::BF16;
  s = check_host_job_types(o, "--out-of-core");
  EXPECT_EQ(s.code(), StatusCode::InvalidValue);
  EXPECT_TRUE(contains(s.message(), "--out-of-core keeps C in float32")) << s.message();
  o.out_dtype = DType::F32;
  EXPECT_TRUE(check_host_job_types(o, "--out-of-core").is_ok());
}

// FP8: no CPU rung computes it (as none computes bf16), an FP8 C is refused in so many words,
// and the jobs on host operands do not take FP8 inputs at all.
TEST(Harness, Fp8IsRefusedWhereNothingComputesIt) {
  Options o = quick_options(gemmlab::testing::Seeds().next());
  const auto executor = make_cpu_executor();
  std::vector<Record> records;
  for (const DType type : {DType::E4M3, DType::E5M2}) {
    o.dtype = type;
    o.out_dtype = DType::F32;
    Status s = run(o, *executor, records);
    EXPECT_EQ(s.code(), StatusCode::InvalidValue);
    EXPECT_TRUE(contains(s.message(), fmt::format("--dtype {0}: the cpu backend has no {0} variant", to_string(type))))
        << s.message();
    o.out_dtype = DType::BF16;
    s = run(o, *executor, records);
    EXPECT_TRUE(contains(s.message(), fmt::format("--dtype {} --out-dtype bf16: the cpu backend has no variant",
                                                  to_string(type))))
        << s.message();
    o.out_dtype = type;
    s = run(o, *executor, records);
    EXPECT_EQ(s.code(), StatusCode::InvalidValue);
    EXPECT_TRUE(contains(s.message(), "C in e4m3/e5m2 is not supported")) << s.message();
    o.out_dtype = DType::F32;
    for (const char* job : {"--out-of-core", "--gpus 2"}) {
      s = check_host_job_types(o, job);
      EXPECT_EQ(s.code(), StatusCode::InvalidValue);
      EXPECT_TRUE(contains(s.message(), fmt::format("{} does not take --dtype {}", job, to_string(type))))
          << s.message();
    }
  }
  EXPECT_TRUE(records.empty());
}

// An FP8 run's records carry the scales its operands were quantised with, and the JSON
// results say them; other dtypes' results have no scales.
TEST(Report, Fp8ResultsCarryTheirScales) {
  RunContext context;
  context.command = "bench";
  context.backend = "cuda";
  Record fp8 = shape_record(context.options, {4, 4, 4});
  fp8.dtype = "e4m3";
  fp8.scale_a = 0.0025;
  fp8.scale_b = 0.5;
  Record f32 = shape_record(context.options, {4, 4, 4});
  const nlohmann::json doc = to_json({fp8, f32}, context);
  const nlohmann::json& results = doc.at("results");
  EXPECT_EQ(results.at(0).at("scale_a").get<double>(), 0.0025);
  EXPECT_EQ(results.at(0).at("scale_b").get<double>(), 0.5);
  EXPECT_FALSE(results.at(1).contains("scale_a"));
  EXPECT_TRUE(contains(format_table({fp8}, context), "scale_a=0.0025 scale_b=0.5"));
}

Record timed_record(const std::string& variant, bool anchor, int threads, std::int64_t size,
                    double median_ms) {
  Record r;
  r.backend = "cpu";
  r.variant = variant;
  r.anchor = anchor;
  r.threads = threads;
  r.m = r.n = r.k = size;
  r.trans = "NN";
  r.layout = "row";
  r.timed = true;
  r.timing.median_ms = median_ms;
  return r;
}

TEST(AnchorRatios, PairsEachRecordWithTheAnchorOfItsShapeAndThreads) {
  std::vector<Record> records = {
      timed_record("blas_1t", true, 1, 64, 2.0),  timed_record("blas", true, 0, 64, 1.0),
      timed_record("slow", false, 1, 64, 8.0),    timed_record("threaded", false, 0, 64, 0.5),
      timed_record("other_shape", false, 1, 32, 1.0), timed_record("untimed", false, 1, 64, 1.0),
      timed_record("other_layout", false, 1, 64, 4.0), timed_record("gpu", false, 1, 64, 4.0),
  };
  records[5].timed = false;
  records[6].layout = "col";
  records[7].backend = "cuda";
  attach_anchor_ratios(records);
  EXPECT_EQ(records[2].anchor_variant, "blas_1t");
  EXPECT_DOUBLE_EQ(*records[2].ratio_to_anchor, 0.25);
  EXPECT_EQ(records[3].anchor_variant, "blas");
  EXPECT_DOUBLE_EQ(*records[3].ratio_to_anchor, 2.0);
  EXPECT_DOUBLE_EQ(*records[0].ratio_to_anchor, 1.0);
  for (std::size_t i : {4u, 5u, 6u, 7u}) {
    EXPECT_FALSE(records[i].ratio_to_anchor.has_value()) << records[i].variant;
    EXPECT_TRUE(records[i].anchor_variant.empty()) << records[i].variant;
  }
}

TEST(AnchorRatios, IgnoresAnAnchorThatWasNotTimed) {
  std::vector<Record> records = {timed_record("blas", true, 1, 64, 2.0),
                                 timed_record("rung", false, 1, 64, 4.0)};
  records[0].timed = false;
  attach_anchor_ratios(records);
  EXPECT_FALSE(records[1].ratio_to_anchor.has_value());
}

}  // namespace
}  // namespace gemmlab::bench
