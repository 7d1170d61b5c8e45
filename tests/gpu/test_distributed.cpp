// The distributed GEMM (gemmlab/distributed.hpp) on the GPUs this machine has: one GPU (a grid
// of 1, every panel local) and, where there are two, the 2 x 1 and 1 x 2 grids (B moves, or A
// does), with panels forced narrow so that every receive buffer is reused many times, by both
// panel transports (the copy engines' all-gather rounds and NCCL's broadcasts). Every
// problem is verified in full against the float64 reference: both operations on both
// operands, both storage orders, padded host matrices, beta = 0 with NaN in C, k = 1, k = 0,
// odd sizes; float32 and bf16 panel products; the host-operand form. And the refusals:
// ordinals out of range or repeated, blocks that do not match the grid, a collective that
// does not complete in time. Label gpu; skipped without a device (and the device-operand form
// without NCCL).
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "gemmlab/availability.hpp"
#include "gemmlab/distributed.hpp"
#include "gemmlab/registry.hpp"
#include "support/assertions.hpp"
#include "support/encoded.hpp"
#include "support/host_problem.hpp"
#include "support/seeds.hpp"

namespace gemmlab {
namespace {

using testing::contains;
using testing::HostProblem;
using testing::make_host_problem;
using testing::ProblemSpec;

int visible_devices() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

bool runs_here(const std::string& rung) {
  const Variant* v = find_variant(Backend::Cuda, rung);
  return v && check_runs_here(*v).is_ok();
}

std::unique_ptr<DeviceGroup> make_group(int gpus) {
  DeviceGroupOptions options;
  for (int d = 0; d < gpus; ++d) options.devices.push_back(d);
  std::unique_ptr<DeviceGroup> group;
  const Status s = DeviceGroup::create(options, group);
  EXPECT_TRUE(s.is_ok()) << s.describe();
  return group;
}

// Every group size this machine can run: 1, and 2 where there are two GPUs.
std::vector<int> group_sizes() {
  std::vector<int> sizes{1};
  if (visible_devices() >= 2) sizes.push_back(2);
  return sizes;
}

DistributedGemmProblem distributed_of(const HostProblem& hp, Decomposition decomposition) {
  DistributedGemmProblem p;
  p.m = hp.problem.m;
  p.n = hp.problem.n;
  p.k = hp.problem.k;
  p.op_a = hp.problem.op_a;
  p.op_b = hp.problem.op_b;
  p.alpha = hp.problem.alpha;
  p.beta = hp.problem.beta;
  p.compute = hp.problem.compute;
  p.decomposition = decomposition;
  return p;
}

// Scatters hp over the group, runs the distributed GEMM, gathers C into hp and checks it.
void run_and_check(DeviceGroup& group, HostProblem& hp, Decomposition decomposition, const DistributedOptions& options,
                   DistributedRun* out = nullptr) {
  ReferenceResult reference;
  ASSERT_TRUE(testing::host_reference(hp, reference).is_ok());
  DistributedGemmProblem p = distributed_of(hp, decomposition);
  DistributedBuffers buffers;
  Status s = DistributedBuffers::allocate(group, p, hp.problem.a, hp.problem.b, hp.problem.c, buffers);
  ASSERT_TRUE(s.is_ok()) << s.describe();
  for (const auto& [which, whole] : {std::pair{Operand::A, hp.problem.a}, std::pair{Operand::B, hp.problem.b},
                                     std::pair{Operand::C, hp.problem.c}}) {
    s = buffers.upload(group, p, which, whole);
    ASSERT_TRUE(s.is_ok()) << s.describe();
  }
  DistributedRun run;
  s = gemm_distributed(group, p, options, &run);
  ASSERT_TRUE(s.is_ok()) << s.describe();
  s = buffers.download(group, p, Operand::C, hp.problem.c);
  ASSERT_TRUE(s.is_ok()) << s.describe();
  const Verification v = verify(hp.problem, hp.c.storage, hp.c_before, reference, hp.spec.nan_c);
  EXPECT_TRUE(v.passed) << v.summary() << " | " << run.plan.describe();
  if (out) *out = run;
}

// Whether the NCCL this build runs on has copy-engine all-gathers (2.28 and later).
bool nccl_has_copy_engines() {
  int major = 0, minor = 0;
  return std::sscanf(nccl_version().c_str(), "%d.%d", &major, &minor) == 2 && (major > 2 || (major == 2 && minor >= 28));
}

DistributedOptions narrow_panels(const std::string& rung, std::int64_t width) {
  DistributedOptions o;
  o.local.variant = rung;
  o.panel_width = width;
  return o;
}

TEST(Distributed, EveryOperationAndLayoutOnEveryGridMatchesTheReference) {
  if (visible_devices() == 0) GTEST_SKIP() << "SKIPPED: no CUDA device";
  if (!distributed_available()) GTEST_SKIP() << "SKIPPED: this build has no NCCL";
  testing::Seeds seeds;
  for (const int gpus : group_sizes()) {
    std::unique_ptr<DeviceGroup> group = make_group(gpus);
    ASSERT_TRUE(group);
    for (const Layout layout : testing::kLayouts)
      for (const Op op_a : testing::kOps)
        for (const Op op_b : testing::kOps)
          // m < n puts two GPUs on a 1 x 2 grid under SUMMA (A moves); rows keeps 2 x 1 (B moves).
          for (const Decomposition d : {Decomposition::RowBlocks, Decomposition::Summa}) {
            const ProblemSpec spec{.m = 157, .n = 301, .k = 263, .op_a = op_a, .op_b = op_b, .layout = layout,
                                   .ld_padding = 3, .alpha = 0.75, .beta = -1.5, .seed = seeds.next()};
            SCOPED_TRACE(fmt::format("{} GPUs, {}, {}", gpus, to_string(d), spec.describe()));
            // Both transports: the copy engines' rounds (each GPU holds 5 panels of 32 or fewer
            // of its 132 or 131 of K) and the broadcasts.
            for (const PanelTransport transport : {PanelTransport::CopyEngines, PanelTransport::Broadcasts}) {
              SCOPED_TRACE(to_string(transport));
              HostProblem hp = make_host_problem(spec);
              DistributedOptions options = narrow_panels("pipelined", 32);
              options.transport = transport;
              DistributedRun run;
              run_and_check(*group, hp, d, options, &run);
              if (gpus == 2) {
                const ProcessGrid expected = d == Decomposition::RowBlocks ? ProcessGrid{2, 1} : ProcessGrid{1, 2};
                EXPECT_EQ(run.plan.grid, expected);
                EXPECT_EQ(run.transport, transport == PanelTransport::CopyEngines && nccl_has_copy_engines()
                                             ? PanelTransport::CopyEngines
                                             : PanelTransport::Broadcasts);
                // Each GPU receives the other's part of the moving operand (B, or A), panel by panel.
                const double moving = d == Decomposition::RowBlocks ? 263.0 * 301 : 263.0 * 157;
                EXPECT_DOUBLE_EQ(run.bytes_received[0] + run.bytes_received[1], 4 * moving);
              }
            }
            // The slice schedule, where the moving operand's K is the slow dimension of its
            // storage (B: op N in row-major, op T in column-major; A the other way round).
            if (gpus == 2 && nccl_has_copy_engines()) {
              const bool b_moves = d == Decomposition::RowBlocks;
              const bool k_rows = b_moves ? op_b == Op::N : op_a == Op::T;
              DistributedOptions options;
              options.local.variant = "pipelined";
              options.slices = 3;
              HostProblem hp = make_host_problem(spec);
              if (k_rows == (layout == Layout::RowMajor)) {
                SCOPED_TRACE("3 slices");
                DistributedRun run;
                run_and_check(*group, hp, d, options, &run);
                EXPECT_EQ(run.plan.cut, DistributedCut::Slices);
                EXPECT_EQ(run.plan.slices.size(), 3u);
                EXPECT_EQ(run.transport, PanelTransport::CopyEngines);
                const double moving = b_moves ? 263.0 * 301 : 263.0 * 157;
                EXPECT_DOUBLE_EQ(run.bytes_received[0] + run.bytes_received[1], 4 * moving);
                // The stripe: 40 rows (or columns) of each block by each part of K, the rest
                // whole in K; and without a stripe.
                for (const std::int64_t lead : {40, 0}) {
                  SCOPED_TRACE(fmt::format("a lead stripe of {}", lead));
                  DistributedOptions striped;
                  striped.local.variant = "pipelined";
                  striped.stripe_lead = lead;
                  HostProblem again = make_host_problem(spec);
                  DistributedRun stripe_run;
                  run_and_check(*group, again, d, striped, &stripe_run);
                  EXPECT_EQ(stripe_run.plan.cut, DistributedCut::Stripe);
                  EXPECT_EQ(stripe_run.plan.lead, lead);
                  EXPECT_DOUBLE_EQ(stripe_run.bytes_received[0] + stripe_run.bytes_received[1], 4 * moving);
                }
              } else {
                DistributedGemmProblem p = distributed_of(hp, d);
                DistributedBuffers buffers;
                ASSERT_TRUE(
                    DistributedBuffers::allocate(*group, p, hp.problem.a, hp.problem.b, hp.problem.c, buffers).is_ok());
                const Status s = gemm_distributed(*group, p, options);
                EXPECT_EQ(s.code(), StatusCode::InvalidValue);
                EXPECT_TRUE(contains(s.message(), "slow dimension")) << s.message();
                DistributedOptions striped;
                striped.local.variant = "pipelined";
                striped.stripe_lead = 40;
                const Status no_stripe = gemm_distributed(*group, p, striped);
                EXPECT_EQ(no_stripe.code(), StatusCode::InvalidValue);
                EXPECT_TRUE(contains(no_stripe.message(), "slow dimension")) << no_stripe.message();
              }
            }
          }
  }
}

TEST(Distributed, AwkwardShapesBetaZeroWithNaNKOneAndKZero) {
  if (visible_devices() == 0) GTEST_SKIP() << "SKIPPED: no CUDA device";
  if (!distributed_available()) GTEST_SKIP() << "SKIPPED: this build has no NCCL";
  testing::Seeds seeds;
  for (const int gpus : group_sizes()) {
    std::unique_ptr<DeviceGroup> group = make_group(gpus);
    ASSERT_TRUE(group);
    for (const testing::Dims dims : testing::kAwkwardDims) {
      if (dims.m < gpus) continue;  // every GPU holds some rows of C
      for (const double beta : {0.0, 2.0}) {
        const ProblemSpec spec{.m = dims.m, .n = dims.n, .k = dims.k, .op_b = Op::T, .beta = beta,
                               .seed = seeds.next(), .nan_c = beta == 0.0};
        SCOPED_TRACE(fmt::format("{} GPUs, {}", gpus, spec.describe()));
        HostProblem hp = make_host_problem(spec);
        run_and_check(*group, hp, Decomposition::RowBlocks, narrow_panels("pipelined", 8));
        // Op::T on B in row-major storage: no slices; op N: two slices (or one column).
        if (gpus == 2 && nccl_has_copy_engines()) {
          ProblemSpec n_spec = spec;
          n_spec.op_b = Op::N;
          n_spec.seed = seeds.next();
          HostProblem sliced = make_host_problem(n_spec);
          DistributedOptions options;
          options.local.variant = "pipelined";
          options.slices = std::min<std::int64_t>(2, dims.n);
          DistributedRun run;
          run_and_check(*group, sliced, Decomposition::RowBlocks, options, &run);
          EXPECT_EQ(run.plan.cut, DistributedCut::Slices);
          // The stripe: one row of each block cut in K where a block has two or more.
          DistributedOptions striped;
          striped.local.variant = "pipelined";
          striped.stripe_lead = dims.m >= 4 ? 1 : 0;
          n_spec.seed = seeds.next();
          HostProblem stripe_problem = make_host_problem(n_spec);
          run_and_check(*group, stripe_problem, Decomposition::RowBlocks, striped, &run);
          EXPECT_EQ(run.plan.cut, DistributedCut::Stripe);
        }
      }
    }
    // k = 0: C <- beta C, beta = 0 without reading the NaN in C.
    HostProblem zero_k = make_host_problem({.m = 40, .n = 30, .k = 0, .beta = 0.0, .seed = seeds.next(), .nan_c = true});
    run_and_check(*group, zero_k, Decomposition::Summa, {});
  }
}

TEST(Distributed, TheModelsPanelsAndTensorCoreProducts) {
  if (visible_devices() == 0) GTEST_SKIP() << "SKIPPED: no CUDA device";
  if (!distributed_available()) GTEST_SKIP() << "SKIPPED: this build has no NCCL";
  testing::Seeds seeds;
  struct Case {
    std::string rung;
    DType storage, compute;
  };
  for (const int gpus : group_sizes()) {
    std::unique_ptr<DeviceGroup> group = make_group(gpus);
    ASSERT_TRUE(group);
    // The model's own panel width, auto's rung.
    HostProblem hp = make_host_problem({.m = 1031, .n = 997, .k = 1201, .beta = 0.5, .seed = seeds.next()});
    run_and_check(*group, hp, Decomposition::Summa, {});
    // Slices where asked for, their count the model's; panels where they cannot run (one GPU).
    DistributedOptions sliced;
    sliced.cut = DistributedCut::Slices;
    DistributedRun run;
    HostProblem again = make_host_problem({.m = 1031, .n = 997, .k = 1201, .beta = 0.5, .seed = seeds.next()});
    run_and_check(*group, again, Decomposition::Summa, sliced, &run);
    EXPECT_EQ(run.plan.cut, gpus == 2 && nccl_has_copy_engines() ? DistributedCut::Slices : DistributedCut::KPanels);
    // The stripe where asked for, its lead the model's; auto's rung (the tensor cores for f32).
    DistributedOptions striped;
    striped.cut = DistributedCut::Stripe;
    HostProblem third = make_host_problem({.m = 1031, .n = 997, .k = 1201, .beta = 0.5, .seed = seeds.next()});
    run_and_check(*group, third, Decomposition::RowBlocks, striped, &run);
    EXPECT_EQ(run.plan.cut, gpus == 2 && nccl_has_copy_engines() ? DistributedCut::Stripe : DistributedCut::KPanels);
    for (const Case& c : {Case{"wgmma_3xtf32", DType::F32, DType::F32}, Case{"wgmma_ws_bf16", DType::BF16, DType::F32},
                          Case{"mma_sync_bf16", DType::BF16, DType::F32}}) {
      if (!runs_here(c.rung)) {
        std::printf("SKIPPED %s: does not run on this device or build\n", c.rung.c_str());
        continue;
      }
      for (const Op op_a : testing::kOps) {
        const ProblemSpec spec{.m = 700, .n = 515, .k = 1000, .op_a = op_a, .beta = 1.0, .seed = seeds.next()};
        SCOPED_TRACE(fmt::format("{} GPUs, {} {}", gpus, c.rung, spec.describe()));
        HostProblem tc = make_host_problem(spec);
        testing::Encoded encoded;
        testing::store_as(tc, c.storage, encoded);
        tc.problem.compute = c.compute;
        run_and_check(*group, tc, Decomposition::Summa, narrow_panels(c.rung, 256));
        // The stripe in row blocks: 128 rows of each block of 350 cut in K.
        if (gpus == 2 && nccl_has_copy_engines()) {
          DistributedOptions striped;
          striped.local.variant = c.rung;
          striped.stripe_lead = 128;
          HostProblem st = make_host_problem({.m = 700, .n = 515, .k = 1000, .op_a = op_a, .beta = 1.0,
                                              .seed = seeds.next()});
          testing::Encoded st_encoded;
          testing::store_as(st, c.storage, st_encoded);
          st.problem.compute = c.compute;
          run_and_check(*group, st, Decomposition::RowBlocks, striped);
        }
      }
    }
  }
}

TEST(Distributed, HostOperandsOnEveryGpu) {
  if (visible_devices() == 0) GTEST_SKIP() << "SKIPPED: no CUDA device";
  testing::Seeds seeds;
  for (const int gpus : group_sizes()) {
    std::unique_ptr<DeviceGroup> group = make_group(gpus);
    ASSERT_TRUE(group);
    for (const Op op_a : testing::kOps) {
      const ProblemSpec spec{.m = 513, .n = 700, .k = 301, .op_a = op_a, .layout_c = Layout::ColMajor,
                             .ld_padding = 2, .beta = 0.0, .seed = seeds.next(), .nan_c = true};
      SCOPED_TRACE(fmt::format("{} GPUs, {}", gpus, spec.describe()));
      HostProblem hp = make_host_problem(spec);
      ReferenceResult reference;
      ASSERT_TRUE(testing::host_reference(hp, reference).is_ok());
      OutOfCoreOptions o;
      o.in_core.variant = "pipelined";
      o.tile_m = o.tile_n = o.tile_k = 128;
      std::vector<OutOfCorePlan> plans;
      const Status s = gemm_distributed_host(*group, hp.problem, o, &plans);
      ASSERT_TRUE(s.is_ok()) << s.describe();
      EXPECT_EQ(plans.size(), static_cast<std::size_t>(gpus));
      const Verification v = verify(hp.problem, hp.c.storage, hp.c_before, reference, hp.spec.nan_c);
      EXPECT_TRUE(v.passed) << v.summary();
    }
  }
}

TEST(Distributed, RefusesBadGroupsAndBlocksThatDoNotMatchTheGrid) {
  const int visible = visible_devices();
  if (visible == 0) GTEST_SKIP() << "SKIPPED: no CUDA device";
  std::unique_ptr<DeviceGroup> group;
  Status s = DeviceGroup::create({.devices = {visible}}, group);
  EXPECT_EQ(s.code(), StatusCode::InvalidValue);
  EXPECT_TRUE(contains(s.message(), fmt::format("GPU {} was asked for", visible))) << s.message();
  s = DeviceGroup::create({.devices = {0, 0}}, group);
  EXPECT_EQ(s.code(), StatusCode::InvalidValue);
  EXPECT_TRUE(contains(s.message(), "listed twice")) << s.message();
  s = DeviceGroup::create({.devices = {0}, .collective_timeout_seconds = 0}, group);
  EXPECT_EQ(s.code(), StatusCode::InvalidValue);

  if (!distributed_available()) GTEST_SKIP() << "SKIPPED: this build has no NCCL";
  group = make_group(1);
  ASSERT_TRUE(group);
  testing::Seeds seeds;
  HostProblem hp = make_host_problem({.m = 64, .n = 64, .k = 64, .seed = seeds.next()});
  DistributedGemmProblem p = distributed_of(hp, Decomposition::Summa);
  DistributedBuffers buffers;
  ASSERT_TRUE(DistributedBuffers::allocate(*group, p, hp.problem.a, hp.problem.b, hp.problem.c, buffers).is_ok());
  p.b[0].cols = 63;  // not the 64 x 64 block the grid places on GPU 0
  s = gemm_distributed(*group, p);
  EXPECT_EQ(s.code(), StatusCode::InvalidValue);
  EXPECT_TRUE(contains(s.message(), "its block of B is 64x63")) << s.message();
  p.b[0].cols = 64;
  p.c.clear();
  s = gemm_distributed(*group, p);
  EXPECT_EQ(s.code(), StatusCode::InvalidValue);
  EXPECT_TRUE(contains(s.message(), "blocks of A, B and C")) << s.message();
}

TEST(Distributed, ACollectiveThatDoesNotCompleteInTimeAbortsInsteadOfHanging) {
  if (visible_devices() == 0) GTEST_SKIP() << "SKIPPED: no CUDA device";
  if (!distributed_available()) GTEST_SKIP() << "SKIPPED: this build has no NCCL";
  const int gpus = group_sizes().back();
  DeviceGroupOptions options;
  for (int d = 0; d < gpus; ++d) options.devices.push_back(d);
  options.collective_timeout_seconds = 1e-6;  // shorter than any product: the wait gives up
  std::unique_ptr<DeviceGroup> group;
  ASSERT_TRUE(DeviceGroup::create(options, group).is_ok());
  testing::Seeds seeds;
  HostProblem hp = make_host_problem({.m = 2048, .n = 2048, .k = 2048, .seed = seeds.next()});
  DistributedGemmProblem p = distributed_of(hp, Decomposition::RowBlocks);
  DistributedBuffers buffers;
  ASSERT_TRUE(DistributedBuffers::allocate(*group, p, hp.problem.a, hp.problem.b, hp.problem.c, buffers).is_ok());
  Status s = gemm_distributed(*group, p, narrow_panels("naive", 256));
  EXPECT_EQ(s.code(), StatusCode::ExecutionFailed);
  EXPECT_TRUE(contains(s.message(), "did not complete within")) << s.message();
  // The group is spent: it says so rather than reusing aborted communicators.
  s = gemm_distributed(*group, p, narrow_panels("naive", 256));
  EXPECT_EQ(s.code(), StatusCode::ExecutionFailed);
  EXPECT_TRUE(contains(s.message(), "make a new one")) << s.message();
  for (int d = 0; d < gpus; ++d) {
    ASSERT_EQ(cudaSetDevice(d), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
}

}  // namespace
}  // namespace gemmlab
