// gemmlab bench and gemmlab verify on the CPU, end to end: JSON read back field by field,
// CSV, the table, --output.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_test.hpp"
#include "support/seeds.hpp"

namespace gemmlab::testing {
namespace {

using nlohmann::json;

// Every field a CSV row carries, in order.
constexpr const char* kCsvHeader =
    "backend,variant,configuration,dtype,out_dtype,anchor,threads,m,n,k,trans,layout,alpha,beta,lda,ldb,ldc,seed,"
    "status,reps,median_ms,min_ms,max_ms,spread,gflops,anchor_variant,ratio_to_anchor,verified,passed,"
    "rel_frobenius,max_abs_error,cgma,message";
// A verified float32 result agrees with the float64 reference to far more than half its
// digits; rel_frobenius above sqrt(u) would mean the verdict is not worth its name.
const double kHalfOfF32Digits = std::sqrt(0x1p-24);

json parse_json(const ProgramRun& run) {
  json doc = json::parse(run.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(doc.is_discarded()) << explain(run);
  return doc;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::istringstream stream(text);
  for (std::string part; std::getline(stream, part, separator);) parts.push_back(part);
  return parts;
}

// --back-to-back N: every timed repetition makes N calls in a row and records the time per
// call; the results are verified and timed as usual, and the JSON says how they were timed.
TEST(CliBench, BackToBackCallsAreRecorded) {
  const ProgramRun run = gemmlab({"bench", "--backend", "cpu", "--variants", "naive", "--sizes", "48",
                                  "--format", "json", "--reps", "3", "--warmup", "0", "--min-time", "0",
                                  "--back-to-back", "4"});
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  const json doc = parse_json(run);
  EXPECT_EQ(doc.at("settings").at("back_to_back"), 4);
  ASSERT_FALSE(doc.at("results").empty()) << explain(run);
  for (const json& r : doc.at("results")) {
    SCOPED_TRACE(r.dump(2));
    EXPECT_EQ(r.at("status"), "ok");
    EXPECT_TRUE(r.at("verification").at("passed").get<bool>());
    EXPECT_GT(r.at("time_ms").at("median").get<double>(), 0.0);
    EXPECT_GE(r.at("time_ms").at("reps").get<int>(), 3);
  }
}

TEST(CliBench, JsonCarriesEverythingAResultNeeds) {
  const std::vector<std::string> ladder = listed_cpu_variants();
  constexpr int kReps = 3;
  constexpr int kSeed = 5;
  constexpr int kSize = 64;
  const ProgramRun run = gemmlab({"bench", "--backend", "cpu", "--sizes", std::to_string(kSize), "--format", "json",
                                  "--reps", std::to_string(kReps), "--seed", std::to_string(kSeed),
                                  "--warmup", "0", "--min-time", "0"});
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  // The seed and the command, whatever the format: a log alone can replay the run.
  ASSERT_GE(run.err_lines().size(), 1u) << explain(run);
  EXPECT_EQ(run.err_lines()[0].rfind("seed " + std::to_string(kSeed) + " | ", 0), 0u) << explain(run);
  EXPECT_NE(run.err_lines()[0].find("bench --backend cpu"), std::string::npos) << explain(run);
  const json doc = parse_json(run);
  ASSERT_TRUE(doc.is_object()) << explain(run);

  EXPECT_EQ(doc.at("schema_version"), 3);
  EXPECT_EQ(doc.at("tool"), "gemmlab");
  EXPECT_EQ(doc.at("command"), "bench");
  EXPECT_TRUE(doc.at("build").at("commit").is_string());
  EXPECT_FALSE(doc.at("build").at("commit").get<std::string>().empty());
  EXPECT_TRUE(doc.at("build").at("build_type").is_string());
  EXPECT_EQ(doc.at("backend"), "cpu");
  EXPECT_TRUE(doc.at("device").at("cpu").is_string());
  EXPECT_GT(std::stoi(doc.at("device").at("logical_cores").get<std::string>()), 0);

  const json& settings = doc.at("settings");
  EXPECT_EQ(settings.at("dtype"), "f32");
  EXPECT_EQ(settings.at("out_dtype"), "f32");
  EXPECT_EQ(settings.at("trans"), "NN");
  EXPECT_EQ(settings.at("layout"), "row");
  EXPECT_EQ(settings.at("alpha"), 1.0);
  EXPECT_EQ(settings.at("beta"), 0.0);
  EXPECT_EQ(settings.at("ld_padding"), 0);
  EXPECT_EQ(settings.at("seed"), kSeed);
  EXPECT_EQ(settings.at("verify"), true);
  EXPECT_EQ(settings.at("warmup"), 0);
  EXPECT_EQ(settings.at("min_reps"), kReps);
  EXPECT_EQ(settings.at("min_seconds"), 0.0);
  EXPECT_FALSE(settings.contains("l2_flush"));  // the CPU executor flushes nothing: not recorded
  EXPECT_EQ(settings.at("max_seconds"), nullptr);  // no cap unless --max-time
  EXPECT_EQ(settings.at("interleaved"), false);    // a CPU times its rungs in turn by default
  EXPECT_DOUBLE_EQ(settings.at("max_spread").get<double>(), 0.10);
  EXPECT_EQ(settings.at("back_to_back"), 1);  // one call per timed repetition unless --back-to-back
  // Self-describing: when, how and where it ran.
  const json& about = doc.at("run");
  EXPECT_EQ(about.at("date").get<std::string>().size(), std::string("2025-01-31T12:00:00Z").size());
  EXPECT_EQ(about.at("date").get<std::string>().back(), 'Z');
  EXPECT_NE(about.at("command_line").get<std::string>().find("bench --backend cpu --sizes 64"), std::string::npos);
  EXPECT_FALSE(about.at("host").get<std::string>().empty());

  const json& results = doc.at("results");
  ASSERT_EQ(results.size(), ladder.size()) << explain(run);
  for (std::size_t i = 0; i < results.size(); ++i) {
    const json& r = results[i];
    SCOPED_TRACE(r.dump(2));
    EXPECT_EQ(r.at("backend"), "cpu");
    EXPECT_EQ(r.at("variant"), ladder[i]);
    EXPECT_EQ(r.at("dtype"), "f32");
    EXPECT_EQ(r.at("out_dtype"), "f32");
    EXPECT_EQ(r.at("m"), kSize);
    EXPECT_EQ(r.at("n"), kSize);
    EXPECT_EQ(r.at("k"), kSize);
    EXPECT_EQ(r.at("lda"), kSize);
    EXPECT_EQ(r.at("trans"), "NN");
    EXPECT_EQ(r.at("layout"), "row");
    EXPECT_EQ(r.at("seed"), kSeed);
    EXPECT_EQ(r.at("status"), "ok");
    const json& time = r.at("time_ms");
    EXPECT_EQ(time.at("reps"), kReps);
    EXPECT_EQ(time.at("capped"), false);
    EXPECT_FALSE(time.contains("samples"));  // only with --samples
    EXPECT_TRUE(r.at("noisy").is_boolean());
    const double median = time.at("median").get<double>();
    EXPECT_GT(median, 0.0);
    EXPECT_LE(time.at("min").get<double>(), median);
    EXPECT_GE(time.at("max").get<double>(), median);
    const double flops = r.at("model").at("flops").get<double>();
    EXPECT_DOUBLE_EQ(flops, 2.0 * kSize * kSize * kSize);
    EXPECT_DOUBLE_EQ(r.at("gflops").get<double>(), flops / (median * 1e-3) * 1e-9);
    const json& v = r.at("verification");
    EXPECT_EQ(v.at("passed"), true);
    EXPECT_EQ(v.at("checked"), kSize * kSize);
    EXPECT_EQ(v.at("failures"), 0);
    const double rel = v.at("rel_frobenius").get<double>();
    EXPECT_GE(rel, 0.0);
    EXPECT_LT(rel, kHalfOfF32Digits);
    // Every rung carries its ratio to an anchor of the same run.
    ASSERT_TRUE(r.contains("ratio_to_anchor"));
    const std::string anchor = r.at("anchor_variant").get<std::string>();
    const json* anchor_result = nullptr;
    for (const json& a : results)
      if (a.at("variant") == anchor) anchor_result = &a;
    ASSERT_NE(anchor_result, nullptr) << anchor;
    EXPECT_EQ(anchor_result->at("anchor"), true);
    EXPECT_DOUBLE_EQ(r.at("ratio_to_anchor").get<double>(),
                     anchor_result->at("time_ms").at("median").get<double>() / median);
  }
}

// --l2-flush is the GPU's: a CPU run cannot honour it, so asking is a usage error, and a CPU
// run's JSON records no flush.
TEST(CliBench, CacheFlushIsRefusedOnTheCpu) {
  for (const char* flush : {"clean", "write", "none"}) {
    const ProgramRun run = gemmlab(quick({"bench", "--backend", "cpu", "--sizes", "8", "--variants", "naive",
                                          "--format", "json", "--l2-flush", flush}));
    EXPECT_EQ(run.exit_code, 2) << explain(run);
    ASSERT_EQ(run.err_lines().size(), 1u) << explain(run);
    EXPECT_NE(run.err.find("--l2-flush"), std::string::npos) << explain(run);
    EXPECT_TRUE(run.out.empty()) << explain(run);
  }
}

// Every configuration of a configurable rung runs, verified, and the JSON says which ran.
TEST(CliBench, EveryNamedConfigurationRunsAndIsRecorded) {
  const ProgramRun listing = gemmlab({"list", "--backend", "cpu", "--format", "json"});
  ASSERT_EQ(listing.exit_code, 0) << explain(listing);
  int runs = 0;
  for (const auto& v : json::parse(listing.out)) {
    if (v.at("anchor").get<bool>()) continue;
    for (const auto& c : v.at("configurations")) {
      const std::string rung = v.at("name").get<std::string>(), config = c.at("name").get<std::string>();
      const ProgramRun run = gemmlab(quick({"bench", "--backend", "cpu", "--mnk", "37x29x41", "--variants", rung,
                                            "--config", config, "--format", "json"}));
      ASSERT_EQ(run.exit_code, 0) << explain(run);
      const json doc = parse_json(run);
      ASSERT_EQ(doc.at("results").size(), 1u) << explain(run);
      const json& r = doc.at("results").at(0);
      EXPECT_EQ(r.at("configuration"), config) << explain(run);
      EXPECT_TRUE(r.at("verification").at("passed").get<bool>()) << explain(run);
      ++runs;
    }
  }
  EXPECT_GE(runs, 1) << "no CPU rung has named configurations";
}

TEST(CliBench, CsvHasTheHeaderAndOneRowPerRunAndShape) {
  const std::vector<std::string> ladder = listed_cpu_variants();
  Seeds seeds;
  const std::uint64_t seed = seeds.next();
  const ProgramRun run = gemmlab(quick({"bench", "--backend", "cpu", "--sizes", "8,9", "--format", "csv",
                                        "--seed", std::to_string(seed)}));
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  const std::vector<std::string> lines = split(run.out, '\n');
  ASSERT_EQ(lines.size(), 1 + 2 * ladder.size()) << explain(run);
  EXPECT_EQ(lines[0], kCsvHeader);
  const std::vector<std::string> header = split(lines[0], ',');
  for (std::size_t row = 1; row < lines.size(); ++row) {
    SCOPED_TRACE(lines[row]);
    const std::vector<std::string> fields = split(lines[row], ',');
    ASSERT_EQ(fields.size(), header.size());
    const auto field = [&](const char* name) {
      for (std::size_t i = 0; i < header.size(); ++i)
        if (header[i] == name) return fields[i];
      ADD_FAILURE() << "no column " << name;
      return std::string();
    };
    const std::size_t shape = (row - 1) / ladder.size();
    const std::string size = shape == 0 ? "8" : "9";
    EXPECT_EQ(field("backend"), "cpu");
    EXPECT_EQ(field("variant"), ladder[(row - 1) % ladder.size()]);
    // Quoted: a configuration may hold commas (a CPU block-size spec); here each rung's default.
    const std::string configuration = field("configuration");
    EXPECT_TRUE(configuration == "\"\"" || configuration == "\"auto\"") << configuration;
    EXPECT_EQ(field("dtype"), "f32");
    EXPECT_EQ(field("out_dtype"), "f32");
    EXPECT_EQ(field("m"), size);
    EXPECT_EQ(field("k"), size);
    EXPECT_EQ(field("seed"), std::to_string(seed + shape));
    EXPECT_EQ(field("status"), "ok");
    EXPECT_EQ(field("reps"), "1");
    EXPECT_EQ(field("verified"), "1");
    EXPECT_EQ(field("passed"), "1");
    EXPECT_FALSE(field("ratio_to_anchor").empty());
  }
}

TEST(CliBench, OutputWritesTheReportToTheFile) {
  const ScratchDir dir;
  const std::string path = (dir.path() / "report.json").string();
  const ProgramRun run = gemmlab(quick({"bench", "--backend", "cpu", "--variants", "naive", "--sizes", "5",
                                        "--format", "json", "--output", path, "--seed", "7"}));
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  EXPECT_TRUE(run.out.empty()) << explain(run);
  const json doc = json::parse(read_file(path), nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << read_file(path);
  ASSERT_EQ(doc.at("results").size(), 1u);
  EXPECT_EQ(doc.at("results")[0].at("variant"), "naive");
  EXPECT_EQ(doc.at("results")[0].at("verification").at("passed"), true);
}

TEST(CliBench, UnwritableOutputIsARuntimeFailure) {
  const ScratchDir dir;
  const std::string path = (dir.path() / "no_such_dir" / "report.json").string();
  const ProgramRun run = gemmlab(quick({"bench", "--backend", "cpu", "--sizes", "4", "--output", path}));
  EXPECT_EQ(run.exit_code, 1) << explain(run);
  ASSERT_EQ(run.err_lines().size(), 1u) << explain(run);
  EXPECT_NE(run.err.find(path), std::string::npos) << explain(run);
}

// The non-default settings reach every record: transpositions, layout, padding, alpha, beta.
TEST(CliBench, SettingsReachEveryResult) {
  Seeds seeds;
  const std::uint64_t seed = seeds.next();
  const ProgramRun run = gemmlab(quick({"bench", "--backend", "cpu", "--mnk", "13x7x5", "--trans", "TN",
                                        "--layout", "col", "--pad", "2", "--alpha", "0.5", "--beta", "-2",
                                        "--format", "json", "--seed", std::to_string(seed)}));
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  const json doc = parse_json(run);
  EXPECT_EQ(doc.at("settings").at("trans"), "TN");
  EXPECT_EQ(doc.at("settings").at("layout"), "col");
  EXPECT_EQ(doc.at("settings").at("ld_padding"), 2);
  for (const json& r : doc.at("results")) {
    SCOPED_TRACE(r.dump(2));
    EXPECT_EQ(r.at("m"), 13);
    EXPECT_EQ(r.at("n"), 7);
    EXPECT_EQ(r.at("k"), 5);
    EXPECT_EQ(r.at("trans"), "TN");
    EXPECT_EQ(r.at("layout"), "col");
    EXPECT_EQ(r.at("lda"), 5 + 2);   // A is k x m, column-major: ld = k + pad
    EXPECT_EQ(r.at("ldc"), 13 + 2);  // C is m x n, column-major: ld = m + pad
    EXPECT_EQ(r.at("alpha"), 0.5);
    EXPECT_EQ(r.at("beta"), -2.0);
    EXPECT_EQ(r.at("verification").at("passed"), true);
  }
}

TEST(CliBench, TablePrintsEveryRungAndTheSeed) {
  Seeds seeds;
  const std::uint64_t seed = seeds.next();
  const ProgramRun run = gemmlab(quick({"bench", "--backend", "cpu", "--sizes", "6", "--seed", std::to_string(seed)}));
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  ASSERT_EQ(run.err_lines().size(), 1u) << explain(run);
  EXPECT_EQ(run.err_lines()[0].rfind("seed " + std::to_string(seed) + " | ", 0), 0u) << explain(run);
  for (const std::string& name : listed_cpu_variants())
    EXPECT_NE(run.out.find("  " + name + " "), std::string::npos) << name << "\n" << explain(run);
  EXPECT_EQ(run.out.find("FAILED"), std::string::npos) << explain(run);
}

TEST(CliVerify, CpuPassesOnItsAwkwardShapes) {
  const ProgramRun run = gemmlab({"verify", "--backend", "cpu"});
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  for (const std::string& name : listed_cpu_variants())
    EXPECT_NE(run.out.find("  " + name + " "), std::string::npos) << name << "\n" << explain(run);
  EXPECT_EQ(run.out.find("FAILED"), std::string::npos) << explain(run);
}

TEST(CliVerify, JsonIsVerifiedButNotTimed) {
  Seeds seeds;
  const std::uint64_t seed = seeds.next();
  const ProgramRun run = gemmlab({"verify", "--backend", "cpu", "--mnk", "1x1x1,17x3x9", "--beta", "0.5",
                                  "--format", "json", "--seed", std::to_string(seed)});
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  const json doc = parse_json(run);
  EXPECT_EQ(doc.at("command"), "verify");
  const json& results = doc.at("results");
  ASSERT_EQ(results.size(), 2 * listed_cpu_variants().size());
  for (const json& r : results) {
    SCOPED_TRACE(r.dump(2));
    EXPECT_EQ(r.at("verification").at("passed"), true);
    EXPECT_FALSE(r.contains("time_ms"));
    EXPECT_FALSE(r.contains("ratio_to_anchor"));
  }
  EXPECT_EQ(results.front().at("seed"), seed);
  EXPECT_EQ(results.back().at("seed"), seed + 1);
}

}  // namespace
}  // namespace gemmlab::testing
