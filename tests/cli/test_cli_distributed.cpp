// gemmlab bench --gpus N | --devices LIST and explain --distributed: usage errors named on any
// machine, and a machine that lacks the GPUs said so (exit 1); with two GPUs and NCCL, small
// runs whose every result is verified and whose JSON carries the GPUs, the grid, the bytes
// communicated, the model, the single-GPU anchor and the link between the GPUs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "cli/cli_test.hpp"

namespace gemmlab::testing {
namespace {

constexpr int kExitOk = 0, kExitFailure = 1, kExitUsage = 2;

void expect_usage_error(const std::vector<std::string>& args, const std::string& says) {
  const ProgramRun run = gemmlab(args);
  EXPECT_EQ(run.exit_code, kExitUsage) << explain(run);
  EXPECT_NE(run.err.find(says), std::string::npos) << explain(run);
  EXPECT_TRUE(run.out.empty()) << explain(run);
}

// How many GPUs device --all lists (0 without a GPU or without CUDA).
std::size_t visible_gpus() {
  const ProgramRun run = gemmlab({"device", "--all", "--format", "json"});
  if (run.exit_code != 0) return 0;
  return nlohmann::json::parse(run.out).size();
}

// Empty when the distributed job can run on two GPUs here; otherwise why not.
std::string why_not_two_gpus() {
  const std::size_t gpus = visible_gpus();
  if (gpus < 2) return "SKIPPED: the distributed job needs 2 GPUs; " + std::to_string(gpus) + " visible";
  const ProgramRun run = gemmlab({"bench", "--gpus", "2", "--sizes", "1000", "--dry-run"});
  if (run.exit_code != 0) return "SKIPPED: bench --gpus 2 cannot run here: " + run.err;
  return {};
}

nlohmann::json distributed(const nlohmann::json& result) { return result.at("distributed"); }

TEST(CliDistributed, UsageErrorsAreNamed) {
  expect_usage_error({"bench", "--gpus", "2", "--devices", "0,1"}, "--gpus excludes --devices");
  expect_usage_error({"bench", "--gpus", "0"}, "--gpus '0'");
  expect_usage_error({"bench", "--gpus", "two"}, "--gpus 'two'");
  expect_usage_error({"bench", "--devices", "0,0"}, "--devices");
  expect_usage_error({"bench", "--devices", "0,0"}, "twice");
  expect_usage_error({"bench", "--devices", "x"}, "'x' is not a CUDA device ordinal");
  expect_usage_error({"bench", "--devices", "0,-1"}, "'-1' is not a CUDA device ordinal");
  expect_usage_error({"bench", "--decompositions", "rows"}, "--decompositions requires --gpus or --devices");
  expect_usage_error({"bench", "--placement", "host"}, "--placement requires --gpus or --devices");
  expect_usage_error({"bench", "--gpus", "2", "--decompositions", "diagonal"}, "'diagonal' is not a decomposition");
  expect_usage_error({"bench", "--gpus", "2", "--placement", "disk"}, "'disk' is not a placement");
  expect_usage_error({"bench", "--panel-transport", "broadcasts"}, "--panel-transport requires --gpus or --devices");
  expect_usage_error({"bench", "--gpus", "2", "--panel-transport", "pigeons"}, "'pigeons' is not a transport");
  expect_usage_error({"bench", "--cut", "slices"}, "--cut requires --gpus or --devices");
  expect_usage_error({"bench", "--gpus", "2", "--cut", "diagonal"}, "'diagonal' is not a cut");
  expect_usage_error({"bench", "--gpus", "2", "--cut", "slices", "--panel-width", "512"}, "excludes --panel-width");
  expect_usage_error({"bench", "--gpus", "2", "--backend", "cpu"}, "needs --backend cuda");
  expect_usage_error({"bench", "--gpus", "2", "--device", "1"}, "excludes");
  expect_usage_error({"bench", "--gpus", "2", "--out-of-core"}, "excludes");
  expect_usage_error({"bench", "--gpus", "2", "--explain"}, "excludes");
  expect_usage_error({"bench", "--gpus", "2", "--variants", "pipelined,naive"}, "name one");
  expect_usage_error({"bench", "--gpus", "2", "--pad", "4"}, "does not take --pad");
  expect_usage_error({"bench", "--gpus", "2", "--dtype", "bf16", "--xt-block-dims", "4096"},
                     "cublasXt has float32 GEMM only");
  expect_usage_error({"bench", "--gpus", "2", "--placement", "device", "--xt-block-dims", "4096"},
                     "beside --placement host");
  expect_usage_error({"bench", "--xt-block-dims", "4096"}, "--xt-block-dims requires --out-of-core or --gpus");
  expect_usage_error({"explain", "auto", "--gpus", "2"}, "--gpus requires --distributed");
  expect_usage_error({"explain", "auto", "--distributed"}, "--distributed needs --gpus N or --devices LIST");
  expect_usage_error({"explain", "auto", "--distributed", "--out-of-core", "--gpus", "2"}, "excludes");
}

TEST(CliDistributed, HelpListsTheFlags) {
  const ProgramRun run = gemmlab({"bench", "--help"});
  ASSERT_EQ(run.exit_code, kExitOk) << explain(run);
  for (const char* flag :
       {"--gpus", "--devices", "--decompositions", "--placement", "--panel-transport", "--cut", "--xt-block-dims"})
    EXPECT_NE(run.out.find(flag), std::string::npos) << flag << "\n" << explain(run);
  const ProgramRun explain_help = gemmlab({"explain", "--help"});
  ASSERT_EQ(explain_help.exit_code, kExitOk) << explain(explain_help);
  EXPECT_NE(explain_help.out.find("--distributed"), std::string::npos) << explain(explain_help);
}

// More GPUs than any machine here has: the job cannot run, says what it needs and what is
// there, and writes no report.
TEST(CliDistributed, MoreGpusThanPresentIsSaid) {
  const std::size_t gpus = visible_gpus();
  const ProgramRun run = gemmlab({"bench", "--gpus", "1024", "--sizes", "64"});
  EXPECT_EQ(run.exit_code, kExitFailure) << explain(run);
  EXPECT_NE(run.err.find("--gpus 1024 needs 1024 GPUs"), std::string::npos) << explain(run);
  EXPECT_NE(run.err.find(gpus == 0 ? "no CUDA" : std::to_string(gpus) + " CUDA device"), std::string::npos)
      << explain(run);
  EXPECT_TRUE(run.out.empty()) << explain(run);
}

TEST(CliDistributed, WithoutAGpuTheJobSaysWhatItNeeds) {
  if (visible_gpus() > 0) GTEST_SKIP() << "SKIPPED: this machine has a GPU (the GPU tests below cover it)";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"bench", "--gpus", "2", "--sizes", "64"},
        std::vector<std::string>{"bench", "--devices", "0,1", "--sizes", "64", "--placement", "host"},
        std::vector<std::string>{"explain", "auto", "--distributed", "--gpus", "2", "--mnk", "64x64x64"}}) {
    const ProgramRun run = gemmlab(args);
    EXPECT_EQ(run.exit_code, kExitFailure) << explain(run);
    EXPECT_NE(run.err.find("needs 2 GPUs"), std::string::npos) << explain(run);
    EXPECT_NE(run.err.find("no CUDA"), std::string::npos) << explain(run);
    EXPECT_TRUE(run.out.empty()) << explain(run);
  }
}

// An ordinal past the last is a usage error naming the device count, as --device's is.
TEST(CliDistributedGpu, AnOrdinalPastTheLastIsNamed) {
  const std::size_t gpus = visible_gpus();
  if (gpus == 0) GTEST_SKIP() << "SKIPPED: no CUDA device";
  const std::string past = std::to_string(gpus);
  const ProgramRun run = gemmlab({"bench", "--devices", "0," + past, "--sizes", "64"});
  EXPECT_EQ(run.exit_code, kExitUsage) << explain(run);
  EXPECT_NE(run.err.find("device " + past + " does not exist"), std::string::npos) << explain(run);
  EXPECT_NE(run.err.find(std::to_string(gpus) + " CUDA device"), std::string::npos) << explain(run);
  const ProgramRun more = gemmlab({"bench", "--gpus", std::to_string(gpus + 1), "--sizes", "64"});
  EXPECT_EQ(more.exit_code, kExitFailure) << explain(more);
  EXPECT_NE(more.err.find("needs " + std::to_string(gpus + 1) + " GPUs"), std::string::npos) << explain(more);
}

TEST(CliDistributedGpu, ASmallRunIsVerifiedOnTwoGpusBesideItsAnchors) {
  if (const std::string why = why_not_two_gpus(); !why.empty()) GTEST_SKIP() << why;
  const ProgramRun run = gemmlab({"bench", "--gpus", "2", "--sizes", "1000", "--xt-block-dims", "0,512", "--reps",
                                  "2", "--warmup", "0", "--min-time", "0", "--format", "json"});
  ASSERT_EQ(run.exit_code, kExitOk) << explain(run);
  const nlohmann::json doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc["command"], "bench --distributed");
  EXPECT_EQ(doc["settings"]["gpus"], 2);
  EXPECT_EQ(doc["settings"]["panel_transport"], "copy-engines");
  ASSERT_TRUE(doc["peer_link"].is_object()) << doc["peer_link"].dump();
  EXPECT_GT(doc["peer_link"]["copy_bytes_per_second"].get<double>(), 0);
  EXPECT_GT(doc["peer_link"]["broadcast_algorithm_bytes_per_second"].get<double>(), 0);
  EXPECT_GT(doc["host_link"]["h2d_bytes_per_second"].get<double>(), 0);
  std::map<std::string, int> modes;
  int weak = 0;
  for (const auto& r : doc["results"]) {
    ASSERT_EQ(r["status"], "ok") << r.dump();
    EXPECT_TRUE(r["verification"]["passed"].get<bool>()) << r.dump();
    EXPECT_EQ(r["verification"]["mode"], "sampled") << r.dump();
    EXPECT_EQ(r["verification"]["unwritten"], 0) << r.dump();
    const nlohmann::json d = distributed(r);
    const std::string mode = d["mode"];
    ++modes[mode];
    if (mode == "single_gpu") {
      EXPECT_EQ(d["gpus"], 1) << r.dump();
      continue;
    }
    EXPECT_EQ(d["gpus"], 2) << r.dump();
    EXPECT_EQ(d["devices"], nlohmann::json::array({0, 1})) << r.dump();
    if (mode == "device") {
      // Rows and SUMMA both put two GPUs on a 2x1 grid for a square C: run once.
      EXPECT_EQ(d["grid"], "2x1") << r.dump();
      EXPECT_EQ(d["decomposition"], "rows") << r.dump();
      EXPECT_EQ(d["same_grid_as"], nlohmann::json::array({"summa"})) << r.dump();
      EXPECT_GE(d["panels"].get<int>(), 1) << r.dump();
      EXPECT_GT(d["bytes_received"]["total"].get<double>(), 0) << r.dump();
      EXPECT_EQ(d["wait_seconds"]["per_gpu"].size(), 2u) << r.dump();
      // What ran: the copy engines where NCCL has them (2.28 and later), else broadcasts.
      EXPECT_TRUE(d["panel_transport"] == "copy-engines" || d["panel_transport"] == "broadcasts") << r.dump();
      // The stripe by default where the copy engines move B (row-major, op N), else panels.
      EXPECT_EQ(d["cut"], d["panel_transport"] == "copy-engines" ? "stripe" : "k-panels") << r.dump();
      if (d["cut"] == "stripe") EXPECT_GE(d["lead"].get<int>(), 0) << r.dump();
      EXPECT_GT(d["model"]["model_seconds"].get<double>(), 0) << r.dump();
      EXPECT_GT(d["efficiency"].get<double>(), 0) << r.dump();
      EXPECT_GT(d["t1"]["time_ms"].get<double>(), 0) << r.dump();
      if (d["scaling"] == "weak") {
        ++weak;
        EXPECT_EQ(r["m"], 2000) << r.dump();
      }
    }
    if (mode == "host") {
      EXPECT_TRUE(d.contains("ratio_to_best_cublasxt")) << r.dump();
    }
  }
  EXPECT_EQ(modes["single_gpu"], 1);
  EXPECT_EQ(modes["device"], 2);  // strong and weak
  EXPECT_EQ(weak, 1);
  EXPECT_EQ(modes["host"], 1);
  EXPECT_EQ(modes["cublasxt"], 2);
}

// An odd shape, transposed, beta != 0 and SUMMA alone; and bf16 on device operands.
TEST(CliDistributedGpu, OddShapesAndTypesAreVerified) {
  if (const std::string why = why_not_two_gpus(); !why.empty()) GTEST_SKIP() << why;
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--mnk", "1001x999x77", "--trans", "TN", "--beta", "0.5", "--decompositions", "summa"},
        std::vector<std::string>{"--sizes", "1024", "--dtype", "bf16", "--placement", "device"}}) {
    std::vector<std::string> args = {"bench", "--devices", "0,1", "--reps", "1", "--warmup", "0", "--min-time", "0",
                                     "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const ProgramRun run = gemmlab(args);
    ASSERT_EQ(run.exit_code, kExitOk) << explain(run);
    const nlohmann::json doc = nlohmann::json::parse(run.out);
    int device_runs = 0;
    for (const auto& r : doc["results"]) {
      ASSERT_EQ(r["status"], "ok") << r.dump();
      EXPECT_TRUE(r["verification"]["passed"].get<bool>()) << r.dump();
      if (distributed(r)["mode"] == "device") ++device_runs;
    }
    EXPECT_GE(device_runs, 1) << explain(run);
  }
}

TEST(CliDistributedGpu, ExplainGivesThePlanAndModelWithoutAnchors) {
  if (const std::string why = why_not_two_gpus(); !why.empty()) GTEST_SKIP() << why;
  const ProgramRun run = gemmlab({"explain", "auto", "--distributed", "--gpus", "2", "--mnk", "2048x2048x2048",
                                  "--reps", "1", "--format", "json"});
  ASSERT_EQ(run.exit_code, kExitOk) << explain(run);
  const nlohmann::json doc = nlohmann::json::parse(run.out);
  ASSERT_FALSE(doc["results"].empty());
  for (const auto& r : doc["results"]) {
    const nlohmann::json d = distributed(r);
    EXPECT_EQ(d["mode"], "device") << r.dump();
    EXPECT_FALSE(d.contains("t1")) << r.dump();
    EXPECT_GT(d["model"]["compute_seconds"].get<double>(), 0) << r.dump();
    EXPECT_GT(d["model"]["comm_seconds"].get<double>(), 0) << r.dump();
    EXPECT_GT(d["model"]["local_flops_per_second"].get<double>(), 0) << r.dump();
  }
  const ProgramRun table = gemmlab({"explain", "auto", "--distributed", "--gpus", "2", "--mnk", "2048x2048x2048",
                                    "--reps", "1"});
  ASSERT_EQ(table.exit_code, kExitOk) << explain(table);
  EXPECT_NE(table.out.find("model: compute"), std::string::npos) << explain(table);
}

}  // namespace
}  // namespace gemmlab::testing
