// The bf16 and f16 GEMMs whose C (and the beta input) is stored in the input type, as
// frameworks call them: mma_sync_bf16_bf16 and mma_sync_f16_f16 (11_mma_sync.cu) and their
// anchors cublas_bf16_bf16 and cublas_f16_f16, run through the library on their stored
// inputs and checked against the float64 reference: every transposition, both layouts,
// ragged shapes, ld > cols (odd and even, so both of the epilogue's store widths), alpha and
// beta, beta = 0 over NaN (nothing may leak, every element must be written), C's padding
// untouched; and, with integer inputs whose float32 sums are exact, every element of the rung
// equal to the reference rounded once, to nearest even. Label: gpu; skipped without a device.
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
#include <utility>
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

constexpr const char* kC16Variants[] = {"mma_sync_bf16_bf16", "mma_sync_f16_f16", "cublas_bf16_bf16",
                                        "cublas_f16_f16"};
constexpr const char* kC16Rungs[] = {"mma_sync_bf16_bf16", "mma_sync_f16_f16"};

// 1x1x1, k = 1, primes, a tile (128) +- 1, one aligned shape (every extent a multiple of 8:
// the cp.async path at pad 0), tall and wide.
const std::vector<testing::Dims> kShapes = {{1, 1, 1},       {17, 33, 5},    {33, 17, 1},  {127, 129, 65},
                                            {131, 67, 137},  {136, 264, 72}, {300, 7, 31}, {5, 260, 16}};

// alpha, beta and the ld padding: beta = 0 over NaN at the tight ld; beta != 0 at an odd and
// an even padding, so that C's rows take the paired stores on some shapes and single ones on
// the others.
struct Scalars {
  double alpha, beta;
  std::int64_t pad;
};
constexpr Scalars kScalars[] = {{1.0, 0.0, 0}, {-1.5, 0.75, 3}, {0.5, -1.25, 1}};

enum class Check {
  Tolerance,  // within the bound of the variant's types (verify(): tolerance_for)
  Exact,      // that, and equal to the reference rounded once, to nearest even (integer inputs)
};

// Runs `v` through the library on the problem `spec` describes, A and B stored in v.input and
// C in v.output (the values rounded to them first, so the reference reads what the device
// does), and checks C. `may_refuse_smem`: a forced configuration may need more shared memory
// than this GPU has, which the rung must say.
void check_problem(const Variant& v, const testing::ProblemSpec& spec, Check check, bool may_refuse_smem = false) {
  SCOPED_TRACE(v.name + " (" + v.config_name + ") " + spec.describe());
  testing::HostProblem hp = testing::make_host_problem(spec);
  testing::Encoded ab;
  testing::store_as(hp, v.input, ab);
  std::vector<std::byte> c_before;
  testing::store_c_as(hp, v, c_before);
  const GemmProblem& host = hp.problem;
  ReferenceResult ref;
  ASSERT_TRUE(reference_gemm(host, ref).is_ok());

  std::vector<float> result;
  const Status ran = testing::run_on_device(v, host, ab.a, ab.b, c_before, result);
  if (may_refuse_smem && ran.code() == StatusCode::NotSupported &&
      ran.message().find("of shared memory per block; this GPU allows") != std::string::npos) {
    std::printf("note: %s\n", ran.message().c_str());
    return;
  }
  ASSERT_TRUE(ran.is_ok()) << ran.describe();
  // Every bf16 and f16 value (NaN included) is a float: C's padding compares bit for bit.
  const Verification verification = verify(host, result, hp.c_before, ref, spec.nan_c, v.tolerance);
  EXPECT_TRUE(verification.passed) << verification.summary();
  if (check == Check::Exact) {
    EXPECT_TRUE(testing::rounds_reference_once(host, result, ref));
  }
}

constexpr const char* kNoDevice = "no CUDA device on this machine (or no CUDA in this build)";

// Those of `names` this device and build can run (mma_sync needs sm_80), with a note for
// each of the others.
std::vector<const Variant*> runnable(std::span<const char* const> names) {
  std::vector<const Variant*> out;
  for (const char* name : names) {
    const Variant* v = find_variant(Backend::Cuda, name);
    if (!v) {
      ADD_FAILURE() << name << " is not in the registry";
      continue;
    }
    if (const std::string why = unavailable_here(*v); !why.empty()) {
      std::printf("note: %s cannot run here: %s\n", name, why.c_str());
      continue;
    }
    out.push_back(v);
  }
  return out;
}

using Case = testing::TypedCase;

class C16 : public ::testing::TestWithParam<Case> {};

TEST_P(C16, MatchesTheReference) {
  const auto [name, op_a, op_b, layout] = GetParam();
  if (!cuda_device_present()) GTEST_SKIP() << kNoDevice;
  const Variant* v = find_variant(Backend::Cuda, name);
  ASSERT_NE(v, nullptr) << name << " is not in the registry";
  if (const std::string why = unavailable_here(*v); !why.empty()) GTEST_SKIP() << name << " cannot run here: " << why;
  testing::Seeds seeds;
  for (const testing::Dims& d : kShapes)
    for (const Scalars& s : kScalars) {
      const std::uint64_t seed = seeds.next();
      SCOPED_TRACE(seeds.describe(seed));
      check_problem(*v,
                    {.m = d.m, .n = d.n, .k = d.k, .op_a = op_a, .op_b = op_b, .layout = layout,
                     .ld_padding = s.pad, .alpha = s.alpha, .beta = s.beta, .seed = seed, .nan_c = s.beta == 0.0},
                    Check::Tolerance);
    }
}

INSTANTIATE_TEST_SUITE_P(AllTranspositionsAndLayouts, C16,
                         ::testing::Combine(::testing::ValuesIn(kC16Variants), ::testing::ValuesIn(testing::kOps),
                                            ::testing::ValuesIn(testing::kOps), ::testing::ValuesIn(testing::kLayouts)),
                         testing::typed_case_name);

// Integers in [-4, 4]: the float32 sums are exact, and so is the epilogue with power-of-two
// alpha and beta, so each element must be the reference rounded once, to nearest even (bf16
// keeps integers exact only to 256 and f16 to 2048: the larger results round, ties
// included). With beta = 0, alpha = 1.1f (24 significant bits) makes almost every element
// round: alpha * acc to float32 (as the reference's value does when it is made a float), then
// to the output type.
TEST(C16, RungRoundsOnceToNearestEven) {
  if (!cuda_device_present()) GTEST_SKIP() << kNoDevice;
  const std::vector<const Variant*> rungs = runnable(kC16Rungs);
  if (rungs.empty()) GTEST_SKIP() << "no mma_sync rung runs here";
  constexpr testing::Dims kExactShapes[] = {{127, 129, 65}, {136, 264, 129}, {33, 17, 1}};
  testing::Seeds seeds;
  for (const Variant* v : rungs) {
    for (Op op_a : testing::kOps)
      for (Op op_b : testing::kOps)
        for (Layout layout : testing::kLayouts)
          for (const testing::Dims& d : kExactShapes)
            for (const auto& [alpha, beta, pad] : {Scalars{double{1.1f}, 0.0, 0}, Scalars{0.5, -2.0, 3}}) {
              const std::uint64_t seed = seeds.next();
              SCOPED_TRACE(seeds.describe(seed));
              check_problem(*v,
                            {.m = d.m, .n = d.n, .k = d.k, .op_a = op_a, .op_b = op_b, .layout = layout,
                             .ld_padding = pad, .alpha = alpha, .beta = beta, .seed = seed,
                             .distribution = Distribution::Integer, .nan_c = beta == 0.0},
                            Check::Exact);
            }
  }
}

// The types each variant declares and checks, and the model's C at 2 bytes an element.
TEST(C16, DeclaresItsTypes) {
  if (!cuda_device_present()) GTEST_SKIP() << kNoDevice;
  const std::vector<const Variant*> c16 = runnable(kC16Variants);
  if (c16.empty()) GTEST_SKIP() << "none of them runs here";
  for (const Variant* v : c16) {
    const std::string& name = v->name;
    const DType input = v->input;
    EXPECT_TRUE(input == DType::BF16 || input == DType::F16) << name;
    EXPECT_EQ(v->output, input) << name;
    EXPECT_TRUE(v->precision() == *precision_for(input, input)) << name;
    EXPECT_NE(v->technique.find(std::string(to_string(input)) + (v->anchor ? " out" : " C")), std::string::npos)
        << name << ": " << v->technique;
    testing::HostProblem hp = testing::make_host_problem({.m = 64, .n = 48, .k = 32, .beta = 0.5});
    testing::Encoded ab;
    testing::store_as(hp, input, ab);
    GemmProblem p = hp.problem;
    p.compute = v->compute;
    // A float32 C is the f32-C variant's, not this one's.
    const Status f32_c = v->can_implement(p);
    EXPECT_EQ(f32_c.code(), StatusCode::NotSupported) << name << ": " << f32_c.describe();
    p.c.dtype = input;
    EXPECT_TRUE(v->can_implement(p).is_ok()) << name;
    if (v->model) {
      const Traffic t = v->model(p);
      EXPECT_EQ(t.global_store_bytes, 64.0 * 48.0 * 2.0) << name;
    }
  }
}

// Each named configuration of the rungs, bound (gemmlab::configure), stays a 16-bit-C rung
// of the same name and types, and runs on every transposition, rows 16-byte aligned (pad 8
// on a multiple of 8: cp.async and paired stores) and not (guarded loads, single stores).
TEST(C16, EveryRungConfiguration) {
  if (!cuda_device_present()) GTEST_SKIP() << kNoDevice;
  const std::vector<const Variant*> rungs = runnable(kC16Rungs);
  if (rungs.empty()) GTEST_SKIP() << "no mma_sync rung runs here";
  testing::Seeds seeds;
  for (const Variant* v : rungs) {
    ASSERT_GT(v->configs.size(), 1u) << v->name;
    for (const NamedConfig& named : v->configs) {
      Variant configured;
      const Status bound = configure(*v, named.name, configured);
      ASSERT_TRUE(bound.is_ok()) << bound.describe();
      EXPECT_EQ(configured.name, v->name);
      EXPECT_EQ(configured.config_name, named.name);
      EXPECT_TRUE(configured.precision() == v->precision()) << named.name;
      EXPECT_EQ(configured.technique, v->technique);
      for (Op op_a : testing::kOps)
        for (Op op_b : testing::kOps)
          for (const auto& [d, pad] : {std::pair{testing::Dims{296, 264, 136}, std::int64_t{8}},
                                       std::pair{testing::Dims{301, 259, 67}, std::int64_t{0}}}) {
            const std::uint64_t seed = seeds.next();
            SCOPED_TRACE(seeds.describe(seed));
            check_problem(configured,
                          {.m = d.m, .n = d.n, .k = d.k, .op_a = op_a, .op_b = op_b, .ld_padding = pad,
                           .alpha = 0.75, .beta = 0.5, .seed = seed},
                          Check::Tolerance, /*may_refuse_smem=*/named.name != "auto");
          }
    }
  }
}

}  // namespace
}  // namespace gemmlab
