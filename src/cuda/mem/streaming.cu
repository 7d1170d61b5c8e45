// The streaming kernels of streaming.hpp.
#include "cuda/mem/check.cuh"
#include "cuda/mem/streaming.hpp"

namespace gemmlab::cuda::mem {
namespace {

// A thread's `Unroll` words sit blockDim.x apart, so at each step the block's loads cover
// Unroll consecutive runs of 256 x 16 bytes. All loads are issued before any store.
template <int Unroll>
__global__ void __launch_bounds__(kStreamThreads)
    copy_float4_kernel(const float4* __restrict__ in, float4* __restrict__ out, long long n4) {
  const long long step = static_cast<long long>(gridDim.x) * kStreamThreads * Unroll;
  for (long long base = blockIdx.x * static_cast<long long>(kStreamThreads) * Unroll + threadIdx.x; base < n4;
       base += step) {
    float4 r[Unroll];  // (Unroll) words in flight, in registers
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const long long i = base + static_cast<long long>(u) * kStreamThreads;
      if (i < n4) r[u] = in[i];
    }
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const long long i = base + static_cast<long long>(u) * kStreamThreads;
      if (i < n4) out[i] = r[u];
    }
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
  copy_float4_kernel<Unroll><<<blocks_for(n4, static_cast<long long>(kStreamThreads) * Unroll), kStreamThreads, 0, s>>>(
      static_cast<const float4*>(in), static_cast<float4*>(out), n4);
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
