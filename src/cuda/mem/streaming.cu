// The streaming kernels of streaming.hpp.
#include "cuda/mem/check.cuh"
#include "cuda/mem/streaming.hpp"

#include <cuda/ptx>

#include "cuda/arch/streaming_access.cuh"
#include "cuda/arch/target.cuh"

namespace gemmlab::cuda::mem {
namespace {

// One block per kCopyThreads * Unroll words, no grid-stride loop: on an H100 a grid of
// short-lived 1024-thread blocks copied 1-2% faster than persistent blocks striding over
// the data (which lost 8%), the loads bypass L1 and the stores are marked streaming so
// the data passes through L2 without displacing anything.
// A thread's Unroll words sit blockDim.x apart: each load instruction of a warp covers
// 512 consecutive bytes. All loads are issued before any store.
template <int Unroll>
__global__ void __launch_bounds__(kCopyThreads)
    copy_float4_kernel(const uint4* __restrict__ in, uint4* __restrict__ out, long long n4) {
  const long long base = blockIdx.x * static_cast<long long>(kCopyThreads) * Unroll + threadIdx.x;
  uint4 r[Unroll];
#pragma unroll
  for (int u = 0; u < Unroll; ++u) {
    const long long i = base + static_cast<long long>(u) * kCopyThreads;
    if (i < n4) r[u] = arch::ld_stream_16(in + i);
  }
#pragma unroll
  for (int u = 0; u < Unroll; ++u) {
    const long long i = base + static_cast<long long>(u) * kCopyThreads;
    if (i < n4) arch::st_stream_16(out + i, r[u]);
  }
}

template <int Unroll>
__global__ void __launch_bounds__(kStreamThreads)
    read_sum_kernel(const uint4* __restrict__ in, long long n4, unsigned* __restrict__ total) {
  unsigned acc = 0;
  const long long step = static_cast<long long>(gridDim.x) * kStreamThreads * Unroll;
  for (long long base = blockIdx.x * static_cast<long long>(kStreamThreads) * Unroll + threadIdx.x; base < n4;
       base += step) {
    uint4 r[Unroll];  // (Unroll) words in flight
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const long long i = base + static_cast<long long>(u) * kStreamThreads;
      r[u] = i < n4 ? __ldg(in + i) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < Unroll; ++u) acc += r[u].x + r[u].y + r[u].z + r[u].w;
  }
  // Warp, then block, then one atomic per block.
  for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_xor_sync(0xFFFFFFFFu, acc, offset);
  __shared__ unsigned warp_sums[kStreamThreads / 32];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned block_sum = 0;
    for (int w = 0; w < kStreamThreads / 32; ++w) block_sum += warp_sums[w];
    atomicAdd(total, block_sum);
  }
}

// The read ceiling through the tensor memory accelerator's bulk copies: one block per SM
// keeps kBulkStages tiles of kBulkTileBytes in flight (224 KiB: more bytes in flight per SM
// than registers can hold), its threads sum each tile out of shared memory while the next
// ones land. Blocks take tiles round-robin, then one slice each of the rest, so all read the
// same bytes (bulk_split.hpp); ordinary loads take the last few kilobytes.
#if GEMMLAB_CODE_SM90  // (its one caller's body is sm_90 code)
__device__ void add_block_sum(unsigned acc, unsigned* total) {
  for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_xor_sync(0xFFFFFFFFu, acc, offset);
  if (threadIdx.x % 32 == 0) atomicAdd(total, acc);
}
#endif

__global__ void __launch_bounds__(kBulkThreads)
    read_bulk_kernel(const unsigned char* __restrict__ in, BulkPlan plan, long long n4, unsigned* __restrict__ total) {
  // cp.async.bulk and mbarrier transaction counts are sm_90 code (read_bulk_runs).
#if GEMMLAB_CODE_SM90
  namespace ptx = ::cuda::ptx;
  extern __shared__ __align__(128) unsigned char stage[];
  __shared__ std::uint64_t landed[kBulkStages];  // one mbarrier per stage: its bytes arrived
  if (threadIdx.x == 0) {
    for (int s = 0; s < kBulkStages; ++s) ptx::mbarrier_init(&landed[s], 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  const long long jobs = plan.rounds + (plan.slice_bytes > 0);
  const auto job_bytes = [&](long long j) { return j < plan.rounds ? kBulkTileBytes : plan.slice_bytes; };
  const auto fetch = [&](long long j, int s) {
    const long long at = j < plan.rounds
                             ? (blockIdx.x + j * gridDim.x) * static_cast<long long>(kBulkTileBytes)
                             : plan.rounds * gridDim.x * kBulkTileBytes + blockIdx.x * static_cast<long long>(plan.slice_bytes);
    const auto bytes = static_cast<std::uint32_t>(job_bytes(j));
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &landed[s], bytes);
    ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, stage + s * kBulkTileBytes, in + at, bytes, &landed[s]);
  };
  if (threadIdx.x == 0)
    for (int s = 0; s < kBulkStages && s < jobs; ++s) fetch(s, s);
  unsigned acc = 0;
  for (long long j = 0; j < jobs; ++j) {
    const int s = static_cast<int>(j % kBulkStages);
    while (!ptx::mbarrier_try_wait_parity(&landed[s], static_cast<std::uint32_t>((j / kBulkStages) & 1))) {
    }
    const auto* words = reinterpret_cast<const uint4*>(stage + s * kBulkTileBytes);
    const int n = job_bytes(j) / 16;
    for (int i = threadIdx.x; i < n; i += kBulkThreads) {
      const uint4 v = words[i];
      acc += v.x + v.y + v.z + v.w;
    }
    __syncthreads();  // every thread is done with stage s before it is refilled
    if (threadIdx.x == 0 && j + kBulkStages < jobs) fetch(j + kBulkStages, s);
  }
  const auto* rest = reinterpret_cast<const uint4*>(in);
  for (long long i = plan.bulk_bytes / 16 + blockIdx.x * static_cast<long long>(kBulkThreads) + threadIdx.x; i < n4;
       i += static_cast<long long>(gridDim.x) * kBulkThreads) {
    const uint4 v = rest[i];
    acc += v.x + v.y + v.z + v.w;
  }
  add_block_sum(acc, total);
#endif
}

template <class T>
__global__ void __launch_bounds__(kStreamThreads)
    copy_one_per_thread_kernel(const T* __restrict__ in, T* __restrict__ out, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(kStreamThreads) + threadIdx.x;
  if (i < n) out[i] = in[i];
}

struct LinearWords {
  std::uint32_t k, seed;
  __device__ std::uint32_t operator()(long long i) const { return static_cast<std::uint32_t>(i) * k + seed; }
};

unsigned blocks_for(long long n, long long per_block) {
  return static_cast<unsigned>((n + per_block - 1) / per_block);
}

template <int Unroll>
Status launch_copy(const void* in, void* out, long long n4, cudaStream_t s) {
  copy_float4_kernel<Unroll><<<blocks_for(n4, static_cast<long long>(kCopyThreads) * Unroll), kCopyThreads, 0, s>>>(
      static_cast<const uint4*>(in), static_cast<uint4*>(out), n4);
  CUDA_CHECK_LAUNCH("copy_float4_kernel");
  return Status::ok();
}

template <int Unroll>
Status launch_read(const void* in, long long n4, int blocks, unsigned* total, cudaStream_t s) {
  read_sum_kernel<Unroll><<<static_cast<unsigned>(blocks), kStreamThreads, 0, s>>>(static_cast<const uint4*>(in),
                                                                                 n4, total);
  CUDA_CHECK_LAUNCH("read_sum_kernel");
  return Status::ok();
}

}  // namespace

Status copy_float4(const void* in, void* out, long long n4, int unroll, cudaStream_t stream) {
  switch (unroll) {
    case 1: return launch_copy<1>(in, out, n4, stream);
    case 2: return launch_copy<2>(in, out, n4, stream);
    case 4: return launch_copy<4>(in, out, n4, stream);
    case 8: return launch_copy<8>(in, out, n4, stream);
    default: return {StatusCode::InvalidValue, "copy_float4: unroll must be 1, 2, 4 or 8"};
  }
}

Status read_sum(const void* in, long long n4, int unroll, int blocks, unsigned* total, cudaStream_t stream) {
  switch (unroll) {
    case 1: return launch_read<1>(in, n4, blocks, total, stream);
    case 2: return launch_read<2>(in, n4, blocks, total, stream);
    case 4: return launch_read<4>(in, n4, blocks, total, stream);
    case 8: return launch_read<8>(in, n4, blocks, total, stream);
    default: return {StatusCode::InvalidValue, "read_sum: unroll must be 1, 2, 4 or 8"};
  }
}

Status read_bulk(const void* in, long long n4, int sm_count, unsigned* total, cudaStream_t stream) {
  if (reinterpret_cast<std::uintptr_t>(in) % 16 != 0) return {StatusCode::InvalidValue, "read_bulk: the buffer must be 16-byte aligned"};
  if (sm_count < 1) return {StatusCode::InvalidValue, "read_bulk: sm_count must be positive"};
  constexpr int kSmem = kBulkStages * kBulkTileBytes;
  static bool smem_raised = false;  // once: the call costs host time inside a timed repetition
  if (!smem_raised) {
    // Never launched with an empty body (a build whose code for this GPU predates sm_90).
    cudaFuncAttributes attributes{};
    CUDA_CHECK(cudaFuncGetAttributes(&attributes, read_bulk_kernel));
    if (attributes.ptxVersion < 90)
      return {StatusCode::ArchMismatch, "read_bulk: this build's code for this GPU has no sm_90 bulk copies (compute_" +
                                            std::to_string(attributes.ptxVersion) + ")"};
    CUDA_CHECK(cudaFuncSetAttribute(read_bulk_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
    smem_raised = true;
  }
  read_bulk_kernel<<<static_cast<unsigned>(sm_count), kBulkThreads, kSmem, stream>>>(
      static_cast<const unsigned char*>(in), bulk_plan(n4 * 16, sm_count), n4, total);
  CUDA_CHECK_LAUNCH("read_bulk_kernel");
  return Status::ok();
}

bool read_bulk_runs(int cc_major, int smem_per_block_optin) {
  if (cc_major < 9 || smem_per_block_optin < kBulkStages * kBulkTileBytes) return false;
  // The code the driver loaded for this device: compute_80 PTX on an H100 has an empty body.
  cudaFuncAttributes attributes{};
  return cudaFuncGetAttributes(&attributes, read_bulk_kernel) == cudaSuccess && attributes.ptxVersion >= 90;
}

template <class T>
Status copy_one_per_thread(const void* in, void* out, long long n, cudaStream_t stream) {
  copy_one_per_thread_kernel<T><<<blocks_for(n, kStreamThreads), kStreamThreads, 0, stream>>>(
      static_cast<const T*>(in), static_cast<T*>(out), n);
  CUDA_CHECK_LAUNCH("copy_one_per_thread_kernel");
  return Status::ok();
}
template Status copy_one_per_thread<float>(const void*, void*, long long, cudaStream_t);
template Status copy_one_per_thread<float2>(const void*, void*, long long, cudaStream_t);
template Status copy_one_per_thread<float4>(const void*, void*, long long, cudaStream_t);

Status fill_linear(void* data, long long words, std::uint32_t k, std::uint32_t seed, cudaStream_t stream) {
  return fill(data, words, LinearWords{k, seed}, stream);
}

int resident_blocks(int sm_count, int max_threads_per_sm) {
  return sm_count * (max_threads_per_sm / kStreamThreads > 0 ? max_threads_per_sm / kStreamThreads : 1);
}

}  // namespace gemmlab::cuda::mem
