// gemmlab device, mem and explain end to end: the CPU path of explain and bench --explain,
// usage errors, and the clear failure where no GPU (or no CUDA) is present.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "cli/cli_test.hpp"

namespace gemmlab::testing {
namespace {

// True when the program reports a usable CUDA device (then the no-GPU tests do not apply).
bool gpu_present() {
  const ProgramRun run = gemmlab({"list", "--backend", "cuda"});
  return run.exit_code == 0 && run.out.find("no CUDA device") == std::string::npos &&
         run.out.find("not in this build") == std::string::npos;
}

TEST(CliLab, DeviceWithoutGpuFailsClearly) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is present";
  const ProgramRun run = gemmlab({"device"});
  EXPECT_EQ(run.exit_code, 1) << explain(run);
  EXPECT_TRUE(run.out.empty()) << explain(run);
  EXPECT_TRUE(run.err.find("no CUDA") != std::string::npos) << explain(run);
}

TEST(CliLab, MemWithoutGpuFailsClearly) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is present";
  const ProgramRun run = gemmlab({"mem", "--format", "json"});
  EXPECT_EQ(run.exit_code, 1) << explain(run);
  EXPECT_TRUE(run.out.empty()) << explain(run);
  EXPECT_TRUE(run.err.find("no CUDA") != std::string::npos) << explain(run);
}

TEST(CliLab, MemListNamesEveryExperimentOrSaysThereIsNoCuda) {
  const ProgramRun run = gemmlab({"mem", "--list"});
  EXPECT_EQ(run.exit_code, 0) << explain(run);
  const bool none = run.out.find("no CUDA backend") != std::string::npos;
  for (const char* name : {"coalescing", "aos_soa", "alignment", "pitch", "transpose", "constant", "transfer"})
    EXPECT_TRUE(none || run.out.find(name) != std::string::npos) << name << "\n" << explain(run);
}

TEST(CliLab, UnknownMemFormatIsUsage) {
  const ProgramRun run = gemmlab({"mem", "--format", "xml"});
  EXPECT_EQ(run.exit_code, 2) << explain(run);
}

TEST(CliLab, ExplainNeedsAVariant) {
  const ProgramRun run = gemmlab({"explain"});
  EXPECT_EQ(run.exit_code, 2) << explain(run);
}

TEST(CliLab, ExplainUnknownVariantIsUsage) {
  const ProgramRun run = gemmlab({"explain", "no_such_rung", "--backend", "cpu", "--mnk", "8x8x8"});
  EXPECT_EQ(run.exit_code, 2) << explain(run);
  EXPECT_TRUE(run.err.find("no_such_rung") != std::string::npos) << explain(run);
}

TEST(CliLab, ExplainCpuRungGivesSeed002ModelAsJson) {
  const ProgramRun run =
      gemmlab({"explain", "naive,cache_tiled", "--backend", "cpu", "--mnk", "33x17x9", "--reps", "1", "--format", "json"});
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  const auto doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc.at("command"), "explain");
  ASSERT_EQ(doc.at("results").size(), 2u);
  for (const auto& r : doc.at("results")) {
    EXPECT_EQ(r.at("status"), "ok");
    EXPECT_TRUE(r.at("verification").at("passed").get<bool>());
    const auto& cpu = r.at("explain").at("cpu_model");
    EXPECT_EQ(cpu.at("order_outermost_first"), "i p j");
    EXPECT_GT(cpu.at("cm_i").get<double>(), cpu.at("cm_j").get<double>());
    EXPECT_GT(r.at("model").at("flops").get<double>(), 0.0);
  }
}

// The FMA peak (register-only kernel) on one thread and all cores, each rung's fraction of
// the peak on as many threads, and the packed rung's FMAs per load from its MR, NR and
// vector width (read back from the config string).
TEST(CliLab, ExplainCpuRungGivesFmaPeakFractionAndMicroKernelRatio) {
  const ProgramRun run = gemmlab(
      {"explain", "register_tiled,packed_simd,threaded", "--backend", "cpu", "--mnk", "64x48x40", "--reps", "1",
       "--format", "json"});
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  const auto doc = nlohmann::json::parse(run.out);
  const auto& one = doc.at("cpu_peak").at("one_thread");
  const auto& all = doc.at("cpu_peak").at("all_cores");
  EXPECT_EQ(one.at("threads"), 1);
  EXPECT_GE(all.at("threads").get<int>(), 1);
  EXPECT_GT(one.at("gflops").get<double>(), 0.0);
  EXPECT_GT(all.at("gflops").get<double>(), 0.0);
  EXPECT_EQ(one.at("isa"), all.at("isa"));
  ASSERT_EQ(doc.at("results").size(), 3u);
  for (const auto& r : doc.at("results")) {
    SCOPED_TRACE(r.at("variant").get<std::string>());
    ASSERT_EQ(r.at("status"), "ok");
    const auto& cpu = r.at("explain").at("cpu_model");
    const int threads = cpu.at("threads").get<int>();
    EXPECT_EQ(threads, r.at("variant") == "threaded" ? all.at("threads").get<int>() : 1);
    EXPECT_EQ(cpu.at("peak"), threads == 1 ? one : all);
    const double fraction = cpu.at("fraction_of_peak").get<double>();
    EXPECT_GT(fraction, 0.0);
    EXPECT_NEAR(fraction, r.at("gflops").get<double>() / cpu.at("peak").at("gflops").get<double>(), 1e-9);
    if (r.at("variant") == "register_tiled") {
      EXPECT_FALSE(cpu.contains("micro_kernel"));
      continue;
    }
    const std::string config = r.at("config");
    const auto param = [&](const std::string& key) {
      const std::size_t at = config.find(key + "=");
      EXPECT_NE(at, std::string::npos) << config;
      return at == std::string::npos ? 0 : std::stoi(config.substr(at + key.size() + 1));
    };
    const auto& mk = cpu.at("micro_kernel");
    const int lanes = param("VEC_BITS") / 32;
    EXPECT_EQ(mk.at("lanes"), lanes);
    EXPECT_EQ(mk.at("fmas_per_step"), param("MR") * param("NR") / lanes);
    EXPECT_EQ(mk.at("loads_per_step"), param("MR") + param("NR") / lanes);
    EXPECT_NEAR(mk.at("fma_per_load").get<double>(),
                mk.at("fmas_per_step").get<double>() / mk.at("loads_per_step").get<double>(), 1e-12);
  }
}

TEST(CliLab, ExplainCpuTableShowsThePeakAndTheFraction) {
  const ProgramRun run = gemmlab({"explain", "packed_simd", "--backend", "cpu", "--mnk", "32x32x32", "--reps", "1"});
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  for (const char* text : {"FMA peak (register-only kernel", "of the FMA peak on 1 thread", "FMA per load"})
    EXPECT_NE(run.out.find(text), std::string::npos) << text << "\n" << explain(run);
}

TEST(CliLab, BenchExplainAddsTheModelToEachResult) {
  const ProgramRun run = gemmlab(quick({"bench", "--backend", "cpu", "--variants", "naive", "--sizes", "16",
                                        "--explain", "--format", "json"}));
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  const auto doc = nlohmann::json::parse(run.out);
  ASSERT_EQ(doc.at("results").size(), 1u);
  EXPECT_TRUE(doc.at("results")[0].at("explain").contains("cpu_model")) << explain(run);
  EXPECT_GT(doc.at("explain_cpu_peak").at("one_thread").at("gflops").get<double>(), 0.0) << explain(run);
  EXPECT_TRUE(doc.at("results")[0].at("explain").at("cpu_model").contains("fraction_of_peak")) << explain(run);
}

TEST(CliLab, BenchExplainTablePrintsTheModel) {
  const ProgramRun run = gemmlab(quick({"bench", "--backend", "cpu", "--variants", "naive", "--sizes", "16", "--explain"}));
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  EXPECT_TRUE(run.out.find("gemmlab explain naive") != std::string::npos) << explain(run);
  EXPECT_TRUE(run.out.find("CGMA") != std::string::npos) << explain(run);
}

}  // namespace
}  // namespace gemmlab::testing
