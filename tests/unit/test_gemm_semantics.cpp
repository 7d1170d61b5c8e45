// The problem semantics, through gemm(), for every CPU rung in the registry: results against
// the float64 reference on every layout and op, beta = 0 never reads C, k = 0 and alpha = 0
// never read A or B, m = 0 or n = 0 touches nothing, inputs and ld padding stay as they were.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/verify.hpp"
#include "gemmlab/gemm.hpp"
#include "gemmlab/registry.hpp"
#include "support/assertions.hpp"
#include "support/context.hpp"
#include "support/host_problem.hpp"
#include "support/seeds.hpp"

namespace gemmlab {
namespace {

using testing::bitwise_equal;
using testing::Dims;
using testing::HostProblem;
using testing::kLayouts;
using testing::kOps;
using testing::make_host_problem;
using testing::ProblemSpec;

// Dyadic, so that results with integer inputs are exact in float32.
constexpr double kAlpha = 0.75;
constexpr double kBeta = -1.5;
constexpr std::int64_t kPadding = 3;

// Shapes a little past the awkward ones: a few 4- and 8-wide blocks plus a remainder, and a
// k long enough for rounding to matter.
constexpr Dims kUnevenDims{33, 65, 17};
constexpr Dims kLongK{29, 31, 257};

std::vector<std::string> cpu_variant_names() {
  std::vector<std::string> names;
  for (const Variant& v : variants(Backend::Cpu)) names.push_back(v.name);
  return names;
}

class CpuGemm : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    variant_ = find_variant(Backend::Cpu, GetParam());
    ASSERT_NE(variant_, nullptr);
    // A rung this machine cannot run (no OpenBLAS, no AVX-512) says so and is skipped, visibly.
    const HostProblem probe = make_host_problem({.m = 2, .n = 2, .k = 2, .seed = testing::Seeds().next()});
    if (const Status s = variant_->can_implement(probe.problem); s.code() == StatusCode::NotSupported)
      GTEST_SKIP() << GetParam() << ": " << s.describe();
  }

  // Runs the rung; the inputs must come back unchanged.
  void run(HostProblem& hp) {
    const std::vector<float> a_before = hp.a.storage, b_before = hp.b.storage;
    const Status status = gemm(testing::cpu_context(), hp.problem, *variant_);
    ASSERT_TRUE(status.is_ok()) << status.describe();
    EXPECT_TRUE(bitwise_equal(a_before, hp.a.storage)) << "A was written";
    EXPECT_TRUE(bitwise_equal(b_before, hp.b.storage)) << "B was written";
  }

  // Runs and verifies against the float64 reference with the error-analysis tolerance.
  void run_and_verify(const ProblemSpec& spec, bool exact) {
    HostProblem hp = make_host_problem(spec);
    ReferenceResult reference;
    ASSERT_TRUE(testing::host_reference(hp, reference).is_ok());
    ASSERT_NO_FATAL_FAILURE(run(hp));
    const Verification v = testing::verify_result(hp, hp.c.storage, reference);
    EXPECT_TRUE(v.passed) << v.summary();
    if (exact) {
      EXPECT_TRUE(testing::equals_reference(hp, hp.c.storage, reference));
    }
  }

  const Variant* variant_ = nullptr;
};

TEST_P(CpuGemm, EqualsTheReferenceExactlyOnIntegerInputs) {
  testing::Seeds seeds;
  std::vector<Dims> shapes(testing::kAwkwardDims.begin(), testing::kAwkwardDims.end());
  shapes.push_back(kUnevenDims);
  int index = 0;
  for (const Dims& d : shapes)
    for (const Layout layout : kLayouts)
      for (const Op op_a : kOps)
        for (const Op op_b : kOps) {
          const ProblemSpec spec{.m = d.m, .n = d.n, .k = d.k, .op_a = op_a, .op_b = op_b,
                                 .layout = layout, .ld_padding = (index++ % 2) * kPadding,
                                 .alpha = kAlpha, .beta = kBeta, .seed = seeds.next(),
                                 .distribution = Distribution::Integer};
          SCOPED_TRACE(spec.describe() + ", " + seeds.describe(spec.seed));
          run_and_verify(spec, /*exact=*/true);
        }
}

TEST_P(CpuGemm, AgreesWithTheReferenceOnUniformInputs) {
  testing::Seeds seeds;
  for (const Dims& d : {kUnevenDims, kLongK})
    for (const Layout layout : kLayouts)
      for (const Op op_a : kOps)
        for (const Op op_b : kOps) {
          const ProblemSpec spec{.m = d.m, .n = d.n, .k = d.k, .op_a = op_a, .op_b = op_b,
                                 .layout = layout, .ld_padding = kPadding, .alpha = -1.25,
                                 .beta = 0.5, .seed = seeds.next()};
          SCOPED_TRACE(spec.describe() + ", " + seeds.describe(spec.seed));
          run_and_verify(spec, /*exact=*/false);
        }
}

// A, B and C each in their own storage order.
TEST_P(CpuGemm, HandlesMixedLayouts) {
  testing::Seeds seeds;
  for (const Layout layout_a : kLayouts)
    for (const Layout layout_b : kLayouts)
      for (const Layout layout_c : kLayouts)
        for (const Op op_a : kOps)
          for (const Op op_b : kOps) {
            const ProblemSpec spec{.m = 11, .n = 13, .k = 7, .op_a = op_a, .op_b = op_b,
                                   .layout_a = layout_a, .layout_b = layout_b, .layout_c = layout_c,
                                   .ld_padding = 1, .alpha = kAlpha, .beta = kBeta,
                                   .seed = seeds.next(), .distribution = Distribution::Integer};
            SCOPED_TRACE(spec.describe() + ", " + seeds.describe(spec.seed));
            run_and_verify(spec, /*exact=*/true);
          }
}

// beta = 0: C is written, never read; the NaN it held must not leak.
TEST_P(CpuGemm, BetaZeroIgnoresNaNInC) {
  testing::Seeds seeds;
  for (const Dims& d : {Dims{1, 1, 1}, kUnevenDims})
    for (const Layout layout : kLayouts)
      for (const Op op_a : kOps)
        for (const Op op_b : kOps) {
          const ProblemSpec spec{.m = d.m, .n = d.n, .k = d.k, .op_a = op_a, .op_b = op_b,
                                 .layout = layout, .ld_padding = kPadding, .alpha = -1.25,
                                 .beta = 0.0, .seed = seeds.next(), .nan_c = true};
          SCOPED_TRACE(spec.describe() + ", " + seeds.describe(spec.seed));
          HostProblem hp = make_host_problem(spec);
          ReferenceResult reference;
          ASSERT_TRUE(testing::host_reference(hp, reference).is_ok());
          ASSERT_NO_FATAL_FAILURE(run(hp));
          EXPECT_TRUE(testing::no_nan_in_c(hp, hp.c.storage));
          const Verification v = testing::verify_result(hp, hp.c.storage, reference);
          EXPECT_TRUE(v.passed) << v.summary();
          EXPECT_EQ(v.unwritten, 0);
        }
}

// k = 0: C <- beta * C, with A and B null (legal: they have no elements).
TEST_P(CpuGemm, KZeroScalesCWithoutReadingAOrB) {
  testing::Seeds seeds;
  for (const Layout layout : kLayouts)
    for (const Op op_a : kOps)
      for (const double beta : {kBeta, 0.0}) {
        const ProblemSpec spec{.m = 9, .n = 14, .k = 0, .op_a = op_a, .op_b = op_a, .layout = layout,
                               .ld_padding = kPadding, .alpha = kAlpha, .beta = beta,
                               .seed = seeds.next(), .distribution = Distribution::Integer,
                               .nan_c = beta == 0.0, .null_when_empty = true};
        SCOPED_TRACE(spec.describe() + ", " + seeds.describe(spec.seed));
        HostProblem hp = make_host_problem(spec);
        ASSERT_EQ(hp.problem.a.data, nullptr);
        ASSERT_EQ(hp.problem.b.data, nullptr);
        ReferenceResult reference;
        ASSERT_TRUE(testing::host_reference(hp, reference).is_ok());
        ASSERT_NO_FATAL_FAILURE(run(hp));
        EXPECT_TRUE(testing::equals_reference(hp, hp.c.storage, reference));
        EXPECT_TRUE(testing::verify_result(hp, hp.c.storage, reference).passed);
      }
}

// alpha = 0: C <- beta * C; A and B hold NaN, which must not be read.
TEST_P(CpuGemm, AlphaZeroIgnoresNaNInAAndB) {
  testing::Seeds seeds;
  for (const Layout layout : kLayouts)
    for (const Op op_a : kOps)
      for (const double beta : {kBeta, 0.0}) {
        const ProblemSpec spec{.m = 9, .n = 14, .k = 5, .op_a = op_a, .op_b = op_a, .layout = layout,
                               .ld_padding = kPadding, .alpha = 0.0, .beta = beta,
                               .seed = seeds.next(), .distribution = Distribution::Integer,
                               .nan_c = beta == 0.0, .nan_a = true, .nan_b = true};
        SCOPED_TRACE(spec.describe() + ", " + seeds.describe(spec.seed));
        HostProblem hp = make_host_problem(spec);
        ReferenceResult reference;
        ASSERT_TRUE(testing::host_reference(hp, reference).is_ok());
        ASSERT_NO_FATAL_FAILURE(run(hp));
        EXPECT_TRUE(testing::no_nan_in_c(hp, hp.c.storage));
        EXPECT_TRUE(testing::equals_reference(hp, hp.c.storage, reference));
      }
}

// m = 0 or n = 0: nothing happens; C's storage (all of it padding) keeps every bit.
TEST_P(CpuGemm, EmptyCIsANoOp) {
  testing::Seeds seeds;
  for (const Dims& d : {Dims{0, 6, 3}, Dims{4, 0, 3}, Dims{0, 0, 5}})
    for (const Layout layout : kLayouts)
      for (const bool null_when_empty : {false, true}) {
        const ProblemSpec spec{.m = d.m, .n = d.n, .k = d.k, .layout = layout, .ld_padding = 2,
                               .alpha = kAlpha, .beta = kBeta, .seed = seeds.next(),
                               .null_when_empty = null_when_empty};
        SCOPED_TRACE(spec.describe() + ", " + seeds.describe(spec.seed));
        HostProblem hp = make_host_problem(spec);
        ASSERT_NO_FATAL_FAILURE(run(hp));
        EXPECT_TRUE(bitwise_equal(hp.c_before, hp.c.storage));
      }
}

TEST_P(CpuGemm, RejectsAnInvalidProblemWithoutTouchingC) {
  testing::Seeds seeds;
  const std::uint64_t seed = seeds.next();
  SCOPED_TRACE(seeds.describe(seed));
  HostProblem hp = make_host_problem({.m = 6, .n = 5, .k = 4, .beta = kBeta, .seed = seed});
  hp.problem.c.ld = hp.problem.c.contiguous_extent() - 1;
  const Status s = gemm(testing::cpu_context(), hp.problem, *variant_);
  EXPECT_EQ(s.code(), StatusCode::InvalidValue);
  EXPECT_TRUE(testing::contains(s.message(), "ldc"));
  EXPECT_TRUE(bitwise_equal(hp.c_before, hp.c.storage));
}

INSTANTIATE_TEST_SUITE_P(Registry, CpuGemm, ::testing::ValuesIn(cpu_variant_names()),
                         [](const ::testing::TestParamInfo<std::string>& param) { return param.param; });

TEST(Gemm, UnknownVariantNameIsNotFound) {
  testing::Seeds seeds;
  HostProblem hp = make_host_problem({.m = 2, .n = 2, .k = 2, .seed = seeds.next()});
  const std::vector<float> c_before = hp.c.storage;
  const Status s = gemm(testing::cpu_context(), hp.problem, GemmOptions{.variant = "no_such_rung"});
  EXPECT_EQ(s.code(), StatusCode::NotFound);
  EXPECT_TRUE(testing::contains(s.message(), "no_such_rung"));
  EXPECT_EQ(find_variant(Backend::Cpu, "no_such_rung"), nullptr);
  EXPECT_TRUE(bitwise_equal(c_before, hp.c.storage));
}

TEST(Gemm, CpuRegistryHasTheRungsAndTheAnchors) {
  for (const char* name : {"naive", "openblas_sgemm", "openblas_sgemm_1t"}) {
    const Variant* v = find_variant(Backend::Cpu, name);
    ASSERT_NE(v, nullptr) << name;
    EXPECT_EQ(v->backend, Backend::Cpu);
    EXPECT_TRUE(v->can_implement && v->run && v->model) << name;
  }
  EXPECT_FALSE(find_variant(Backend::Cpu, "naive")->anchor);
  EXPECT_TRUE(find_variant(Backend::Cpu, "openblas_sgemm")->anchor);
  EXPECT_EQ(find_variant(Backend::Cpu, "openblas_sgemm_1t")->threads, 1);
}

}  // namespace
}  // namespace gemmlab
