// The register-only FMA peak kernel (cpu/fma_peak.hpp): every ISA's kernel computes its
// closed form, the check catches a wrong value, the options are validated, the ISA cap is
// honoured, and the measured peak is positive with all cores not below one thread. The
// rate itself is not asserted: a benchmark is not a test.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cpu/machine/fma_peak.hpp"
#include "cpu/thread_pool.hpp"

namespace gemmlab::cpu {
namespace {

// Short repetitions: the tests check what the measurement reports, not how fast it is.
FmaPeakOptions quick(int threads) {
  FmaPeakOptions o;
  o.threads = threads;
  o.seconds_per_rep = 0.01;
  o.reps = 3;
  return o;
}

// A kernel's start values (distinct, as the driver's) and room for its results.
struct Chains {
  std::vector<float> start, out;
  explicit Chains(const FmaPeakKernel& kernel)
      : start(static_cast<std::size_t>(kernel.values())), out(start.size(), -1.0f) {
    for (std::size_t i = 0; i < start.size(); ++i) start[i] = static_cast<float>(3 * i + 1);
  }
  void run(const FmaPeakKernel& kernel, std::int64_t steps) { kernel.fn(steps, 1.0f, 1.0f, start.data(), out.data()); }
};

class FmaPeakKernelTest : public ::testing::TestWithParam<Isa> {};

TEST_P(FmaPeakKernelTest, ComputesTheClosedFormAndTheCheckCatchesAPlantedError) {
  const Isa isa = GetParam();
  if (cpu_features().widest < isa)
    GTEST_SKIP() << "this CPU lacks " << to_string(isa) << " (widest: " << to_string(cpu_features().widest)
                 << "); that peak kernel is not exercised";
  const FmaPeakKernel& kernel = fma_peak_kernel(isa);
  ASSERT_EQ(kernel.isa, isa);
  ASSERT_EQ(kernel.chains, kFmaPeakChains);
  ASSERT_LE(kernel.values(), kFmaPeakMaxValues);
  Chains chains(kernel);
  for (const std::int64_t steps : {0, 1, 7, 1000, 1 << 20}) {
    SCOPED_TRACE(std::string(kernel.name) + " steps=" + std::to_string(steps));
    chains.run(kernel, steps);
    EXPECT_TRUE(check_fma_chains(chains.start, chains.out, steps).is_ok())
        << check_fma_chains(chains.start, chains.out, steps).describe();
  }
  // One wrong lane in the last chain, then one in the first: each is caught and named.
  for (const std::size_t wrong : {chains.out.size() - 1, std::size_t{0}}) {
    chains.run(kernel, 100);
    chains.out[wrong] += 1.0f;
    const Status s = check_fma_chains(chains.start, chains.out, 100);
    EXPECT_EQ(s.code(), StatusCode::InternalError) << s.describe();
    EXPECT_NE(s.message().find("value " + std::to_string(wrong) + " "), std::string::npos) << s.message();
  }
  // The wrong number of steps is caught as well (a kernel that skipped one).
  chains.run(kernel, 99);
  EXPECT_EQ(check_fma_chains(chains.start, chains.out, 100).code(), StatusCode::InternalError);
}

INSTANTIATE_TEST_SUITE_P(EachIsa, FmaPeakKernelTest, ::testing::Values(Isa::Avx512, Isa::Avx2, Isa::Portable),
                         [](const ::testing::TestParamInfo<Isa>& param) { return std::string(to_string(param.param)); });

TEST(FmaPeakCheck, RefusesStepsBeyondExactFloatAndMismatchedSizes) {
  const std::vector<float> start{0.0f, 1.0f}, out{16777216.0f, 16777217.0f};
  EXPECT_EQ(check_fma_chains(start, out, std::int64_t{1} << 24).code(), StatusCode::InvalidValue);
  EXPECT_EQ(check_fma_chains(start, out, -1).code(), StatusCode::InvalidValue);
  EXPECT_EQ(check_fma_chains(start, std::vector<float>{1.0f}, 1).code(), StatusCode::InvalidValue);
}

TEST(FmaPeakMeasure, BadOptionsAreInvalidValues) {
  FmaPeak peak;
  for (const int threads : {0, -1, usable_cores() + 1}) {
    const Status s = measure_fma_peak(quick(threads), peak);
    EXPECT_EQ(s.code(), StatusCode::InvalidValue) << threads;
    EXPECT_NE(s.message().find("threads"), std::string::npos) << s.message();
  }
  FmaPeakOptions o = quick(1);
  o.reps = 0;
  EXPECT_EQ(measure_fma_peak(o, peak).code(), StatusCode::InvalidValue);
  o = quick(1);
  o.seconds_per_rep = 0;
  EXPECT_EQ(measure_fma_peak(o, peak).code(), StatusCode::InvalidValue);
}

TEST(FmaPeakMeasure, AKernelTheCpuLacksIsNotSupported) {
  if (cpu_features().widest == Isa::Avx512)
    GTEST_SKIP() << "this CPU has every ISA path; no kernel is unsupported here";
  FmaPeak peak;
  EXPECT_EQ(measure_fma_peak(kAvx512FmaPeak, quick(1), peak).code(), StatusCode::NotSupported);
}

TEST(FmaPeakMeasure, FollowsTheIsaCap) {
  const Isa previous = cpu_features().limit;
  set_isa_limit(Isa::Portable);
  FmaPeak peak;
  const Status s = measure_fma_peak(quick(1), peak);
  set_isa_limit(previous);
  ASSERT_TRUE(s.is_ok()) << s.describe();
  EXPECT_EQ(peak.isa, Isa::Portable);
  EXPECT_EQ(std::string(peak.kernel), kPortableFmaPeak.name);
}

TEST(FmaPeakMeasure, PositiveAndAllCoresNotBelowOneThread) {
  FmaPeak one, all;
  ASSERT_TRUE(measure_fma_peak(quick(1), one).is_ok());
  ASSERT_TRUE(measure_fma_peak(quick(usable_cores()), all).is_ok());
  EXPECT_EQ(one.isa, cpu_features().best_isa());
  EXPECT_EQ(one.threads, 1);
  EXPECT_EQ(all.threads, usable_cores());
  EXPECT_GT(one.gflops, 0.0);
  EXPECT_GE(one.gflops, one.min_gflops);
  EXPECT_LE(one.gflops, one.max_gflops);
  EXPECT_EQ(one.reps, 3);
  EXPECT_GT(one.steps_per_thread, 0);
  // On a machine shared with other work, a core taken by another process slows the team to
  // its slowest thread: the team can fall to one thread's rate, but not far below it.
  constexpr double kNoise = 0.5;
  EXPECT_GE(all.gflops, kNoise * one.gflops) << "1 thread " << one.gflops << ", " << all.threads << " threads "
                                             << all.gflops << " GFLOP/s";
}

}  // namespace
}  // namespace gemmlab::cpu
