// The out-of-core GEMM (gemmlab/out_of_core.hpp) on the GPU: host operands, tiles forced small
// so that every problem runs many tiles of C and blocks of K (edges partial in all three),
// verified in full against the float64 reference: both operations, both storage orders, padded
// leading dimensions, beta = 0 with NaN in C, k = 1, primes; page-locked and pageable memory;
// float32 (SIMT and 3xTF32), tf32 and bf16 block products. And the refusals: device pointers, a
// limit below one step, a CPU context. Label gpu; skipped without a device.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "gemmlab/availability.hpp"
#include "gemmlab/out_of_core.hpp"
#include "gemmlab/registry.hpp"
#include "support/assertions.hpp"
#include "support/context.hpp"
#include "support/encoded.hpp"
#include "support/host_problem.hpp"
#include "support/seeds.hpp"

namespace gemmlab {
namespace {

using testing::contains;
using testing::Encoded;
using testing::store_as;
using testing::HostProblem;
using testing::make_host_problem;
using testing::ProblemSpec;

bool have_device() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return n > 0;
}

// Whether `rung` runs on this device in this build (3xTF32 and the wgmma rungs need sm_90a).
bool runs_here(const std::string& rung) {
  const Variant* v = find_variant(Backend::Cuda, rung);
  return v && check_runs_here(*v).is_ok();
}

// Runs the out-of-core GEMM on `hp` (C computed in place in its host storage) and checks it.
void run_and_check(HostProblem& hp, const OutOfCoreOptions& options, DType compute) {
  hp.problem.compute = compute;
  ReferenceResult reference;
  ASSERT_TRUE(testing::host_reference(hp, reference).is_ok());
  OutOfCorePlan plan;
  const Status s = gemm_out_of_core(testing::cuda_context(), hp.problem, options, &plan);
  ASSERT_TRUE(s.is_ok()) << s.describe();
  const Verification v = verify(hp.problem, hp.c.storage, hp.c_before, reference, hp.spec.nan_c);
  EXPECT_TRUE(v.passed) << v.summary() << " | " << plan.describe();
}

OutOfCoreOptions small_tiles(const std::string& rung, std::int64_t tile) {
  OutOfCoreOptions o;
  o.in_core.variant = rung;
  o.tile_m = o.tile_n = o.tile_k = tile;
  return o;
}

TEST(OutOfCore, EveryLayoutAndOperationInManyTilesMatchesTheReference) {
  if (!have_device()) GTEST_SKIP() << "SKIPPED: no CUDA device";
  testing::Seeds seeds;
  for (const Layout layout : testing::kLayouts)
    for (const Op op_a : testing::kOps)
      for (const Op op_b : testing::kOps) {
        const ProblemSpec spec{.m = 300, .n = 277, .k = 331, .op_a = op_a, .op_b = op_b, .layout = layout,
                               .ld_padding = 3, .alpha = 0.75, .beta = -1.5, .seed = seeds.next()};
        SCOPED_TRACE(spec.describe());
        HostProblem hp = make_host_problem(spec);
        run_and_check(hp, small_tiles("pipelined", 128), DType::F32);
        // K in one block: one operand resident (A under TT, B under NN: the plan streams the
        // operand whose blocks are contiguous), both paths of the schedule.
        HostProblem whole_k = make_host_problem(spec);
        OutOfCoreOptions o = small_tiles("pipelined", 128);
        o.tile_k = spec.k;
        OutOfCorePlan plan;
        ASSERT_TRUE(plan_out_of_core(testing::cuda_context(), whole_k.problem, o, plan).is_ok());
        EXPECT_TRUE(plan.a_resident != plan.b_resident) << plan.describe();
        run_and_check(whole_k, o, DType::F32);
      }
}

TEST(OutOfCore, TheRampsPiecesMatchTheReference) {
  if (!have_device()) GTEST_SKIP() << "SKIPPED: no CUDA device";
  testing::Seeds seeds;
  // Tiles large enough to be cut: the first step's 1024 (or all 1100) of K in pieces of 256
  // (512), the last tile's 576 rows in pieces of 256 (the last 64); and a plan of one step,
  // which ramps up only. beta = 0 over NaN: only the first piece of K may apply beta.
  struct Tiles {
    std::int64_t m, n, k;
  };
  for (const Tiles t : {Tiles{1024, 512, 1024}, Tiles{1024, 512, 1100}, Tiles{2048, 2048, 2048}})
    for (const Op op_a : testing::kOps)
      for (const Op op_b : testing::kOps) {
        const ProblemSpec spec{.m = 1600, .n = 600, .k = 1100, .op_a = op_a, .op_b = op_b, .beta = 0.0,
                               .seed = seeds.next(), .nan_c = true};
        SCOPED_TRACE(spec.describe() + " tiles " + std::to_string(t.m) + "x" + std::to_string(t.n) + "x" +
                     std::to_string(t.k));
        HostProblem hp = make_host_problem(spec);
        OutOfCoreOptions o;
        o.in_core.variant = "pipelined";
        o.tile_m = t.m;
        o.tile_n = t.n;
        o.tile_k = t.k;
        run_and_check(hp, o, DType::F32);
      }
  if (!runs_here("wgmma_ws_bf16")) {
    std::printf("SKIPPED wgmma_ws_bf16: does not run on this device or build\n");
    return;
  }
  const ProblemSpec spec{.m = 1600, .n = 600, .k = 1100, .op_b = Op::T, .beta = 0.5, .seed = seeds.next()};
  HostProblem hp = make_host_problem(spec);
  Encoded encoded;
  store_as(hp, DType::BF16, encoded);
  OutOfCoreOptions o;
  o.in_core.variant = "wgmma_ws_bf16";
  o.tile_m = 1024;
  o.tile_n = 512;
  o.tile_k = 1024;
  run_and_check(hp, o, DType::F32);
}

TEST(OutOfCore, AwkwardShapesBetaZeroWithNaNAndKOne) {
  if (!have_device()) GTEST_SKIP() << "SKIPPED: no CUDA device";
  testing::Seeds seeds;
  for (const testing::Dims d : testing::kAwkwardDims)
    for (const double beta : {0.0, 2.0}) {
      const ProblemSpec spec{.m = d.m, .n = d.n, .k = d.k, .op_b = Op::T, .beta = beta,
                             .seed = seeds.next(), .nan_c = beta == 0.0};
      SCOPED_TRACE(spec.describe());
      HostProblem hp = make_host_problem(spec);
      run_and_check(hp, small_tiles("pipelined", 8), DType::F32);
    }
}

TEST(OutOfCore, TheModelsTilesUnderATightLimitOnPinnedMemory) {
  if (!have_device()) GTEST_SKIP() << "SKIPPED: no CUDA device";
  testing::Seeds seeds;
  // 1000 x 1200 x 1500 float32 is 15.2 MB; a 4 MB limit makes the model cut it.
  const ProblemSpec spec{.m = 1000, .n = 1200, .k = 1500, .op_a = Op::T, .beta = 0.5, .seed = seeds.next()};
  HostProblem hp = make_host_problem(spec);
  for (testing::HostMatrix* x : {&hp.a, &hp.b, &hp.c})
    ASSERT_EQ(cudaHostRegister(x->storage.data(), x->storage.size() * sizeof(float), cudaHostRegisterDefault),
              cudaSuccess);
  OutOfCoreOptions o;
  o.in_core.variant = "pipelined";
  o.device_memory_limit = 4u << 20;
  OutOfCorePlan plan;
  ASSERT_TRUE(plan_out_of_core(testing::cuda_context(), hp.problem, o, plan).is_ok());
  EXPECT_LE(plan.device_bytes, o.device_memory_limit);
  EXPECT_GT(plan.tiles_m * plan.tiles_n * plan.blocks_k, 1) << plan.describe();
  run_and_check(hp, o, DType::F32);
  for (testing::HostMatrix* x : {&hp.a, &hp.b, &hp.c}) EXPECT_EQ(cudaHostUnregister(x->storage.data()), cudaSuccess);
}

TEST(OutOfCore, TensorCoreBlockProducts) {
  if (!have_device()) GTEST_SKIP() << "SKIPPED: no CUDA device";
  testing::Seeds seeds;
  struct Case {
    std::string rung;
    DType storage, compute;
  };
  for (const Case& c : {Case{"wgmma_3xtf32", DType::F32, DType::F32}, Case{"wgmma_ws_tf32", DType::F32, DType::TF32},
                        Case{"wgmma_ws_bf16", DType::BF16, DType::F32}, Case{"mma_sync_bf16", DType::BF16, DType::F32}}) {
    if (!runs_here(c.rung)) {
      std::printf("SKIPPED %s: does not run on this device or build\n", c.rung.c_str());
      continue;
    }
    for (const Op op_b : testing::kOps) {
      const ProblemSpec spec{.m = 700, .n = 515, .k = 600, .op_b = op_b, .beta = 1.0, .seed = seeds.next()};
      SCOPED_TRACE(c.rung + " " + spec.describe());
      HostProblem hp = make_host_problem(spec);
      Encoded encoded;
      store_as(hp, c.storage, encoded);
      run_and_check(hp, small_tiles(c.rung, 256), c.compute);
    }
  }
}

TEST(OutOfCore, AutoChoosesARungAndScaleOnlyProblemsNeedNoDevice) {
  if (!have_device()) GTEST_SKIP() << "SKIPPED: no CUDA device";
  testing::Seeds seeds;
  HostProblem hp = make_host_problem({.m = 513, .n = 257, .k = 129, .seed = seeds.next()});
  run_and_check(hp, {}, DType::F32);
  // k = 0: C <- beta C; beta = 0 never reads the NaN in C.
  HostProblem zero_k = make_host_problem({.m = 40, .n = 30, .k = 0, .beta = 0.0, .seed = seeds.next(), .nan_c = true});
  run_and_check(zero_k, {}, DType::F32);
}

TEST(OutOfCore, RefusesDevicePointersTinyLimitsAndTheCpu) {
  if (!have_device()) GTEST_SKIP() << "SKIPPED: no CUDA device";
  testing::Seeds seeds;
  HostProblem hp = make_host_problem({.m = 600, .n = 600, .k = 600, .seed = seeds.next()});
  OutOfCoreOptions tiny;
  tiny.device_memory_limit = 1000;
  Status s = gemm_out_of_core(testing::cuda_context(), hp.problem, tiny);
  EXPECT_EQ(s.code(), StatusCode::InvalidValue);
  EXPECT_TRUE(contains(s.message(), "device memory limit"));
  EXPECT_TRUE(testing::bitwise_equal(hp.c_before, hp.c.storage));  // nothing written

  void* on_device = nullptr;
  ASSERT_EQ(cudaMalloc(&on_device, hp.b.storage.size() * sizeof(float)), cudaSuccess);
  GemmProblem device_b = hp.problem;
  device_b.b.data = on_device;
  s = gemm_out_of_core(testing::cuda_context(), device_b);
  EXPECT_EQ(s.code(), StatusCode::InvalidValue);
  EXPECT_TRUE(contains(s.message(), "B is device memory"));
  cudaFree(on_device);

  s = gemm_out_of_core(testing::cpu_context(), hp.problem);
  EXPECT_EQ(s.code(), StatusCode::NotSupported);
  EXPECT_TRUE(contains(s.message(), "CUDA context"));
}

}  // namespace
}  // namespace gemmlab
