// Measurements a user can trust: --output written whole (after a failure and after a signal
// the old file is untouched), repetitions as asked, the cap reported, samples, progress,
// noise flagged, --profile, and a fuzz of the parser that never crashes.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "cli/cli_test.hpp"

namespace gemmlab::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kOldReport = "{\"an\": \"earlier report, to be kept\"}\n";

json parse_out(const ProgramRun& run) {
  json doc = json::parse(run.out, nullptr, false);
  EXPECT_FALSE(doc.is_discarded()) << explain(run);
  return doc;
}

// The folder holds `file` and nothing else: no temporary left behind.
void expect_only(const fs::path& folder, const fs::path& file) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename().string());
  ASSERT_EQ(names.size(), 1u) << "left behind: " << ::testing::PrintToString(names);
  EXPECT_EQ(names[0], file.filename().string());
}

fs::path write_old_report(const ScratchDir& dir) {
  const fs::path path = dir.path() / "report.json";
  std::ofstream(path) << kOldReport;
  return path;
}

TEST(CliOutput, AFailedRunLeavesTheOldFileUntouched) {
  const ScratchDir dir;
  const fs::path path = write_old_report(dir);
  // 2^31-1 cubed: more than host memory can address, refused by the memory check (after the
  // temporary was made and the seed printed).
  const ProgramRun run = gemmlab(quick({"bench", "--backend", "cpu", "--variants", "naive", "--sizes", "2147483647",
                                        "--format", "json", "--output", path.string()}));
  EXPECT_EQ(run.exit_code, 1) << explain(run);
  EXPECT_NE(run.err.find("seed "), std::string::npos) << explain(run);  // the seed is on stderr, not only in the file
  EXPECT_EQ(read_file(path), kOldReport);
  expect_only(dir.path(), path);
}

// SIGINT (Ctrl-C) and SIGTERM in the middle of timing: the old report stays as it was.
TEST(CliOutput, ASignalLeavesTheOldFileUntouched) {
  for (const int signal_number : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(signal_number);
    const ScratchDir dir;
    const fs::path path = write_old_report(dir);
    Spawned run(GEMMLAB_EXE, {"bench", "--backend", "cpu", "--variants", "naive", "--sizes", "64", "--reps",
                              "100000", "--min-time", "600", "--format", "json", "--output", path.string(),
                              "--progress"});
    ASSERT_TRUE(run.wait_for_stderr("time naive", 30)) << run.err();
    run.signal(signal_number);
    const int status = run.wait();
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == signal_number) << status << "\n" << run.err();
    EXPECT_EQ(read_file(path), kOldReport);
    expect_only(dir.path(), path);
  }
}

TEST(CliOutput, ACompleteRunReplacesTheFileKeepingItsPermissions) {
  const ScratchDir dir;
  const fs::path path = write_old_report(dir);
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  const ProgramRun run = gemmlab(quick({"bench", "--backend", "cpu", "--variants", "naive", "--sizes", "8",
                                        "--format", "json", "--output", path.string()}));
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  const json doc = json::parse(read_file(path), nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << read_file(path);
  EXPECT_EQ(doc.at("results").size(), 1u);
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  expect_only(dir.path(), path);
}

TEST(CliOutput, AFolderIsNotAFile) {
  const ScratchDir dir;
  const ProgramRun run = gemmlab(quick({"bench", "--backend", "cpu", "--sizes", "4", "--output", dir.path().string()}));
  EXPECT_EQ(run.exit_code, 1) << explain(run);
  EXPECT_NE(run.err.find("is a folder"), std::string::npos) << explain(run);
}

// --reps is a minimum, past the three seconds after which runs used to stop at 3 repetitions.
TEST(CliReps, RepsAreHonouredAsAMinimumOnASlowRung) {
  const ProgramRun probe = gemmlab({"bench", "--backend", "cpu", "--variants", "naive", "--sizes", "256", "--reps",
                                    "1", "--warmup", "0", "--min-time", "0", "--no-verify", "--format", "json"});
  ASSERT_EQ(probe.exit_code, 0) << explain(probe);
  const double one_ms = parse_out(probe).at("results")[0].at("time_ms").at("median").get<double>();
  // Enough repetitions to pass 3.5 s: the old rule stopped a rung at 3 s.
  const int reps = std::max(10, static_cast<int>(3500 / std::max(one_ms, 1.0)) + 1);
  if (reps > 1000) GTEST_SKIP() << "naive 256^3 takes " << one_ms << " ms here: too fast to pass 3 s in 1000 repetitions";
  const ProgramRun run = gemmlab({"bench", "--backend", "cpu", "--variants", "naive", "--sizes", "256", "--reps",
                                  std::to_string(reps), "--warmup", "0", "--no-verify", "--format", "json"});
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  const json doc = parse_out(run);
  EXPECT_EQ(doc.at("settings").at("min_reps"), reps);
  EXPECT_EQ(doc.at("results")[0].at("time_ms").at("reps"), reps);
  EXPECT_EQ(doc.at("results")[0].at("time_ms").at("capped"), false);
}

TEST(CliReps, MaxTimeCapsARungAndSaysSo) {
  const ProgramRun run = gemmlab({"bench", "--backend", "cpu", "--variants", "naive", "--sizes", "96", "--reps",
                                  "100000", "--max-time", "0.05", "--warmup", "0", "--format", "json", "--samples"});
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  const json doc = parse_out(run);
  EXPECT_DOUBLE_EQ(doc.at("settings").at("max_seconds").get<double>(), 0.05);
  const json& r = doc.at("results")[0];
  const json& t = r.at("time_ms");
  EXPECT_LT(t.at("reps").get<int>(), 100000);
  EXPECT_EQ(t.at("capped"), true);
  EXPECT_EQ(t.at("samples").size(), t.at("reps").get<std::size_t>());
  EXPECT_EQ(r.at("noisy"), true);
  ASSERT_TRUE(r.contains("warnings")) << r.dump(2);
  // Among the warnings (a spread above --max-spread may come first): the cap, naming its flag.
  const json& warnings = r.at("warnings");
  EXPECT_TRUE(std::any_of(warnings.begin(), warnings.end(),
                          [](const json& w) { return w.get<std::string>().find("--max-time") != std::string::npos; }))
      << r.dump(2);
  EXPECT_NE(run.err.find("flagged"), std::string::npos) << explain(run);
}

TEST(CliSamples, EveryRepetitionIsInTheJson) {
  const ProgramRun run = gemmlab({"bench", "--backend", "cpu", "--variants", "naive,packed_simd", "--sizes", "32",
                                  "--reps", "9", "--min-time", "0", "--warmup", "0", "--format", "json", "--samples"});
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  for (const json& r : parse_out(run).at("results")) {
    const json& t = r.at("time_ms");
    std::vector<double> samples = t.at("samples").get<std::vector<double>>();
    ASSERT_EQ(samples.size(), 9u);
    std::sort(samples.begin(), samples.end());
    EXPECT_DOUBLE_EQ(t.at("median").get<double>(), samples[4]);
    EXPECT_DOUBLE_EQ(t.at("min").get<double>(), samples.front());
    EXPECT_DOUBLE_EQ(t.at("max").get<double>(), samples.back());
  }
}

TEST(CliProgress, EveryLongPhaseSaysWhereItIs) {
  const ProgramRun run = gemmlab({"bench", "--backend", "cpu", "--variants", "naive,packed_simd", "--sizes", "48",
                                  "--reps", "3", "--min-time", "0", "--format", "json", "--progress"});
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  for (const char* line : {"reference 48x48x48", "verify naive 48x48x48 (rung 1 of 2)",
                           "verify packed_simd 48x48x48 (rung 2 of 2)", "time naive 48x48x48: 1 of 3 repetitions",
                           "time packed_simd 48x48x48: 1 of 3 repetitions", "left"})
    EXPECT_NE(run.err.find(line), std::string::npos) << line << "\n" << explain(run);
  // Without --progress and without a terminal: none.
  const ProgramRun quiet = gemmlab(quick({"bench", "--backend", "cpu", "--variants", "naive", "--sizes", "48"}));
  EXPECT_EQ(quiet.err.find("repetitions"), std::string::npos) << explain(quiet);
}

TEST(CliNoise, ASpreadAboveTheThresholdIsFlaggedInTableAndJson) {
  // --max-spread 0: every result whose repetitions differ at all is noisy.
  const ProgramRun run = gemmlab({"bench", "--backend", "cpu", "--variants", "naive,openblas_sgemm_1t", "--sizes",
                                  "40", "--reps", "15", "--min-time", "0", "--format", "json", "--max-spread", "0"});
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  const json doc = parse_out(run);
  EXPECT_DOUBLE_EQ(doc.at("settings").at("max_spread").get<double>(), 0.0);
  int noisy = 0;
  for (const json& r : doc.at("results")) {
    if (r.at("time_ms").at("spread").get<double>() <= 0) continue;
    EXPECT_EQ(r.at("noisy"), true) << r.dump(2);
    ASSERT_TRUE(r.contains("warnings")) << r.dump(2);
    EXPECT_NE(r.at("warnings")[0].get<std::string>().find("spread"), std::string::npos);
    ++noisy;
  }
  EXPECT_GT(noisy, 0) << explain(run);
  const ProgramRun table = gemmlab({"bench", "--backend", "cpu", "--variants", "naive", "--sizes", "40", "--reps",
                                    "15", "--min-time", "0", "--max-spread", "0"});
  ASSERT_EQ(table.exit_code, 0) << explain(table);
  EXPECT_NE(table.out.find("[noisy]"), std::string::npos) << explain(table);
  EXPECT_NE(table.out.find("warnings (measurements not to be taken at their word)"), std::string::npos)
      << explain(table);
}

TEST(CliInterleave, ACpuRunCanBeTimedInRounds) {
  const ProgramRun run = gemmlab(quick({"bench", "--backend", "cpu", "--variants", "packed_simd,openblas_sgemm_1t",
                                        "--sizes", "32", "--interleave", "on", "--format", "json"}));
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  const json doc = parse_out(run);
  EXPECT_EQ(doc.at("settings").at("interleaved"), true);
  for (const json& r : doc.at("results")) EXPECT_TRUE(r.contains("ratio_to_anchor")) << r.dump(2);
}

TEST(CliProfile, RunsEachRungOnceUntimedAndUnverified) {
  const ProgramRun run = gemmlab({"bench", "--backend", "cpu", "--variants", "naive,packed_simd", "--sizes", "24",
                                  "--profile", "--format", "json"});
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  const json doc = parse_out(run);
  EXPECT_EQ(doc.at("settings").at("profile"), true);
  EXPECT_FALSE(doc.at("settings").contains("min_reps"));
  ASSERT_EQ(doc.at("results").size(), 2u);
  for (const json& r : doc.at("results")) {
    EXPECT_EQ(r.at("profiled"), true);
    EXPECT_FALSE(r.contains("time_ms"));
    EXPECT_FALSE(r.contains("verification"));
  }
}

TEST(CliSeed, ZeroIsASeedLikeAnyOther) {
  const ProgramRun run = gemmlab(quick({"bench", "--backend", "cpu", "--variants", "naive", "--sizes", "4",
                                        "--seed", "0", "--format", "json"}));
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  EXPECT_EQ(parse_out(run).at("settings").at("seed"), 0);
  EXPECT_EQ(run.err_lines().at(0).rfind("seed 0 | ", 0), 0u) << explain(run);
}

TEST(CliDryRun, SaysWhatWouldRunAndRunsNothing) {
  const ScratchDir dir;
  const fs::path path = dir.path() / "never.json";
  const ProgramRun run = gemmlab({"bench", "--backend", "cpu", "--sizes", "4096", "--variants", "naive",
                                  "--output", path.string(), "--dry-run"});
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  EXPECT_NE(run.out.find("naive on 4096x4096x4096"), std::string::npos) << explain(run);
  EXPECT_FALSE(fs::exists(path));
}

// The parser, fed random mixes of real flags, good and bad values and junk: never a crash or
// a hang, always exit 0, 1 or 2, and a failure says why in a line that starts "gemmlab".
TEST(CliFuzz, RandomCommandLinesNeverCrash) {
  const std::vector<std::string> commands = {"bench", "verify", "explain", "list", "compare", "mem", "frob", ""};
  const std::vector<std::string> flags = {
      "--backend", "--dtype", "--variants", "--config", "--sizes", "--mnk", "--trans", "--layout", "--alpha",
      "--beta", "--pad", "--seed", "--reps", "--warmup", "--min-time", "--max-time", "--max-spread",
      "--interleave", "--l2-flush", "--format", "--samples", "--no-verify", "--explain", "--profile",
      "--progress", "--threshold", "--metric", "--configs", "--experiments", "--help", "-", "--", "--x"};
  const std::vector<std::string> values = {
      "", "0", "1", "-1", "4", "2x3x4", "nan", "inf", "-inf", "1e39", "1e-400", "0x1p3", "18446744073709551616",
      "99999999999999999999", "cpu", "cuda", "auto", "f32", "bf16", "naive", "naive,naive", ",", "4,,8", "NN",
      "XY", "row", "json", "csv", "table", "markdown", "on", "clean", "auto", "é", std::string(300, 'a'), "--",
      "x", " 3", "3 ", "1x1x1,1x1x1", "4294967296"};
  const unsigned seed = ::testing::UnitTest::GetInstance()->random_seed();
  std::mt19937 rng(seed);
  const auto pick = [&rng](const std::vector<std::string>& from) {
    return from[std::uniform_int_distribution<std::size_t>(0, from.size() - 1)(rng)];
  };
  constexpr int kCommandLines = 150;
  for (int i = 0; i < kCommandLines; ++i) {
    std::vector<std::string> args;
    const std::string command = pick(commands);
    if (!command.empty()) args.push_back(command);
    const int count = std::uniform_int_distribution<int>(0, 6)(rng);
    for (int a = 0; a < count; ++a) {
      args.push_back(std::uniform_int_distribution<int>(0, 2)(rng) == 0 ? pick(values) : pick(flags));
      if (std::uniform_int_distribution<int>(0, 1)(rng)) args.push_back(pick(values));
    }
    // Never minutes of benchmarking: whatever parses only says what it would run.
    if (command == "bench" || command == "verify" || command == "explain") args.push_back("--dry-run");
    if (command == "compare") args.push_back("/nonexistent.json");
    const ProgramRun run = gemmlab(args);
    SCOPED_TRACE("gtest random seed " + std::to_string(seed));
    ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1 || run.exit_code == 2) << explain(run);
    if (run.exit_code != 0) {
      const std::vector<std::string> lines = run.err_lines();
      ASSERT_FALSE(lines.empty()) << explain(run);
      EXPECT_EQ(lines.back().rfind("gemmlab", 0), 0u) << explain(run);
      if (run.exit_code == 2) {
        EXPECT_EQ(lines.size(), 1u) << explain(run);
      }
    }
  }
}

}  // namespace
}  // namespace gemmlab::testing
