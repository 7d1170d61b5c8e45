// Data the memory lab moves, and the checks that it arrived intact. Sources are filled
// with a position-dependent pattern (never zeros or constants) by a kernel, destinations
// are poisoned first (cudaMemset to 0xFF), and a kernel counts the words that differ from
// what the experiment should have produced: a copy that drops, duplicates or misplaces
// anything shows up as mismatches. For kernels only (.cu files).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/mem/experiment.hpp"
#include "cuda/runtime/buffer.hpp"
#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda::mem {

// The word cudaMemsetAsync(p, 0xFF, ...) leaves: "not written".
inline constexpr std::uint32_t kPoison = 0xFFFFFFFFu;

// A 32-bit hash of a position (splitmix64's finaliser): neighbouring words differ in
// every bit, so a shifted or misplaced copy cannot match by accident.
__host__ __device__ inline std::uint32_t pattern_word(std::uint64_t i, std::uint32_t seed) {
  std::uint64_t z = i + 0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(seed) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return static_cast<std::uint32_t>(z ^ (z >> 31));
}

// A small whole number (0..65535) as a float: sums and "+ 2" on it are exact in FP32,
// so arithmetic experiments can be checked bit for bit.
__host__ __device__ inline float pattern_float(std::uint64_t i, std::uint32_t seed) {
  return static_cast<float>(pattern_word(i, seed) & 0xFFFFu);
}

inline unsigned check_blocks(long long n, int threads) {
  constexpr long long kMaxBlocks = 4096;  // grid-stride beyond this
  const long long blocks = (n + threads - 1) / threads;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks > kMaxBlocks ? kMaxBlocks : blocks);
}

// data[i] <- word(i) for i < n (32-bit words).
template <class Word>
__global__ void fill_kernel(std::uint32_t* __restrict__ data, long long n, Word word) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    data[i] = word(i);
}

template <class Word>
Status fill(void* data, long long words, Word word, cudaStream_t stream) {
  constexpr int kThreads = 256;
  fill_kernel<<<check_blocks(words, kThreads), kThreads, 0, stream>>>(static_cast<std::uint32_t*>(data), words,
                                                                       word);
  CUDA_CHECK_LAUNCH("fill_kernel");
  return Status::ok();
}

// Adds the number of i < n with !expect(i, data[i]) to *count (one atomic per thread
// that saw any, so a clean run costs no atomics).
template <class Expect>
__global__ void count_mismatches_kernel(const std::uint32_t* __restrict__ data, long long n, Expect expect,
                                        unsigned long long* count) {
  unsigned long long local = 0;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    if (!expect(i, data[i])) ++local;
  if (local != 0) atomicAdd(count, local);
}

template <class Expect>
Status Checker::count(const void* data, long long words, Expect expect, cudaStream_t stream, long long& mismatches) {
  constexpr int kThreads = 256;
  CUDA_CHECK(cudaMemsetAsync(counter_.data(), 0, sizeof(unsigned long long), stream));
  count_mismatches_kernel<<<check_blocks(words, kThreads), kThreads, 0, stream>>>(
      static_cast<const std::uint32_t*>(data), words, expect, counter_.as<unsigned long long>());
  CUDA_CHECK_LAUNCH("count_mismatches_kernel");
  CUDA_CHECK(cudaMemcpyAsync(host_.data(), counter_.data(), sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                             stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  mismatches = static_cast<long long>(*host_.as<unsigned long long>());
  return Status::ok();
}

// ---- fills and expectations every experiment uses --------------------------------

struct PatternWords {  // word i of the pattern
  std::uint32_t seed;
  __device__ std::uint32_t operator()(long long i) const { return pattern_word(static_cast<std::uint64_t>(i), seed); }
};

struct SameAsPattern {  // a full copy of PatternWords
  std::uint32_t seed;
  __device__ bool operator()(long long i, std::uint32_t w) const {
    return w == pattern_word(static_cast<std::uint64_t>(i), seed);
  }
};

}  // namespace gemmlab::cuda::mem
