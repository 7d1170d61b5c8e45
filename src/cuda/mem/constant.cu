// Constant vs global memory (seed 003 §4.2, seed 002 "constant memory ... only a win if
// it is cached"): every thread sums kIters values from a 16 KiB table. Broadcast: at each
// step all 32 lanes of a warp read the same element, which the constant cache serves in
// one access for the whole warp. Divergent: each lane reads a different element; the
// constant cache serialises distinct addresses, one per access, while global loads (L1)
// serve a warp's 32 addresses together. GB/s counts the bytes the threads asked for
// (a broadcast serves 32 of them with one 4-byte read), so ratios can pass 1.
#include <vector>

#include "cuda/mem/check.cuh"
#include "cuda/mem/experiment.hpp"
#include "cuda/mem/streaming.hpp"

namespace gemmlab::cuda::mem {
namespace {

constexpr int kTable = 4096;  // floats: 16 KiB of the 64 KiB of constant memory
constexpr int kThreads = 256;
constexpr int kIters = 4096;
constexpr unsigned kIterStep = 131;  // table index advance per step (odd: visits all)
constexpr unsigned kLaneStep = 97;   // divergent: lane l starts 97 l further on
constexpr std::uint32_t kSeed = 0xC0457u;
static_assert((kTable & (kTable - 1)) == 0, "index wraps with a mask");

__constant__ float c_table[kTable];

template <bool Constant, bool Broadcast>
__global__ void __launch_bounds__(kThreads) read_table(const float* __restrict__ g_table, float* __restrict__ out,
                                                       int iters) {
  const unsigned lane_offset = Broadcast ? 0u : (threadIdx.x % 32) * kLaneStep;
  float acc = 0.0f;
  for (int it = 0; it < iters; ++it) {
    const unsigned j = (static_cast<unsigned>(it) * kIterStep + lane_offset) & (kTable - 1);
    acc += Constant ? c_table[j] : g_table[j];
  }
  out[blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x] = acc;
}

// Whole numbers up to 255: every sum of kIters of them is exact in FP32.
float table_value(int j) { return static_cast<float>(pattern_word(static_cast<std::uint64_t>(j), kSeed) & 0xFFu); }

float expected_sum(int lane, bool broadcast) {
  const unsigned lane_offset = broadcast ? 0u : static_cast<unsigned>(lane) * kLaneStep;
  float acc = 0.0f;
  for (int it = 0; it < kIters; ++it)
    acc += table_value(static_cast<int>((static_cast<unsigned>(it) * kIterStep + lane_offset) & (kTable - 1)));
  return acc;
}

Status run(MemContext& ctx, std::vector<MemRow>& rows) {
  std::vector<float> table(kTable);
  for (int j = 0; j < kTable; ++j) table[static_cast<std::size_t>(j)] = table_value(j);
  DeviceMemory g_table;
  GEMMLAB_TRY(DeviceMemory::allocate(kTable * sizeof(float), g_table));
  CUDA_CHECK(cudaMemcpyAsync(g_table.data(), table.data(), kTable * sizeof(float), cudaMemcpyHostToDevice, ctx.stream));
  CUDA_CHECK(cudaMemcpyToSymbolAsync(c_table, table.data(), kTable * sizeof(float), 0, cudaMemcpyHostToDevice,
                                     ctx.stream));
  const int blocks = resident_blocks(ctx.facts.sm_count, ctx.facts.max_threads_per_sm);
  const long long threads = static_cast<long long>(blocks) * kThreads;
  DeviceMemory out;
  GEMMLAB_TRY(DeviceMemory::allocate(static_cast<std::size_t>(threads) * sizeof(float), out));
  std::vector<float> host(static_cast<std::size_t>(threads));

  struct Case {
    const char* name;
    bool constant, broadcast;
    void (*kernel)(const float*, float*, int);
  };
  const Case cases[] = {
      {"constant_broadcast", true, true, read_table<true, true>},
      {"global_broadcast", false, true, read_table<false, true>},
      {"constant_divergent", true, false, read_table<true, false>},
      {"global_divergent", false, false, read_table<false, false>},
  };
  for (const Case& c : cases) {
    MemRow row;
    row.variant = c.name;
    row.param_name = "distinct_per_warp";
    row.param = c.broadcast ? 1 : 32;
    row.bytes = static_cast<double>(threads) * kIters * sizeof(float);
    row.note = "bytes requested by threads from a 16 KiB table";
    const auto op = [&]() -> Status {
      c.kernel<<<static_cast<unsigned>(blocks), kThreads, 0, ctx.stream>>>(g_table.as<float>(), out.as<float>(), kIters);
      CUDA_CHECK_LAUNCH("read_table");
      return Status::ok();
    };
    CUDA_CHECK(cudaMemsetAsync(out.data(), 0xFF, out.bytes(), ctx.stream));
    GEMMLAB_TRY(op());
    CUDA_CHECK(cudaMemcpyAsync(host.data(), out.data(), out.bytes(), cudaMemcpyDeviceToHost, ctx.stream));
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    float expected[32];
    for (int lane = 0; lane < 32; ++lane) expected[lane] = expected_sum(lane, c.broadcast);
    long long bad = 0;
    for (long long t = 0; t < threads; ++t)
      if (host[static_cast<std::size_t>(t)] != expected[t % 32]) ++bad;
    record_check(row, bad);
    GEMMLAB_TRY(time_row(ctx, row, op));
    rows.push_back(row);
  }
  return Status::ok();
}

}  // namespace

Experiment constant_experiment() {
  return {"constant", "constant vs global memory: warp-wide broadcast vs a different element per lane",
          "the constant cache broadcasts one value to a warp in one access and serialises distinct "
          "addresses; global loads through L1 serve 32 distinct addresses together",
          run};
}

}  // namespace gemmlab::cuda::mem
