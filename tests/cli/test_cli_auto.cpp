// gemmlab bench --variants auto: the rung the library chooses for each shape, verified and
// timed beside the others under the name auto, with what it chose; and --shapes, the named
// shape sets auto's rules were measured on.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "cli/cli_test.hpp"

namespace gemmlab::testing {
namespace {

using nlohmann::json;

TEST(CliAuto, BenchRunsWhatAutoChoosesAndSaysWhat) {
  const ProgramRun run = gemmlab({"bench", "--backend", "cpu", "--variants", "auto,packed_simd", "--mnk",
                                  "48x40x33,1x130x7", "--reps", "3", "--min-time", "0", "--format", "json"});
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  const json doc = json::parse(run.out);
  int autos = 0;
  for (const json& r : doc.at("results")) {
    if (r.at("variant") != "auto") continue;
    ++autos;
    EXPECT_EQ(r.at("status"), "ok") << r.dump(2);
    EXPECT_EQ(r.at("anchor"), false);
    EXPECT_EQ(r.at("verification").at("passed"), true) << r.dump(2);
    EXPECT_EQ(r.at("technique").get<std::string>().rfind("auto chose ", 0), 0u) << r.dump(2);
    EXPECT_GT(r.at("gflops").get<double>(), 0.0);
  }
  EXPECT_EQ(autos, 2) << explain(run);
}

TEST(CliAuto, AutoTakesNoConfiguration) {
  const ProgramRun run = gemmlab({"bench", "--backend", "cpu", "--variants", "auto", "--config", "KC=64", "--sizes",
                                  "32", "--dry-run"});
  EXPECT_EQ(run.exit_code, 2) << explain(run);
  EXPECT_NE(run.err.find("auto"), std::string::npos) << explain(run);
}

TEST(CliShapes, LlmIsTheTwentyProjectionsOfAn8BTransformer) {
  const ProgramRun run = gemmlab({"bench", "--backend", "cpu", "--variants", "naive", "--shapes", "llm", "--trans",
                                  "NT", "--dry-run"});
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  for (const char* shape : {"1x4096x4096", "16x1024x4096", "512x14336x4096", "4096x4096x14336"})
    EXPECT_NE(run.out.find(shape), std::string::npos) << shape << "\n" << explain(run);
}

TEST(CliShapes, AnUnknownSetIsAUsageErrorListingTheNames) {
  const ProgramRun run = gemmlab({"bench", "--backend", "cpu", "--shapes", "nope"});
  EXPECT_EQ(run.exit_code, 2) << explain(run);
  EXPECT_NE(run.err.find("llm"), std::string::npos) << explain(run);
  const ProgramRun both = gemmlab({"bench", "--backend", "cpu", "--shapes", "llm", "--sizes", "64"});
  EXPECT_EQ(both.exit_code, 2) << explain(both);
}

}  // namespace
}  // namespace gemmlab::testing
