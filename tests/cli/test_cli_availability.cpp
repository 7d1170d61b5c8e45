// Rungs say where they run: `gemmlab list` says per CUDA rung whether it runs on this GPU
// with this build, and why not; bench and verify skip those by name, and naming one with
// --variants is a usage error that says why. Runs on any GPU where some rung cannot run (a
// non-Hopper GPU, or an H100 with a build without 90a); skipped otherwise.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "cli/cli_test.hpp"

namespace gemmlab::testing {
namespace {

// The CUDA rungs `list` reports, or nothing (with the reason in `why`) where it cannot say.
nlohmann::json cuda_listing(std::string& why) {
  const ProgramRun run = gemmlab({"list", "--backend", "cuda", "--format", "json"});
  EXPECT_EQ(run.exit_code, 0) << explain(run);
  nlohmann::json listed = nlohmann::json::parse(run.out, nullptr, false);
  if (listed.is_discarded() || listed.empty()) {
    why = "no CUDA backend in this build";
    return nlohmann::json::array();
  }
  if (!listed.front().contains("runs_here")) {
    why = "no CUDA device on this machine";
    return nlohmann::json::array();
  }
  return listed;
}

// The --dtype a listed rung runs under: its input type, except tf32 math on f32 inputs.
std::string dtype_of(const nlohmann::json& v) {
  const std::string input = v.at("input"), compute = v.at("compute");
  return compute == "tf32" ? "tf32" : input;
}

TEST(CliAvailability, ListSaysWhyARungCannotRunHere) {
  std::string why;
  const nlohmann::json listed = cuda_listing(why);
  if (listed.empty()) GTEST_SKIP() << "SKIPPED: " << why;
  const ProgramRun table = gemmlab({"list", "--backend", "cuda"});
  ASSERT_EQ(table.exit_code, 0) << explain(table);
  EXPECT_NE(table.out.find("runs here"), std::string::npos) << explain(table);
  for (const auto& v : listed) {
    const std::string name = v.at("name");
    SCOPED_TRACE(name);
    if (v.at("runs_here").get<bool>()) {
      EXPECT_FALSE(v.contains("not_here_because"));
      continue;
    }
    const std::string because = v.at("not_here_because");
    EXPECT_FALSE(because.empty());
    EXPECT_NE(table.out.find("runs here: no, " + because), std::string::npos) << explain(table);
    // Every Hopper rung says it needs sm_90a, whether for this GPU or for this build.
    if (!v.at("arch_specific").get<std::string>().empty()) {
      EXPECT_NE(because.find("sm_90a"), std::string::npos) << because;
    }
  }
}

TEST(CliAvailability, NamingARungThatCannotRunHereIsAUsageError) {
  std::string why;
  const nlohmann::json listed = cuda_listing(why);
  if (listed.empty()) GTEST_SKIP() << "SKIPPED: " << why;
  int checked = 0;
  for (const auto& v : listed) {
    if (v.at("runs_here").get<bool>()) continue;
    const std::string name = v.at("name");
    for (const char* command : {"bench", "verify"}) {
      std::vector<std::string> args = {command,     "--backend",   "cuda",          "--variants", name,   "--dtype",
                                       dtype_of(v), "--out-dtype", v.at("output"), "--sizes",    "64"};
      const ProgramRun run = gemmlab(std::string(command) == "bench" ? quick(args) : args);
      EXPECT_EQ(run.exit_code, 2) << explain(run);
      EXPECT_NE(run.err.find(name), std::string::npos) << explain(run);
      EXPECT_NE(run.err.find(v.at("not_here_because").get<std::string>()), std::string::npos) << explain(run);
    }
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "SKIPPED: every CUDA rung runs here";
}

// Without --variants, the rungs that cannot run are skipped by name, the others verified.
TEST(CliAvailability, BenchSkipsWhatCannotRunAndNamesIt) {
  std::string why;
  const nlohmann::json listed = cuda_listing(why);
  if (listed.empty()) GTEST_SKIP() << "SKIPPED: " << why;
  for (const char* dtype : {"f32", "bf16"}) {
    const ProgramRun run = gemmlab({"verify", "--backend", "cuda", "--dtype", dtype, "--sizes", "67", "--format", "json"});
    ASSERT_EQ(run.exit_code, 0) << explain(run);
    for (const auto& v : listed) {
      if (dtype_of(v) != dtype || v.at("output") != "f32") continue;  // (C in f32: no --out-dtype)
      const std::string name = v.at("name");
      EXPECT_NE(run.out.find("\"" + name + "\""), std::string::npos) << name << "\n" << explain(run);
      if (!v.at("runs_here").get<bool>()) {
        EXPECT_NE(run.out.find("cannot run here: " + v.at("not_here_because").get<std::string>()), std::string::npos)
            << name << "\n" << explain(run);
      }
    }
  }
}

}  // namespace
}  // namespace gemmlab::testing
