// gemmlab::Context and gemm(context, problem, options): contexts own everything a run keeps,
// so two of them on two threads compute at the same time, correctly; options name a rung, a
// configuration or auto; errors come back as a Status naming the problem.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gemmlab/gemm.hpp"
#include "support/assertions.hpp"
#include "support/context.hpp"
#include "support/host_problem.hpp"
#include "support/seeds.hpp"

namespace gemmlab {
namespace {

using testing::HostProblem;
using testing::make_host_problem;
using testing::ProblemSpec;

// Runs `options` on a fresh problem in `context` and checks it against the float64 reference.
void run_and_verify(Context& context, const ProblemSpec& spec, const GemmOptions& options) {
  HostProblem hp = make_host_problem(spec);
  ReferenceResult reference;
  ASSERT_TRUE(testing::host_reference(hp, reference).is_ok());
  const Status s = gemm(context, hp.problem, options);
  ASSERT_TRUE(s.is_ok()) << s.describe();
  const Verification v = testing::verify_result(hp, hp.c.storage, reference);
  EXPECT_TRUE(v.passed) << options.variant << ": " << v.summary();
}

TEST(Context, CpuContextHasNoDeviceAndNoStream) {
  std::unique_ptr<Context> context = testing::make_context();
  ASSERT_NE(context, nullptr);
  EXPECT_EQ(context->backend(), Backend::Cpu);
  EXPECT_EQ(context->device(), -1);
  EXPECT_EQ(context->stream(), nullptr);
}

TEST(Context, AnSmCountTargetIsKeptAndZeroOrLessMeansEverySm) {
  std::unique_ptr<Context> context = testing::make_context(Backend::Cpu);
  ASSERT_NE(context, nullptr);
  EXPECT_EQ(context->sm_count_target(), 0);
  context->set_sm_count_target(128);
  EXPECT_EQ(context->sm_count_target(), 128);
  context->set_sm_count_target(-3);
  EXPECT_EQ(context->sm_count_target(), 0);
}

TEST(Context, NegativeThreadsAreRefusedByName) {
  std::unique_ptr<Context> context;
  const Status s = Context::create({.backend = Backend::Cpu, .threads = -2}, context);
  EXPECT_EQ(s.code(), StatusCode::InvalidValue);
  EXPECT_TRUE(testing::contains(s.message(), "threads")) << s.message();
  EXPECT_EQ(context, nullptr);
}

TEST(Context, CudaContextWithoutADeviceSaysWhy) {
  if (cuda_device_present()) GTEST_SKIP() << "SKIPPED: a CUDA device is present (tests/gpu covers it)";
  std::unique_ptr<Context> context;
  const Status s = Context::create({.backend = Backend::Cuda}, context);
  EXPECT_EQ(s.code(), StatusCode::NotSupported) << s.describe();
  EXPECT_FALSE(s.message().empty());
  EXPECT_EQ(context, nullptr);
}

TEST(Context, AutoRunsAVerifiedRung) {
  testing::Seeds seeds;
  std::unique_ptr<Context> context = testing::make_context();
  for (const ProblemSpec& spec : {ProblemSpec{.m = 67, .n = 45, .k = 33, .seed = seeds.next()},
                                  ProblemSpec{.m = 1, .n = 300, .k = 1, .op_a = Op::T, .beta = 0.5, .seed = seeds.next()},
                                  ProblemSpec{.m = 129, .n = 3, .k = 257, .op_b = Op::T, .layout = Layout::ColMajor,
                                              .ld_padding = 2, .alpha = -0.5, .seed = seeds.next()}}) {
    SCOPED_TRACE(spec.describe() + ", " + seeds.describe(spec.seed));
    run_and_verify(*context, spec, {});
  }
}

TEST(Context, AutoChoosesOneOfGemmlabsOwnRungs) {
  std::unique_ptr<Context> context = testing::make_context();
  HostProblem hp = make_host_problem({.m = 64, .n = 64, .k = 64, .seed = testing::Seeds().next()});
  Variant chosen;
  ASSERT_TRUE(resolve_variant(*context, hp.problem, {}, chosen).is_ok());
  EXPECT_FALSE(chosen.anchor) << chosen.name;
  EXPECT_EQ(chosen.backend, Backend::Cpu);
  EXPECT_NE(find_variant(Backend::Cpu, chosen.name), nullptr) << chosen.name;
}

TEST(Context, NamedRungAndConfigurationRun) {
  testing::Seeds seeds;
  std::unique_ptr<Context> context = testing::make_context();
  const ProblemSpec spec{.m = 50, .n = 70, .k = 90, .beta = -1.0, .seed = seeds.next()};
  SCOPED_TRACE(seeds.describe(spec.seed));
  run_and_verify(*context, spec, {.variant = "register_tiled"});
  run_and_verify(*context, spec, {.variant = "packed_simd", .config = "KC=64,MC=48"});
}

TEST(Context, BadOptionsAreStatusesNamingThem) {
  std::unique_ptr<Context> context = testing::make_context();
  HostProblem hp = make_host_problem({.m = 4, .n = 4, .k = 4, .seed = testing::Seeds().next()});
  const std::vector<float> c_before = hp.c.storage;

  Status s = gemm(*context, hp.problem, {.variant = "no_such_rung"});
  EXPECT_EQ(s.code(), StatusCode::NotFound);
  EXPECT_TRUE(testing::contains(s.message(), "no_such_rung")) << s.message();

  s = gemm(*context, hp.problem, {.variant = "packed_simd", .config = "no_such_config"});
  EXPECT_EQ(s.code(), StatusCode::InvalidValue);
  EXPECT_TRUE(testing::contains(s.message(), "no_such_config")) << s.message();

  s = gemm(*context, hp.problem, {.variant = "auto", .config = "KC=64"});
  EXPECT_EQ(s.code(), StatusCode::InvalidValue);
  EXPECT_TRUE(testing::contains(s.message(), "auto")) << s.message();
  EXPECT_TRUE(testing::bitwise_equal(c_before, hp.c.storage));
}

TEST(Context, AVariantOfAnotherBackendIsRefused) {
  const auto cuda = variants(Backend::Cuda);
  if (cuda.empty()) GTEST_SKIP() << "SKIPPED: this build has no CUDA variants";
  std::unique_ptr<Context> context = testing::make_context();
  HostProblem hp = make_host_problem({.m = 4, .n = 4, .k = 4, .seed = testing::Seeds().next()});
  const Status s = gemm(*context, hp.problem, cuda.front());
  EXPECT_EQ(s.code(), StatusCode::InvalidValue);
  EXPECT_TRUE(testing::contains(s.message(), "cpu backend")) << s.message();
}

// Each thread its own context, the threaded rung (a team and packing buffers per context)
// and the packed one, at once; every result verified.
TEST(Context, TwoContextsOnTwoThreadsComputeAtTheSameTime) {
  testing::Seeds seeds;
  constexpr int kThreads = 2, kRounds = 6;
  std::vector<std::uint64_t> thread_seeds;
  for (int t = 0; t < kThreads; ++t) thread_seeds.push_back(seeds.next());
  SCOPED_TRACE(seeds.describe(thread_seeds.front()));
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::unique_ptr<Context> context;
      if (!Context::create({.backend = Backend::Cpu, .threads = 2}, context)) {
        failures[t] = "context";
        return;
      }
      for (int round = 0; round < kRounds; ++round) {
        // Sizes differ between rounds and threads, so workspaces grow while the other runs.
        const std::int64_t m = 96 + 37 * round + 11 * t, n = 80 + 23 * t, k = 150 + 41 * round;
        HostProblem hp = make_host_problem(
            {.m = m, .n = n, .k = k, .beta = 0.5, .seed = thread_seeds[t] + static_cast<std::uint64_t>(round)});
        ReferenceResult reference;
        if (!testing::host_reference(hp, reference)) {
          failures[t] = "reference";
          return;
        }
        const char* rung = round % 2 ? "packed_simd" : "threaded";
        if (const Status s = gemm(*context, hp.problem, {.variant = rung}); !s) {
          failures[t] = s.describe();
          return;
        }
        const Verification v = testing::verify_result(hp, hp.c.storage, reference);
        if (!v.passed) {
          failures[t] = std::string(rung) + " round " + std::to_string(round) + ": " + v.summary();
          return;
        }
      }
    });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

}  // namespace
}  // namespace gemmlab
