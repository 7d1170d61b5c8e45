// gemmlab bench --out-of-core and explain --out-of-core: usage errors named without a GPU;
// on a GPU, a small run whose every result is verified and whose JSON carries the schedule,
// its model and the host link, and a host refusal before anything is allocated.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "cli/cli_test.hpp"

namespace gemmlab::testing {
namespace {

constexpr int kExitOk = 0, kExitFailure = 1, kExitUsage = 2;

bool cuda_usable() {
  const ProgramRun run = gemmlab({"list", "--backend", "cuda"});
  return run.exit_code == 0 && run.out.find("not in this build") == std::string::npos &&
         run.out.find("no CUDA device") == std::string::npos;
}

void expect_usage_error(const std::vector<std::string>& args, const std::string& says) {
  const ProgramRun run = gemmlab(args);
  EXPECT_EQ(run.exit_code, kExitUsage) << explain(run);
  EXPECT_NE(run.err.find(says), std::string::npos) << explain(run);
  EXPECT_TRUE(run.out.empty()) << explain(run);
}

TEST(CliOutOfCore, UsageErrorsAreNamed) {
  expect_usage_error({"bench", "--xt-block-dims", "4096"}, "--xt-block-dims requires --out-of-core");
  expect_usage_error({"bench", "--backend", "cpu", "--device-memory-limit", "25%"},
                     "a share of the problem applies to --out-of-core");
  expect_usage_error({"bench", "--backend", "cpu", "--out-of-core"}, "it needs --backend cuda");
  expect_usage_error({"explain", "pipelined", "--backend", "cpu", "--out-of-core"}, "it needs --backend cuda");
  expect_usage_error({"bench", "--out-of-core", "--profile"}, "excludes");
}

TEST(CliOutOfCoreGpu, BadValuesOnAGpuAreNamed) {
  if (!cuda_usable()) GTEST_SKIP() << "SKIPPED: no CUDA device";
  expect_usage_error({"bench", "--backend", "cuda", "--out-of-core", "--device-memory-limit", "0%"},
                     "above 0% and at most 100%");
  expect_usage_error({"bench", "--backend", "cuda", "--out-of-core", "--dtype", "bf16", "--xt-block-dims", "4096"},
                     "cublasXt has float32 GEMM only");
  expect_usage_error({"bench", "--backend", "cuda", "--out-of-core", "--xt-block-dims", "-3"}, "a whole number");
  expect_usage_error({"bench", "--backend", "cuda", "--out-of-core", "--variants", "nope"}, "no cuda variant named");
}

TEST(CliOutOfCoreGpu, ASmallRunIsVerifiedAndRecordsItsSchedule) {
  if (!cuda_usable()) GTEST_SKIP() << "SKIPPED: no CUDA device";
  const ProgramRun run =
      gemmlab({"bench", "--backend", "cuda", "--out-of-core", "--mnk", "1000x1100x900", "--trans", "TN", "--beta",
               "0.5", "--device-memory-limit", "35%", "--variants", "pipelined", "--xt-block-dims", "0,512", "--reps",
               "2", "--warmup", "0", "--min-time", "0", "--format", "json"});
  ASSERT_EQ(run.exit_code, kExitOk) << explain(run);
  const nlohmann::json doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc["command"], "bench --out-of-core");
  EXPECT_GT(doc["host_link"]["h2d_bytes_per_second"].get<double>(), 0);
  int modes[3] = {0, 0, 0};
  for (const auto& r : doc["results"]) {
    ASSERT_EQ(r["status"], "ok") << r.dump();
    EXPECT_TRUE(r["verification"]["passed"].get<bool>()) << r.dump();
    EXPECT_EQ(r["verification"]["mode"], "sampled");
    const std::string mode = r["out_of_core"]["mode"];
    if (mode == "out_of_core") {
      ++modes[0];
      const auto& plan = r["out_of_core"]["plan"];
      EXPECT_LE(plan["device_bytes"].get<double>(), r["out_of_core"]["device_memory_limit"].get<double>());
      EXPECT_GT(plan["tiles_m"].get<int>() * plan["tiles_n"].get<int>() * plan["blocks_k"].get<int>(), 1);
      EXPECT_GT(r["out_of_core"]["model"]["bound_ms"].get<double>(), 0);
      // What the model measured beside the block products: strided copies at each row
      // length, both ways, and the rung's tile overhead.
      const auto& model = r["out_of_core"]["model"];
      EXPECT_GE(model["tile_overhead_k"].get<double>(), 0);
      const auto& strided = model["strided_beside_products"];
      const std::size_t points = strided["row_bytes"].size();
      EXPECT_GE(points, 4u) << model.dump();
      for (const char* operand : {"a", "b", "c"})
        for (const char* way : {"h2d_bytes_per_second", "d2h_bytes_per_second"}) {
          const auto& rates = strided[operand][way];
          ASSERT_EQ(rates.size(), points) << model.dump();
          for (const auto& rate : rates) EXPECT_GT(rate.get<double>(), 0) << operand << " " << way;
        }
    } else if (mode == "in_core") {
      ++modes[1];
    } else if (mode == "cublasxt") {
      ++modes[2];
      EXPECT_TRUE(r.contains("ratio_to_anchor"));
    }
  }
  EXPECT_EQ(modes[0], 1);
  EXPECT_EQ(modes[1], 1);
  EXPECT_EQ(modes[2], 2);
}

TEST(CliOutOfCoreGpu, AHostTooSmallIsRefusedBeforeAnythingIsAllocated) {
  if (!cuda_usable()) GTEST_SKIP() << "SKIPPED: no CUDA device";
  const ProgramRun run = gemmlab({"bench", "--backend", "cuda", "--out-of-core", "--sizes", "2000000"});
  EXPECT_EQ(run.exit_code, kExitFailure) << explain(run);
  EXPECT_NE(run.err.find("of page-locked host memory for A, B and C"), std::string::npos) << explain(run);
}

}  // namespace
}  // namespace gemmlab::testing
