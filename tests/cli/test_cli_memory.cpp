// Sizes checked before anything is spent: a problem too large for the machine is refused in
// a moment (exit 1, its bytes and what to do, nothing written to --output), --dry-run says what
// a run needs, and --device-memory-limit takes sizes and refuses text that is not one.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_test.hpp"

namespace gemmlab::testing {
namespace {

constexpr int kExitFailure = 1, kExitUsage = 2;
// "Well under a second": the refusal reads /proc/meminfo and does arithmetic.
constexpr double kRefusalSeconds = 1.0;
// 4 TB a matrix: larger than the host memory of any machine these tests run on.
const std::string kHuge = "1000000x1000000x1000000";

struct TimedRun {
  ProgramRun run;
  double seconds = 0;
};

TimedRun timed(const std::vector<std::string>& args) {
  const auto start = std::chrono::steady_clock::now();
  TimedRun t{gemmlab(args), 0};
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return t;
}

bool cuda_usable() {
  const ProgramRun run = gemmlab({"list", "--backend", "cuda"});
  return run.out.find("not in this build") == std::string::npos && run.out.find("no CUDA device") == std::string::npos;
}

void expect_refusal(const TimedRun& t, const std::string& shape) {
  EXPECT_EQ(t.run.exit_code, kExitFailure) << explain(t.run);
  EXPECT_LT(t.seconds, kRefusalSeconds) << explain(t.run);
  EXPECT_TRUE(t.run.out.empty()) << explain(t.run);
  EXPECT_NE(t.run.err.find(shape + " (f32) does not fit in memory here; nothing was allocated"), std::string::npos)
      << explain(t.run);
  EXPECT_NE(t.run.err.find("of host memory (A 8.0 TB"), std::string::npos) << explain(t.run);
  EXPECT_NE(t.run.err.find("available"), std::string::npos) << explain(t.run);
  EXPECT_NE(t.run.err.find("to run it: a smaller problem (--mnk "), std::string::npos) << explain(t.run);
}

TEST(CliMemory, HugeCpuBenchIsRefusedAtOnce) {
  const TimedRun t = timed({"bench", "--backend", "cpu", "--mnk", kHuge});
  expect_refusal(t, kHuge);
  // The seed line first, as for every run, then the refusal.
  EXPECT_EQ(t.run.err.rfind("seed ", 0), 0u) << explain(t.run);
}

TEST(CliMemory, HugeCpuVerifyAndExplainAreRefusedAtOnce) {
  expect_refusal(timed({"verify", "--backend", "cpu", "--mnk", kHuge}), kHuge);
  // explain measures the FMA peak first: the check comes before it.
  const TimedRun t = timed({"explain", "naive", "--backend", "cpu", "--mnk", kHuge});
  expect_refusal(t, kHuge);
  EXPECT_NE(t.run.err.find("\ngemmlab explain: "), std::string::npos) << explain(t.run);
}

TEST(CliMemory, RefusalLeavesTheOutputAlone) {
  const ScratchDir dir;
  const std::filesystem::path fresh = dir.path() / "fresh.json", old = dir.path() / "old.json";
  std::ofstream(old) << "old report\n";
  for (const auto& path : {fresh, old}) {
    const TimedRun t = timed({"bench", "--backend", "cpu", "--sizes", "64,1000000", "--format", "json", "--output",
                              path.string()});
    expect_refusal(t, "1000000x1000000x1000000");
  }
  EXPECT_FALSE(std::filesystem::exists(fresh));
  EXPECT_EQ(read_file(old), "old report\n");
  // No temporary left beside them either.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1u);
}

TEST(CliMemory, DryRunSaysWhatARunNeeds) {
  const ProgramRun run = gemmlab({"bench", "--backend", "cpu", "--mnk", "100x200x300", "--dry-run"});
  EXPECT_EQ(run.exit_code, 0) << explain(run);
  EXPECT_NE(run.out.find("100x200x300 needs "), std::string::npos) << explain(run);
  EXPECT_NE(run.out.find("of host memory"), std::string::npos) << explain(run);
  EXPECT_NE(run.out.find("verified in full"), std::string::npos) << explain(run);
  // And a dry run of what cannot fit says so, as the run would.
  const ProgramRun huge = gemmlab({"bench", "--backend", "cpu", "--mnk", kHuge, "--dry-run"});
  EXPECT_EQ(huge.exit_code, kExitFailure) << explain(huge);
  EXPECT_NE(huge.out.find("verified at a sample of C"), std::string::npos) << explain(huge);
  EXPECT_NE(huge.err.find("does not fit"), std::string::npos) << explain(huge);
}

TEST(CliMemory, JsonRecordsThePlanAndTheVerification) {
  const ProgramRun run = gemmlab(quick({"bench", "--backend", "cpu", "--sizes", "32", "--variants", "naive",
                                        "--format", "json", "--seed", "3"}));
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  const nlohmann::json doc = nlohmann::json::parse(run.out);
  const nlohmann::json& memory = doc.at("memory");
  EXPECT_TRUE(memory.at("host_available").is_number()) << memory.dump();
  ASSERT_EQ(memory.at("shapes").size(), 1u);
  EXPECT_EQ(memory.at("shapes")[0].at("verification"), "full");
  EXPECT_GT(memory.at("shapes")[0].at("host_bytes").get<std::uint64_t>(), 32u * 32u * 4u);
  EXPECT_FALSE(memory.contains("device_available"));  // a CPU run
  EXPECT_FALSE(doc.at("settings").contains("device_memory_limit"));
  EXPECT_EQ(doc.at("results")[0].at("verification").at("mode"), "full");
}

TEST(CliMemory, DeviceMemoryLimitThatIsNotASizeIsAUsageError) {
  for (const char* bad : {"lots", "8Q", "-1", "0", "1e9", ""}) {
    for (const char* backend : {"cpu", "cuda"}) {
      const ProgramRun run = gemmlab({"bench", "--backend", backend, "--sizes", "16", "--device-memory-limit", bad});
      EXPECT_EQ(run.exit_code, kExitUsage) << explain(run);
      EXPECT_NE(run.err.find("--device-memory-limit"), std::string::npos) << explain(run);
      EXPECT_TRUE(run.out.empty()) << explain(run);
    }
  }
  const ProgramRun verify = gemmlab({"verify", "--backend", "cuda", "--device-memory-limit", "8X"});
  EXPECT_EQ(verify.exit_code, kExitUsage) << explain(verify);
  const ProgramRun explain_run = gemmlab({"explain", "naive", "--backend", "cuda", "--device-memory-limit", "8X"});
  EXPECT_EQ(explain_run.exit_code, kExitUsage) << explain(explain_run);
}

TEST(CliMemory, DeviceMemoryLimitOnTheCpuIsAUsageError) {
  const ProgramRun run = gemmlab({"bench", "--backend", "cpu", "--sizes", "16", "--device-memory-limit", "8G"});
  EXPECT_EQ(run.exit_code, kExitUsage) << explain(run);
  EXPECT_NE(run.err.find("the cpu backend has none"), std::string::npos) << explain(run);
}

TEST(CliMemory, HelpNamesTheLimit) {
  const ProgramRun run = gemmlab({"bench", "--help"});
  EXPECT_EQ(run.exit_code, 0) << explain(run);
  EXPECT_NE(run.out.find("--device-memory-limit"), std::string::npos) << explain(run);
}

// On a GPU: the cases measured before the check existed, each now refused at once.
TEST(CliMemoryGpu, ProblemsLargerThanTheGpuAreRefusedAtOnce) {
  if (!cuda_usable()) GTEST_SKIP() << "SKIPPED: no CUDA device here";
  const TimedRun f32 = timed({"bench", "--backend", "cuda", "--mnk", "100000x100000x100000"});
  EXPECT_EQ(f32.run.exit_code, kExitFailure) << explain(f32.run);
  EXPECT_LT(f32.seconds, 5.0) << explain(f32.run);  // the CUDA context's start included
  EXPECT_NE(f32.run.err.find("of device memory (A 40.0 GB, B 40.0 GB, C 40.0 GB"), std::string::npos)
      << explain(f32.run);
  const TimedRun bf16 = timed({"bench", "--backend", "cuda", "--dtype", "bf16", "--mnk", "200000x200000x16"});
  EXPECT_EQ(bf16.run.exit_code, kExitFailure) << explain(bf16.run);
  EXPECT_LT(bf16.seconds, 5.0) << explain(bf16.run);
  EXPECT_NE(bf16.run.err.find("200000x200000x16 (bf16) does not fit"), std::string::npos) << explain(bf16.run);
  // A limit below what a small problem needs refuses it, naming the limit.
  const ProgramRun limited =
      gemmlab(quick({"bench", "--backend", "cuda", "--sizes", "4096", "--device-memory-limit", "64M"}));
  EXPECT_EQ(limited.exit_code, kExitFailure) << explain(limited);
  EXPECT_NE(limited.err.find("allowed by --device-memory-limit"), std::string::npos) << explain(limited);
  // A limit it fits runs, and the JSON records it.
  const ProgramRun fits = gemmlab(quick({"bench", "--backend", "cuda", "--sizes", "256", "--variants", "naive",
                                         "--device-memory-limit", "2G", "--format", "json"}));
  ASSERT_EQ(fits.exit_code, 0) << explain(fits);
  const nlohmann::json doc = nlohmann::json::parse(fits.out);
  EXPECT_EQ(doc.at("settings").at("device_memory_limit"), std::uint64_t{2} << 30);
  EXPECT_TRUE(doc.at("memory").at("device_available").is_number());
}

}  // namespace
}  // namespace gemmlab::testing
