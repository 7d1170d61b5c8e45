// The memory lab on a GPU: every experiment runs and every row's data check passes; the
// ceilings are measured and checked; and the occupancy API agrees with the model
// (bench/model.hpp) for every rung that names its kernel. Label: gpu; skipped without a device.
#include <gtest/gtest.h>

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "bench/explain.hpp"
#include "bench/harness.hpp"
#include "core/random.hpp"
#include "cuda/lab.hpp"
#include "cuda/mem/streaming.hpp"
#include "cuda/runtime/buffer.hpp"
#include "gemmlab/registry.hpp"

namespace gemmlab {
namespace {

#define REQUIRE_DEVICE() \
  if (!cuda_device_present()) GTEST_SKIP() << "no CUDA device on this machine (or no CUDA in this build)"

class MemLab : public ::testing::TestWithParam<std::string> {};

TEST_P(MemLab, ExperimentRunsAndEveryRowArrivesIntact) {
  REQUIRE_DEVICE();
  cuda::MemOptions o;
  o.experiments = {GetParam()};
  o.timing = {0, 1};            // correctness, not speed
  o.buffer_l2_multiple = 2;     // smaller buffers: still past L2
  cuda::MemReport report;
  const Status s = cuda::run_mem(o, report);
  ASSERT_TRUE(s.is_ok()) << s.describe();
  ASSERT_FALSE(report.rows.empty());
  EXPECT_TRUE(report.ceilings.passed());
  EXPECT_TRUE(report.passed());
  // A row the machine cannot measure (nvlink with one GPU, or without NCCL) says why in its
  // note and is not checked: it neither passes nor fails the lab.
  const auto skipped = [](const cuda::MemRow& r) { return r.note.rfind("skipped: ", 0) == 0; };
  std::string skip_reason;
  int measured = 0;
  for (const cuda::MemRow& r : report.rows) {
    SCOPED_TRACE(fmt::format("{} {} {}={}", r.experiment, r.variant, r.param_name, r.param));
    EXPECT_EQ(r.experiment, GetParam());
    if (skipped(r)) {
      EXPECT_FALSE(r.checked);
      if (skip_reason.empty()) skip_reason = r.note;
      continue;
    }
    ++measured;
    EXPECT_TRUE(r.checked);
    EXPECT_TRUE(r.passed) << r.mismatches << " words not intact; " << r.note;
    EXPECT_GT(r.time.median_ms, 0.0);
    EXPECT_GT(r.gbs, 0.0);
  }
  // transfer, both directions at once: each pair has a row for each direction, timed in the
  // same repetitions from the pair's start, so each direction ends within the pair's time.
  int pairs = 0;
  for (const cuda::MemRow& both : report.rows) {
    if (both.variant != "both_pinned") continue;
    ++pairs;
    for (const char* one_way : {"both_h2d_pinned", "both_d2h_pinned"}) {
      SCOPED_TRACE(fmt::format("{} bytes={}", one_way, both.param));
      const auto it = std::find_if(report.rows.begin(), report.rows.end(), [&](const cuda::MemRow& r) {
        return r.variant == one_way && r.param == both.param;
      });
      ASSERT_NE(it, report.rows.end());
      EXPECT_EQ(2 * it->bytes, both.bytes);
      EXPECT_EQ(it->time.reps, both.time.reps);
      EXPECT_LE(it->time.median_ms, both.time.median_ms);
    }
  }
  if (GetParam() == "transfer") {
    EXPECT_GT(pairs, 0);
  }
  // Only nvlink may skip, and only for want of a second GPU or of NCCL; with one GPU it reports
  // a single row saying so.
  if (GetParam() != "nvlink") {
    EXPECT_TRUE(skip_reason.empty()) << skip_reason;
  }
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) {
    (void)cudaGetLastError();
    gpus = 0;
  }
  if (GetParam() == "nvlink" && gpus < 2) {
    ASSERT_EQ(report.rows.size(), 1u);
    EXPECT_NE(skip_reason.find("needs 2 GPUs; " + std::to_string(gpus) + " visible"), std::string::npos) << skip_reason;
  }
  if (GetParam() == "nvlink" && gpus >= 2) {
    EXPECT_GT(measured, 0) << "no size fitted in device memory";
  }
  if (measured == 0) GTEST_SKIP() << skip_reason;
}

std::vector<std::string> experiment_names() {
  std::vector<std::string> names;
  for (const cuda::MemExperimentInfo& e : cuda::mem_experiments()) names.push_back(e.name);
  if (names.empty()) names.push_back("none_in_this_build");
  return names;
}

INSTANTIATE_TEST_SUITE_P(Experiments, MemLab, ::testing::ValuesIn(experiment_names()),
                         [](const ::testing::TestParamInfo<std::string>& param) { return param.param; });

// The read kernels on sizes the lab's buffers never have: under a line, a line short of a
// bulk tile round, whole rounds plus a slice plus ordinary loads. Fresh random words, the
// sum compared with the host's (mod 2^32); the bulk read needs sm_90 (read_bulk_runs).
TEST(MemLabRead, BothReadsSumEveryWordOfAwkwardSizes) {
  REQUIRE_DEVICE();
  int sms = 0, major = 0, optin = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0), cudaSuccess);
  // sm_90 with room for its stages, and sm_90 code in this build (not in a build for 80).
  const bool bulk = cuda::mem::read_bulk_runs(major, optin);
  const long long round4 = static_cast<long long>(sms) * cuda::mem::kBulkTileBytes / 16;  // one tile per block
  const std::uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  cuda::DeviceMemory total;
  ASSERT_TRUE(cuda::DeviceMemory::allocate(sizeof(unsigned), total).is_ok());
  for (long long n4 : {1LL, 7LL, 8LL * sms - 1, round4 - 8, round4 + 5, 3 * round4 + 8LL * sms + 3, 1000003LL}) {
    SCOPED_TRACE(fmt::format("{} 16-byte words on {} SMs, seed {}", n4, sms, seed));
    std::vector<std::uint32_t> words(static_cast<std::size_t>(4 * n4));
    for (std::uint32_t& w : words) w = static_cast<std::uint32_t>(rng());
    std::uint32_t want = 0;
    for (std::uint32_t w : words) want += w;
    cuda::DeviceMemory data;
    ASSERT_TRUE(cuda::DeviceMemory::allocate(words.size() * 4, data).is_ok());
    ASSERT_EQ(cudaMemcpy(data.data(), words.data(), words.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
    const auto sum_of = [&](const char* name, const auto& read) {
      SCOPED_TRACE(name);
      ASSERT_EQ(cudaMemset(total.data(), 0, sizeof(unsigned)), cudaSuccess);
      const Status s = read();
      ASSERT_TRUE(s.is_ok()) << s.describe();
      unsigned got = 0;
      ASSERT_EQ(cudaMemcpy(&got, total.data(), sizeof(unsigned), cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(got, want);
    };
    for (int unroll : cuda::mem::kUnrolls)
      sum_of("read_sum", [&] { return cuda::mem::read_sum(data.data(), n4, unroll, 2 * sms, total.as<unsigned>(), nullptr); });
    if (bulk)
      sum_of("read_bulk", [&] { return cuda::mem::read_bulk(data.data(), n4, sms, total.as<unsigned>(), nullptr); });
  }
  if (bulk) {  // a bulk copy cannot start off a 16-byte boundary: refused, not misread
    cuda::DeviceMemory data;
    ASSERT_TRUE(cuda::DeviceMemory::allocate(4096, data).is_ok());
    const Status s = cuda::mem::read_bulk(data.as<unsigned char>() + 4, 100, sms, total.as<unsigned>(), nullptr);
    EXPECT_FALSE(s.is_ok());
    EXPECT_NE(s.describe().find("16-byte aligned"), std::string::npos) << s.describe();
  }
}

TEST(MemLabCeilings, EveryCeilingIsMeasuredAndItsDataChecked) {
  REQUIRE_DEVICE();
  cuda::CeilingOptions o;
  o.timing = {1, 3};
  o.sgemm_n = 2048;
  o.buffer_l2_multiple = 2;
  cuda::DeviceFacts facts;
  cuda::Ceilings c;
  const Status s = cuda::measure_ceilings(o, facts, c);
  ASSERT_TRUE(s.is_ok()) << s.describe();
  for (const cuda::CeilingRow& r : c.rows) {
    SCOPED_TRACE(r.name);
    EXPECT_TRUE(r.passed) << r.check;
    EXPECT_GT(r.value, 0.0);
  }
  EXPECT_GT(c.memcpy_gbs, 0.0);
  EXPECT_GT(c.copy_kernel_gbs, 0.0);
  EXPECT_GT(c.read_gbs, 0.0);
  EXPECT_GT(c.fma_gflops, 0.0);
  EXPECT_GT(c.sgemm_gflops, 0.0);
  // Sanity, not targets: nothing beats the theoretical bandwidth by more than noise.
  EXPECT_LT(c.read_gbs, 1.05 * facts.theoretical_bandwidth_gbs);
}

TEST(MemLabOccupancy, ApiAgreesWithTheModelForEveryRungKernel) {
  REQUIRE_DEVICE();
  std::unique_ptr<Executor> ex;
  ASSERT_TRUE(make_cuda_executor(ex).is_ok());
  cuda::DeviceFacts facts;
  cuda::Ceilings unused;
  cuda::CeilingOptions none;
  none.copy = none.read = none.fma = none.sgemm = false;
  ASSERT_TRUE(cuda::measure_ceilings(none, facts, unused).is_ok());  // the facts only
  for (const char* trans : {"NN", "TT"}) {
    bench::Options o;
    o.shapes = {{256, 192, 128}};
    o.op_a = trans[0] == 'T' ? Op::T : Op::N;
    o.op_b = trans[1] == 'T' ? Op::T : Op::N;
    o.seed = fresh_seed();
    o.time = false;
    int inspected = 0;
    o.inspect = [&](const GemmProblem& p, const Variant& v, const bench::Record&) {
      if (!v.kernel_info) return;
      SCOPED_TRACE(fmt::format("{} {}", v.name, trans));
      KernelInfo info;
      ASSERT_TRUE(v.kernel_info(p, info).is_ok());
      cuda::KernelAttributes a;
      const Status s = cuda::kernel_attributes(info, a);
      ASSERT_TRUE(s.is_ok()) << s.describe();
      const bench::Occupancy model = bench::occupancy(
          bench::sm_limits(facts, a.reserved_smem_per_block),
          {info.threads_per_block, a.registers, a.static_smem_bytes + info.dynamic_smem_bytes});
      EXPECT_EQ(model.blocks, a.api_blocks_per_sm)
          << info.name << ": " << a.registers << " registers, " << a.static_smem_bytes << " + "
          << info.dynamic_smem_bytes << " bytes of shared memory, " << info.threads_per_block << " threads";
      EXPECT_GT(model.blocks, 0);
      ++inspected;
    };
    std::vector<bench::Record> records;
    ASSERT_TRUE(bench::run(o, *ex, records).is_ok());
    for (const bench::Record& r : records) EXPECT_EQ(r.status, "ok") << r.variant << ": " << r.message;
    EXPECT_GE(inspected, 11) << "every rung but the cuBLAS anchor names its kernel";
  }
}

}  // namespace
}  // namespace gemmlab
