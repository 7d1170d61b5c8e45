// Bad command lines: one line on stderr naming what is wrong, nothing on stdout, exit code 2
// (usage) or 1 (a runtime failure, such as asking for CUDA where there is none).
#include <gtest/gtest.h>

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "cli/cli_test.hpp"

namespace gemmlab::testing {
namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

struct BadCommandLine {
  const char* name;                // the test's name
  std::vector<std::string> args;   // a quick, otherwise valid command line with one mistake
  std::string culprit;             // what the message must name
};

// Valid apart from `mistake`: tiny sizes and one repetition, should the mistake go unnoticed.
std::vector<std::string> bench_with(std::vector<std::string> mistake, bool with_sizes = true) {
  std::vector<std::string> args = {"bench", "--backend", "cpu"};
  if (with_sizes) args.insert(args.end(), {"--sizes", "4"});
  args.insert(args.end(), mistake.begin(), mistake.end());
  return quick(args);
}

// Test names show the command line, not the struct's bytes.
void PrintTo(const BadCommandLine& c, std::ostream* os) {
  for (const std::string& arg : c.args) *os << arg << ' ';
}

class CliUsageError : public ::testing::TestWithParam<BadCommandLine> {};

TEST_P(CliUsageError, OneLineOnStderrAndExitCodeTwo) {
  const BadCommandLine& c = GetParam();
  const ProgramRun run = gemmlab(c.args);
  EXPECT_EQ(run.exit_code, kExitUsage) << explain(run);
  EXPECT_TRUE(run.out.empty()) << explain(run);
  const std::vector<std::string> lines = run.err_lines();
  ASSERT_EQ(lines.size(), 1u) << explain(run);
  EXPECT_EQ(lines[0].rfind("gemmlab: ", 0), 0u) << explain(run);
  EXPECT_NE(lines[0].find(c.culprit), std::string::npos) << "does not name '" << c.culprit << "'\n"
                                                         << explain(run);
}

INSTANTIATE_TEST_SUITE_P(
    BadFlags, CliUsageError,
    ::testing::Values(
        BadCommandLine{"UnknownFlag", bench_with({"--frobnicate"}), "--frobnicate"},
        BadCommandLine{"NoSubcommand", {}, "subcommand"},
        BadCommandLine{"UnknownCommand", {"frobnicate"}, "unknown command 'frobnicate'"},
        BadCommandLine{"SizesNotANumber", bench_with({"--sizes", "abc"}, false), "abc"},
        BadCommandLine{"SizesNegative", bench_with({"--sizes", "-5"}, false), "-5"},
        BadCommandLine{"SizesEmptyToken", bench_with({"--sizes", "4,,8"}, false), "4,,8"},
        BadCommandLine{"MnkTwoDimensions", bench_with({"--mnk", "1x2"}, false), "1x2"},
        BadCommandLine{"SizesAndMnkTogether", bench_with({"--mnk", "2x2x2"}), "--mnk"},
        BadCommandLine{"TransUnknown", bench_with({"--trans", "XY"}), "XY"},
        BadCommandLine{"LayoutUnknown", bench_with({"--layout", "diag"}), "diag"},
        BadCommandLine{"FormatUnknown", bench_with({"--format", "xml"}), "xml"},
        BadCommandLine{"BackendUnknown", {"bench", "--backend", "tpu", "--sizes", "4"}, "tpu"},
        BadCommandLine{"RepsZero", bench_with({"--reps", "0"}), "--reps"},
        BadCommandLine{"L2FlushUnknown", bench_with({"--l2-flush", "cold"}), "cold"},
        BadCommandLine{"VariantUnknown", bench_with({"--variants", "nosuch"}), "nosuch"},
        BadCommandLine{"VariantUnknownAmongKnown", bench_with({"--variants", "naive,nosuch"}), "nosuch"},
        BadCommandLine{"VerifyVariantUnknown", {"verify", "--backend", "cpu", "--variants", "nosuch"}, "nosuch"},
        BadCommandLine{"ListFormatUnknown", {"list", "--format", "csv"}, "csv"},
        BadCommandLine{"DTypeUnknown", bench_with({"--dtype", "fp8"}), "fp8"},
        BadCommandLine{"DTypeWithoutRungs", bench_with({"--dtype", "f64"}), "f64"},
        BadCommandLine{"CpuHasNoBf16", bench_with({"--dtype", "bf16"}), "bf16"},
        BadCommandLine{"VerifyCpuHasNoF16", {"verify", "--backend", "cpu", "--dtype", "f16"}, "f16"},
        BadCommandLine{"VariantTwice", bench_with({"--variants", "naive,naive"}), "naive"},
        BadCommandLine{"ConfigUnknown", bench_with({"--variants", "packed_simd", "--config", "nosuch"}), "nosuch"},
        BadCommandLine{"ConfigUnknownListsValid", bench_with({"--variants", "packed_simd", "--config", "nosuch"}),
                       "valid: auto"},
        BadCommandLine{"ConfigWithoutVariants", bench_with({"--config", "auto"}), "--variants"},
        BadCommandLine{"ConfigOfRungWithOneForm", bench_with({"--variants", "naive", "--config", "auto"}), "naive"},
        BadCommandLine{"VariantOfAnotherDType", bench_with({"--variants", "naive", "--dtype", "tf32"}), "naive"},
        BadCommandLine{"ExplainVariantOfAnotherDType",
                       {"explain", "naive", "--backend", "cpu", "--mnk", "4x4x4", "--dtype", "bf16"}, "naive"},
        // C in bf16 or f16 goes with inputs of that type or FP8 ones only; the message names both flags.
        BadCommandLine{"OutDTypeUnknown", bench_with({"--out-dtype", "tf32"}), "tf32"},
        BadCommandLine{"OutDTypeWithF32Inputs", bench_with({"--out-dtype", "bf16"}),
                       "--out-dtype bf16 goes with --dtype bf16, e4m3 or e5m2 only (C is f32, the 2-byte input "
                       "type, or a 2-byte type beside FP8 inputs), not --dtype f32"},
        BadCommandLine{"OutDTypeOfTheOtherHalfType", bench_with({"--dtype", "bf16", "--out-dtype", "f16"}),
                       "--out-dtype f16 goes with --dtype f16, e4m3 or e5m2 only"},
        BadCommandLine{"VerifyOutDTypeWithTf32",
                       {"verify", "--backend", "cpu", "--dtype", "tf32", "--out-dtype", "f16"}, "not --dtype tf32"},
        BadCommandLine{"ExplainOutDTypeWithF32Inputs",
                       {"explain", "naive", "--backend", "cpu", "--mnk", "4x4x4", "--out-dtype", "bf16"},
                       "--out-dtype bf16 goes with --dtype bf16, e4m3 or e5m2 only"},
        // FP8: never a C type; no CPU rung computes it (as none computes bf16); the jobs on host
        // operands refuse it.
        BadCommandLine{"Fp8C", bench_with({"--dtype", "e4m3", "--out-dtype", "e4m3"}),
                       "--out-dtype: C in e4m3/e5m2 is not supported: store C as f32, bf16 or f16"},
        BadCommandLine{"VerifyFp8C", {"verify", "--backend", "cpu", "--dtype", "e5m2", "--out-dtype", "e5m2"},
                       "C in e4m3/e5m2 is not supported"},
        BadCommandLine{"CpuHasNoE4m3", bench_with({"--dtype", "e4m3"}),
                       "--dtype e4m3: the cpu backend has no e4m3 variant"},
        BadCommandLine{"CpuHasNoE5m2WithBf16C", bench_with({"--dtype", "e5m2", "--out-dtype", "bf16"}),
                       "--dtype e5m2 --out-dtype bf16: the cpu backend has no variant of e5m2 inputs with bf16 C"},
        BadCommandLine{"OutOfCoreTakesNoFp8", {"bench", "--out-of-core", "--dtype", "e4m3", "--sizes", "64"},
                       "--out-of-core does not take --dtype e4m3"},
        BadCommandLine{"DistributedTakesNoFp8", {"bench", "--gpus", "2", "--dtype", "e5m2", "--sizes", "64"},
                       "--gpus 2 does not take --dtype e5m2"},
        BadCommandLine{"CpuHasNoBf16C", bench_with({"--dtype", "bf16", "--out-dtype", "bf16"}),
                       "--dtype bf16 --out-dtype bf16: the cpu backend has no variant of bf16 inputs with bf16 C"},
        BadCommandLine{"VariantWithAnotherC",
                       bench_with({"--variants", "naive", "--dtype", "f16", "--out-dtype", "f16"}),
                       "variant 'naive' computes f32 (f32 inputs, f32 math, f32 C), not --dtype f16 --out-dtype f16 "
                       "(run it with --dtype f32)"},
        BadCommandLine{"OutOfCoreKeepsCInF32",
                       {"bench", "--out-of-core", "--dtype", "bf16", "--out-dtype", "bf16", "--sizes", "64"},
                       "--out-of-core keeps C in float32, so it takes --out-dtype f32 only, not bf16"},
        BadCommandLine{"DistributedKeepsCInF32",
                       {"bench", "--gpus", "2", "--dtype", "f16", "--out-dtype", "f16", "--sizes", "64"},
                       "--gpus 2 keeps C in float32, so it takes --out-dtype f32 only, not f16"},
        BadCommandLine{"ExplainOutOfCoreKeepsCInF32",
                       {"explain", "auto", "--out-of-core", "--dtype", "bf16", "--out-dtype", "bf16", "--mnk",
                        "64x64x64"},
                       "--out-of-core keeps C in float32"},
        // Values the run could not honour: named with the flag and what is valid.
        BadCommandLine{"AlphaNan", bench_with({"--alpha", "nan"}), "--alpha 'nan' is not finite"},
        BadCommandLine{"BetaInf", bench_with({"--beta", "inf"}), "--beta 'inf' is not finite"},
        BadCommandLine{"AlphaBeyondFloat", bench_with({"--alpha", "1e39"}), "magnitude at most 3.403e+38"},
        BadCommandLine{"BetaNotANumber", bench_with({"--beta", "half"}), "--beta 'half'"},
        BadCommandLine{"VerifyAlphaNan", {"verify", "--backend", "cpu", "--alpha", "-nan"}, "--alpha"},
        BadCommandLine{"SeedNegative", bench_with({"--seed", "-5"}), "0 to 18446744073709551615"},
        BadCommandLine{"SeedTooLarge", bench_with({"--seed", "18446744073709551616"}), "--seed '18446744073709551616'"},
        BadCommandLine{"SeedFraction", bench_with({"--seed", "1.5"}), "--seed '1.5'"},
        BadCommandLine{"ExplainSeedNegative", {"explain", "naive", "--backend", "cpu", "--seed", "-1"}, "--seed '-1'"},
        BadCommandLine{"SizesEmpty", bench_with({"--sizes", ""}, false), "--sizes '' is empty"},
        BadCommandLine{"MnkEmpty", bench_with({"--mnk", ""}, false), "--mnk '' is empty"},
        BadCommandLine{"VariantsEmpty", bench_with({"--variants", ""}), "--variants '' is empty"},
        BadCommandLine{"SizesTwice", bench_with({"--sizes", "8,16,8"}, false), "names 8 twice"},
        BadCommandLine{"MnkTwice", bench_with({"--mnk", "2x3x4,2x3x4"}, false), "names 2x3x4 twice"},
        BadCommandLine{"ExplainVariantEmpty", {"explain", "", "--backend", "cpu"}, "is empty"},
        BadCommandLine{"ExplainVariantTwice", {"explain", "naive,naive", "--backend", "cpu"}, "'naive' twice"},
        BadCommandLine{"MemExperimentsEmpty", {"mem", "--experiments", ""}, "--experiments '' is empty"},
        BadCommandLine{"FlagGivenTwice", bench_with({"--seed", "1", "--seed", "2"}), "--seed is given more than once"},
        BadCommandLine{"MinTimeNan", bench_with({"--min-time", "nan"}, false), "--min-time"},
        BadCommandLine{"MaxTimeZero", bench_with({"--max-time", "0"}), "--max-time"},
        BadCommandLine{"MaxTimeInf", bench_with({"--max-time", "inf"}), "--max-time"},
        BadCommandLine{"MaxSpreadNegative", bench_with({"--max-spread", "-1"}), "--max-spread"},
        BadCommandLine{"BackToBackZero", bench_with({"--back-to-back", "0"}), "--back-to-back"},
        BadCommandLine{"BackToBackOutOfCore", bench_with({"--back-to-back", "4", "--out-of-core"}), "--back-to-back"},
        BadCommandLine{"ProfileBackToBack", {"bench", "--backend", "cpu", "--profile", "--back-to-back", "4"}, "--profile"},
        BadCommandLine{"InterleaveUnknown", bench_with({"--interleave", "sometimes"}), "sometimes"},
        BadCommandLine{"L2FlushOnCpu", bench_with({"--l2-flush", "write"}), "--l2-flush write applies to the GPU"},
        BadCommandLine{"SamplesWithoutJson", bench_with({"--samples"}), "--samples"},
        BadCommandLine{"ExplainAsCsv", bench_with({"--explain", "--format", "csv"}), "--explain"},
        BadCommandLine{"ProfileWithReps", {"bench", "--backend", "cpu", "--profile", "--reps", "3"}, "--profile"},
        BadCommandLine{"ProfileWithSamples", {"bench", "--backend", "cpu", "--profile", "--samples"}, "--profile"},
        BadCommandLine{"CompareMissingFile", {"compare", "/nonexistent/a.json", "/nonexistent/b.json"},
                       "cannot read '/nonexistent/a.json'"},
        BadCommandLine{"CompareOneFile", {"compare", "a.json"}, "new"},
        BadCommandLine{"CompareThresholdNan", {"compare", "a.json", "b.json", "--threshold", "nan"}, "--threshold"},
        BadCommandLine{"CompareFormatUnknown", {"compare", "a.json", "b.json", "--format", "html"}, "html"}),
    [](const ::testing::TestParamInfo<BadCommandLine>& param) { return std::string(param.param.name); });

// The help names every --dtype, the FP8 ones among them, and says what C they take.
TEST(CliUsage, HelpListsTheFp8DTypes) {
  for (const char* command : {"bench", "verify", "explain"}) {
    const ProgramRun run = gemmlab({command, "--help"});
    ASSERT_EQ(run.exit_code, 0) << explain(run);
    EXPECT_NE(run.out.find("{f32,tf32,bf16,f16,e4m3,e5m2}"), std::string::npos) << command << "\n" << explain(run);
    EXPECT_NE(run.out.find("e4m3 or e5m2 (FP8 inputs quantised with a per-tensor scale"), std::string::npos)
        << command << "\n" << explain(run);
    EXPECT_NE(run.out.find("with --dtype e4m3 or e5m2 either"), std::string::npos) << command;
  }
}

// A misspelt variant is caught before anything is written: no half-made report file.
TEST(CliUsage, UnknownVariantCreatesNoOutputFile) {
  const ScratchDir dir;
  const std::filesystem::path path = dir.path() / "report.json";
  const ProgramRun run = gemmlab(bench_with({"--variants", "nosuch", "--output", path.string()}));
  EXPECT_EQ(run.exit_code, kExitUsage) << explain(run);
  EXPECT_FALSE(std::filesystem::exists(path)) << explain(run);
}

// Whether this machine can run the CUDA backend, as `gemmlab list` reports it.
bool cuda_usable() {
  const ProgramRun run = gemmlab({"list", "--backend", "cuda"});
  return run.out.find("not in this build") == std::string::npos &&
         run.out.find("no CUDA device") == std::string::npos;
}

TEST(CliRuntimeError, CudaWithoutAGpuSaysSoAndExitsOne) {
  if (cuda_usable()) GTEST_SKIP() << "this machine has a CUDA device";
  const ProgramRun run = gemmlab(quick({"bench", "--backend", "cuda", "--sizes", "4"}));
  EXPECT_EQ(run.exit_code, kExitFailure) << explain(run);
  EXPECT_TRUE(run.out.empty()) << explain(run);
  const std::vector<std::string> lines = run.err_lines();
  ASSERT_EQ(lines.size(), 1u) << explain(run);
  EXPECT_NE(lines[0].find("--backend cuda"), std::string::npos) << explain(run);
  EXPECT_NE(lines[0].find("no CUDA"), std::string::npos) << explain(run);
}

}  // namespace
}  // namespace gemmlab::testing
