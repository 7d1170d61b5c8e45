// float3 arrays (seed 001, "Coalesced Access: float3 Case"): each thread reads one 12-byte
// float3, adds 2 to each component and writes it back. Read directly, a warp's three
// 4-byte loads each touch every third word of a 384-byte span (on G80, 16 transactions;
// today three passes over the same sectors, served partly by L1). Staged, the block
// reads its 3 x 256 floats as three coalesced rows into shared memory, each thread then
// takes its float3 from there (stride 3 words: conflict-free, as gcd(3, 32) = 1), and the
// block writes three coalesced rows back. As three separate arrays (structure of arrays),
// every access is coalesced with no staging at all.
// Seed figure (G80-class, 4K blocks x 256 threads): 3,302 us uncoalesced vs 359 us staged.
#include "cuda/mem/check.cuh"
#include "cuda/mem/experiment.hpp"

namespace gemmlab::cuda::mem {
namespace {

constexpr int kThreads = 256;
constexpr std::uint32_t kSeed = 0xF1A73u;

__global__ void __launch_bounds__(kThreads) aos_direct(const float3* __restrict__ in, float3* __restrict__ out,
                                                       long long n) {
  const long long i = blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x;
  if (i >= n) return;
  float3 a = in[i];
  a.x += 2.0f;
  a.y += 2.0f;
  a.z += 2.0f;
  out[i] = a;
}

__global__ void __launch_bounds__(kThreads) aos_staged(const float* __restrict__ in, float* __restrict__ out,
                                                       long long n) {
  __shared__ float s_data[3 * kThreads];  // (kThreads float3s) of this block, as floats
  const long long base = blockIdx.x * 3LL * kThreads;  // the block's first float
  const long long floats = 3 * n;
#pragma unroll
  for (int r = 0; r < 3; ++r) {  // three coalesced rows of kThreads floats
    const long long j = base + r * kThreads + threadIdx.x;
    if (j < floats) s_data[r * kThreads + threadIdx.x] = in[j];
  }
  __syncthreads();
  if (blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x < n) {
    float3 a = reinterpret_cast<float3*>(s_data)[threadIdx.x];
    a.x += 2.0f;
    a.y += 2.0f;
    a.z += 2.0f;
    reinterpret_cast<float3*>(s_data)[threadIdx.x] = a;
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < 3; ++r) {
    const long long j = base + r * kThreads + threadIdx.x;
    if (j < floats) out[j] = s_data[r * kThreads + threadIdx.x];
  }
}

__global__ void __launch_bounds__(kThreads) soa(const float* __restrict__ x, const float* __restrict__ y,
                                                const float* __restrict__ z, float* __restrict__ ox,
                                                float* __restrict__ oy, float* __restrict__ oz, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x;
  if (i >= n) return;
  ox[i] = x[i] + 2.0f;
  oy[i] = y[i] + 2.0f;
  oz[i] = z[i] + 2.0f;
}

// Word i holds component (i * mul + add) of the logical float3 stream.
struct FloatWords {
  std::uint32_t seed;
  long long mul, add;
  __device__ std::uint32_t operator()(long long i) const {
    return __float_as_uint(pattern_float(static_cast<std::uint64_t>(i * mul + add), seed));
  }
};
struct PlusTwo {
  std::uint32_t seed;
  long long mul, add;
  __device__ bool operator()(long long i, std::uint32_t w) const {
    return w == __float_as_uint(pattern_float(static_cast<std::uint64_t>(i * mul + add), seed) + 2.0f);
  }
};

unsigned blocks(long long threads) { return static_cast<unsigned>((threads + kThreads - 1) / kThreads); }

Status run(MemContext& ctx, std::vector<MemRow>& rows) {
  const long long n = static_cast<long long>(ctx.buffer_bytes / sizeof(float3)) / kThreads * kThreads;
  const std::size_t aos_bytes = static_cast<std::size_t>(n) * sizeof(float3);
  const std::size_t soa_bytes = static_cast<std::size_t>(n) * sizeof(float);
  DeviceMemory in, out;
  GEMMLAB_TRY(DeviceMemory::allocate(aos_bytes, in));
  GEMMLAB_TRY(DeviceMemory::allocate(aos_bytes, out));
  DeviceMemory soa_in[3], soa_out[3];
  for (int c = 0; c < 3; ++c) {
    GEMMLAB_TRY(DeviceMemory::allocate(soa_bytes, soa_in[c]));
    GEMMLAB_TRY(DeviceMemory::allocate(soa_bytes, soa_out[c]));
    GEMMLAB_TRY(fill(soa_in[c].data(), n, FloatWords{kSeed, 3, c}, ctx.stream));
  }
  GEMMLAB_TRY(fill(in.data(), 3 * n, FloatWords{kSeed, 1, 0}, ctx.stream));

  const auto make_row = [&](const char* variant, const char* note) {
    MemRow row;
    row.variant = variant;
    row.param_name = "elements";
    row.param = n;
    row.bytes = 2.0 * static_cast<double>(aos_bytes);
    row.note = note;
    return row;
  };
  const auto check_aos = [&](MemRow& row, const std::function<Status()>& op) -> Status {
    CUDA_CHECK(cudaMemsetAsync(out.data(), 0xFF, out.bytes(), ctx.stream));
    GEMMLAB_TRY(op());
    long long bad = 0;
    GEMMLAB_TRY(ctx.checker.count(out.data(), 3 * n, PlusTwo{kSeed, 1, 0}, ctx.stream, bad));
    record_check(row, bad);
    return time_row(ctx, row, op);
  };

  {
    MemRow row = make_row("aos_direct", "float3 loads and stores from global memory; bytes read + written");
    GEMMLAB_TRY(check_aos(row, [&]() -> Status {
      aos_direct<<<blocks(n), kThreads, 0, ctx.stream>>>(in.as<float3>(), out.as<float3>(), n);
      CUDA_CHECK_LAUNCH("aos_direct");
      return Status::ok();
    }));
    rows.push_back(row);
  }
  {
    MemRow row = make_row("aos_staged", "seed 001's staging through shared memory; bytes read + written");
    GEMMLAB_TRY(check_aos(row, [&]() -> Status {
      aos_staged<<<blocks(n), kThreads, 0, ctx.stream>>>(in.as<float>(), out.as<float>(), n);
      CUDA_CHECK_LAUNCH("aos_staged");
      return Status::ok();
    }));
    rows.push_back(row);
  }
  {
    MemRow row = make_row("soa", "three float arrays x, y, z; bytes read + written");
    const auto op = [&]() -> Status {
      soa<<<blocks(n), kThreads, 0, ctx.stream>>>(soa_in[0].as<float>(), soa_in[1].as<float>(), soa_in[2].as<float>(),
                                                   soa_out[0].as<float>(), soa_out[1].as<float>(),
                                                   soa_out[2].as<float>(), n);
      CUDA_CHECK_LAUNCH("soa");
      return Status::ok();
    };
    for (int c = 0; c < 3; ++c) CUDA_CHECK(cudaMemsetAsync(soa_out[c].data(), 0xFF, soa_bytes, ctx.stream));
    GEMMLAB_TRY(op());
    for (int c = 0; c < 3; ++c) {
      long long bad = 0;
      GEMMLAB_TRY(ctx.checker.count(soa_out[c].data(), n, PlusTwo{kSeed, 3, c}, ctx.stream, bad));
      record_check(row, bad);
    }
    GEMMLAB_TRY(time_row(ctx, row, op));
    rows.push_back(row);
  }
  return Status::ok();
}

}  // namespace

Experiment aos_soa_experiment() {
  return {"aos_soa", "float3 array of structs: direct, staged through shared memory, structure of arrays",
          "12-byte elements cannot be read in one coalesced access; staging or SoA restores it "
          "(seed 001: 3,302 us uncoalesced vs 359 us through shared memory)",
          run};
}

}  // namespace gemmlab::cuda::mem
