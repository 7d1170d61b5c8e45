// The FP8 GEMMs: the wgmma_ws_e4m3 / _e5m2 rungs (16_wgmma_fp8.cu, C in f32, bf16 or f16) and
// their anchor cublaslt_e4m3*, run through the library on FP8 inputs with per-tensor scales
// and checked against the float64 reference of the dequantised inputs, within the bound of
// sums promoted every 128 of K (tolerance_for): every transposition and layout (the rungs
// copy an operand that is not K-major; the anchor takes only K-major ones with 16-byte
// pitches and must say so),
// ragged shapes, k across several promoted stages, ld > cols (16-byte rows and not), alpha,
// beta and scales, beta = 0 over NaN, C's padding untouched. Label: gpu; skipped without a
// device or without sm_90a code.
#include <gtest/gtest.h>

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "core/element.hpp"
#include "core/reference.hpp"
#include "core/verify.hpp"
#include "cuda/runtime/buffer.hpp"
#include "gemmlab/availability.hpp"
#include "gemmlab/gemm.hpp"
#include "gemmlab/registry.hpp"
#include "support/context.hpp"
#include "support/device_c.hpp"
#include "support/encoded.hpp"
#include "support/host_problem.hpp"
#include "support/seeds.hpp"

namespace gemmlab {
namespace {

constexpr const char* kFp8Variants[] = {"wgmma_ws_e4m3",      "wgmma_ws_e4m3_bf16", "wgmma_ws_e4m3_f16",
                                        "wgmma_ws_e5m2",      "wgmma_ws_e5m2_bf16", "wgmma_ws_e5m2_f16",
                                        "cublaslt_e4m3",      "cublaslt_e4m3_bf16", "cublaslt_e4m3_f16"};

// 1x1x1, k = 1, primes, a tile (128 x 256) +- 1, K one stage (128) +- 1 and several stages
// (each a promoted partial sum), tall and wide; one shape of 16-byte rows at pad 0.
const std::vector<testing::Dims> kShapes = {{1, 1, 1},      {17, 33, 5},      {33, 17, 1},    {127, 257, 129},
                                            {129, 255, 127}, {131, 67, 1000}, {256, 512, 384}, {300, 7, 31},
                                            {5, 260, 2053}};

// alpha, beta, the ld padding and the per-tensor scales: beta = 0 over NaN at the tight ld;
// beta != 0 at a padding that leaves rows off 16 bytes (padded copies) and at one that keeps
// them on it where the extent is a multiple of 16.
struct Scalars {
  double alpha, beta;
  std::int64_t pad;
  double scale_a, scale_b;
};
constexpr Scalars kScalars[] = {{1.0, 0.0, 0, 1.0, 1.0}, {-1.5, 0.75, 3, 0.37, 2.5}, {0.5, -1.25, 16, 3.0, 0.0625}};

// Runs `v` through the library on the problem `spec` describes, A and B stored in v.input,
// their scales multiplied by those of `s`, C in v.output, and checks C: within the bound, and
// with `exact` (integer inputs stored as they are), every element the reference rounded
// once. Returns false where the variant refused the problem as it documents (the anchor:
// K-major operands, pitches of 16 bytes).
bool check_problem(const Variant& v, const testing::ProblemSpec& spec, const Scalars& s, bool exact = false) {
  SCOPED_TRACE(v.name + " (" + v.config_name + ") " + spec.describe() +
               fmt::format(" scales x{} x{}", s.scale_a, s.scale_b));
  testing::HostProblem hp = testing::make_host_problem(spec);
  testing::Encoded ab;
  // Quantised per tensor as the harness does; integer inputs as they are (exact).
  testing::store_as(hp, v.input, ab, exact ? testing::Fp8Storage::AsTheyAre : testing::Fp8Storage::Quantised);
  std::vector<std::byte> c_before;
  testing::store_c_as(hp, v, c_before);
  GemmProblem& host = hp.problem;
  host.scale_a *= s.scale_a;
  host.scale_b *= s.scale_b;
  if (v.anchor) {
    const Status can = v.can_implement(host);
    if (!can.is_ok()) {
      EXPECT_EQ(can.code(), StatusCode::NotSupported) << can.describe();
      EXPECT_NE(can.message().find("cuBLASLt's FP8 matmul takes"), std::string::npos) << can.describe();
      return false;
    }
  }
  ReferenceResult ref;
  EXPECT_TRUE(reference_gemm(host, ref).is_ok());

  std::vector<float> result;
  const Status ran = testing::run_on_device(v, host, ab.a, ab.b, c_before, result);
  EXPECT_TRUE(ran.is_ok()) << ran.describe();
  if (!ran.is_ok()) return true;
  const Verification verification = verify(host, result, hp.c_before, ref, spec.nan_c, v.tolerance);
  EXPECT_TRUE(verification.passed) << verification.summary();
  if (exact) {
    EXPECT_TRUE(testing::rounds_reference_once(host, result, ref));
  }
  return true;
}

constexpr const char* kNoDevice = "no CUDA device on this machine (or no CUDA in this build)";

using Case = testing::TypedCase;

class Fp8 : public ::testing::TestWithParam<Case> {};

TEST_P(Fp8, MatchesTheReference) {
  const auto [name, op_a, op_b, layout] = GetParam();
  if (!cuda_device_present()) GTEST_SKIP() << kNoDevice;
  const Variant* v = find_variant(Backend::Cuda, name);
  ASSERT_NE(v, nullptr) << name << " is not in the registry";
  if (const std::string why = unavailable_here(*v); !why.empty()) GTEST_SKIP() << name << " cannot run here: " << why;
  testing::Seeds seeds;
  int ran = 0;
  for (const testing::Dims& d : kShapes)
    for (const Scalars& s : kScalars) {
      const std::uint64_t seed = seeds.next();
      SCOPED_TRACE(seeds.describe(seed));
      ran += check_problem(*v,
                           {.m = d.m, .n = d.n, .k = d.k, .op_a = op_a, .op_b = op_b, .layout = layout,
                            .ld_padding = s.pad, .alpha = s.alpha, .beta = s.beta, .seed = seed,
                            .nan_c = s.beta == 0.0},
                           s);
    }
  // A rung runs every case; the anchor refuses every case of an operand that is not K-major.
  if (!v->anchor) {
    EXPECT_EQ(ran, static_cast<int>(kShapes.size() * std::size(kScalars)));
  }
}

INSTANTIATE_TEST_SUITE_P(AllTranspositionsAndLayouts, Fp8,
                         ::testing::Combine(::testing::ValuesIn(kFp8Variants), ::testing::ValuesIn(testing::kOps),
                                            ::testing::ValuesIn(testing::kOps), ::testing::ValuesIn(testing::kLayouts)),
                         testing::typed_case_name);

// Each named configuration of the rungs runs a shape of several tiles and stages, NT (no
// copies) and NN (B copied K-major), bound through gemmlab::configure.
TEST(Fp8, EveryRungConfiguration) {
  if (!cuda_device_present()) GTEST_SKIP() << kNoDevice;
  testing::Seeds seeds;
  for (const char* name : {"wgmma_ws_e4m3", "wgmma_ws_e5m2_bf16"}) {
    const Variant* v = find_variant(Backend::Cuda, name);
    ASSERT_NE(v, nullptr) << name;
    if (const std::string why = unavailable_here(*v); !why.empty()) GTEST_SKIP() << name << " cannot run here: " << why;
    ASSERT_GT(v->configs.size(), 1u) << name;
    for (const NamedConfig& c : v->configs) {
      Variant bound;
      ASSERT_TRUE(configure(*v, c.name, bound).is_ok()) << name << " " << c.name;
      for (Op op_b : testing::kOps) {
        const std::uint64_t seed = seeds.next();
        SCOPED_TRACE(seeds.describe(seed));
        check_problem(bound,
                      {.m = 400, .n = 700, .k = 600, .op_a = Op::N, .op_b = op_b, .alpha = 0.75, .beta = 0.5,
                       .seed = seed},
                      {0.75, 0.5, 0, 0.5, 1.5});
      }
    }
  }
}

// Integers in [-4, 4], stored as they are with power-of-two scales, alpha and beta: every
// product is exact, every 128-deep partial sum (at most 2048 in magnitude) fits the tensor
// cores' adder, and so do the float32 sums of the partials, so every element of C must be the
// reference rounded once (to C's type). A stage dropped, repeated or promoted twice shows
// here, where the bound of 14-bit partial sums, loose by design, might let it pass.
TEST(Fp8, IntegerSumsAreExact) {
  if (!cuda_device_present()) GTEST_SKIP() << kNoDevice;
  constexpr testing::Dims kExactShapes[] = {{127, 257, 129}, {136, 264, 1000}, {33, 17, 1}, {200, 300, 2053}};
  testing::Seeds seeds;
  for (const char* name : kFp8Variants) {
    const Variant* v = find_variant(Backend::Cuda, name);
    ASSERT_NE(v, nullptr) << name;
    if (const std::string why = unavailable_here(*v); !why.empty()) {
      std::printf("note: %s cannot run here: %s\n", name, why.c_str());
      continue;
    }
    for (Op op_a : testing::kOps)
      for (Op op_b : testing::kOps)
        for (const testing::Dims& d : kExactShapes) {
          const std::uint64_t seed = seeds.next();
          SCOPED_TRACE(seeds.describe(seed));
          check_problem(*v,
                        {.m = d.m, .n = d.n, .k = d.k, .op_a = op_a, .op_b = op_b, .ld_padding = 3, .alpha = 0.5,
                         .beta = -2.0, .seed = seed, .distribution = Distribution::Integer},
                        {0.5, -2.0, 3, 2.0, 0.25}, /*exact=*/true);
        }
  }
}

}  // namespace
}  // namespace gemmlab
