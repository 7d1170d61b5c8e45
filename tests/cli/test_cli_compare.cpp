// gemmlab compare on committed runs: the H100 SIMT ladder of f1d3bed (pipelined 0.909x /
// 0.917x cuBLAS) against the run of record (0.947x / 0.947x). A reader sees pipelined faster
// and every other rung unchanged; compare must say the same, and fail the reverse.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "cli/cli_test.hpp"

#ifndef GEMMLAB_SOURCE_DIR
#error "GEMMLAB_SOURCE_DIR is set by tests/CMakeLists.txt"
#endif

namespace gemmlab::testing {
namespace {

using nlohmann::json;

const std::string kBefore = std::string(GEMMLAB_SOURCE_DIR) + "/tests/cli/data/h100-ladder-f1d3bed.json";
const std::string kAfter = std::string(GEMMLAB_SOURCE_DIR) + "/results/h100/ladder.json";

json compare_json(const std::string& before, const std::string& after, int expected_exit) {
  const ProgramRun run = gemmlab({"compare", before, after, "--format", "json"});
  EXPECT_EQ(run.exit_code, expected_exit) << explain(run);
  json doc = json::parse(run.out, nullptr, false);
  EXPECT_FALSE(doc.is_discarded()) << explain(run);
  return doc;
}

TEST(CliCompare, TheH100LadderBeforeAndAfterPipelinedTuning) {
  const json doc = compare_json(kBefore, kAfter, 0);
  EXPECT_EQ(doc.at("regressions"), 0);
  int rows = 0;
  for (const json& r : doc.at("rows")) {
    SCOPED_TRACE(r.dump());
    const std::string variant = r.at("variant").get<std::string>();
    if (variant == "pipelined") {
      EXPECT_EQ(r.at("verdict"), "faster");
      EXPECT_EQ(r.at("metric"), "ratio");
      EXPECT_GT(r.at("change").get<double>(), 0.03);
    } else {
      EXPECT_EQ(r.at("verdict"), "same");
    }
    ++rows;
  }
  EXPECT_EQ(rows, 26);  // 13 rungs (the anchor among them) at 4096^3 and 8192^3
}

TEST(CliCompare, TheReverseIsARegressionAndFails) {
  const json doc = compare_json(kAfter, kBefore, 1);
  EXPECT_EQ(doc.at("regressions"), 2);
  for (const json& r : doc.at("rows"))
    EXPECT_EQ(r.at("regression").get<bool>(), r.at("variant") == "pipelined") << r.dump();
  // A looser threshold lets it pass: the gate is the user's to set.
  const ProgramRun loose = gemmlab({"compare", kAfter, kBefore, "--threshold", "5"});
  EXPECT_EQ(loose.exit_code, 0) << explain(loose);
}

TEST(CliCompare, TableAndMarkdownNameTheVerdicts) {
  const ProgramRun table = gemmlab({"compare", kAfter, kBefore});
  EXPECT_EQ(table.exit_code, 1) << explain(table);
  EXPECT_NE(table.out.find("SLOWER"), std::string::npos) << explain(table);
  EXPECT_NE(table.out.find("commit f1d3bed"), std::string::npos) << explain(table);
  EXPECT_NE(table.err.find("2 regression(s)"), std::string::npos) << explain(table);
  const ProgramRun markdown = gemmlab({"compare", kBefore, kAfter, "--format", "markdown"});
  EXPECT_EQ(markdown.exit_code, 0) << explain(markdown);
  EXPECT_NE(markdown.out.find("| `pipelined` | f32 | 4096x4096x4096 | 0.909 | 0.947 |"), std::string::npos)
      << explain(markdown);
}

// Two runs of this machine, with samples: a run against itself is the same everywhere.
TEST(CliCompare, ARunAgainstItselfIsTheSame) {
  const ScratchDir dir;
  const std::string path = (dir.path() / "run.json").string();
  const ProgramRun bench = gemmlab({"bench", "--backend", "cpu", "--variants", "packed_simd,openblas_sgemm_1t",
                                    "--sizes", "48", "--reps", "8", "--min-time", "0", "--format", "json",
                                    "--samples", "--output", path});
  ASSERT_EQ(bench.exit_code, 0) << explain(bench);
  const json doc = compare_json(path, path, 0);
  ASSERT_EQ(doc.at("rows").size(), 2u);
  for (const json& r : doc.at("rows")) {
    EXPECT_EQ(r.at("verdict"), "same") << r.dump();
    EXPECT_NE(r.at("evidence").get<std::string>().find("rank test"), std::string::npos) << r.dump();
  }
}

TEST(CliCompare, ARunOfAnotherCommandIsAUsageError) {
  const ScratchDir dir;
  const std::string path = (dir.path() / "verify.json").string();
  ASSERT_EQ(gemmlab({"verify", "--backend", "cpu", "--mnk", "3x3x3", "--format", "json", "--output", path}).exit_code, 0);
  const ProgramRun run = gemmlab({"compare", path, kAfter});
  EXPECT_EQ(run.exit_code, 2) << explain(run);
  EXPECT_NE(run.err.find("takes bench reports"), std::string::npos) << explain(run);
}

}  // namespace
}  // namespace gemmlab::testing
