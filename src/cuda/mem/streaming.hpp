// The streaming kernels that set the bandwidth ceilings, shared by `gemmlab device` and
// the alignment experiment: a float4 copy with several loads in flight per thread, and a
// reduction-style read that sums every word (so nothing can be optimised away and the
// sum proves every word was read). Launchers only; the kernels are in streaming.cu.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstdint>

#include "cuda/mem/bulk_split.hpp"
#include "gemmlab/status.hpp"

namespace gemmlab::cuda::mem {

inline constexpr int kStreamThreads = 256;
inline constexpr int kCopyThreads = 1024;  // the copy kernel's blocks (see streaming.cu)
// Loads in flight per thread that the copy and read kernels are instantiated for.
inline constexpr std::array<int, 4> kUnrolls = {1, 2, 4, 8};

// out[i] <- in[i] for n4 16-byte words; each thread loads `unroll` words (a block's
// loads of one step are consecutive: coalesced) before it stores any; streaming hints.
Status copy_float4(const void* in, void* out, long long n4, int unroll, cudaStream_t stream);

// *total += sum of the 32-bit words of in[0 .. 4 n4) (mod 2^32); `blocks` persistent
// blocks stride over the data, `unroll` 16-byte loads in flight per thread, one atomic
// per block.
Status read_sum(const void* in, long long n4, int unroll, int blocks, unsigned* total, cudaStream_t stream);

// The same sum through bulk copies (TMA, sm_90) into a ring of shared-memory stages, one
// block per SM. `in` 16-byte aligned. Runs where read_bulk_runs() says so.
Status read_bulk(const void* in, long long n4, int sm_count, unsigned* total, cudaStream_t stream);

// Whether read_bulk runs on the current device: compute capability 9.0 or later, its stages
// fit the device's shared memory per block (smem_per_block_optin, bytes), and this build
// holds sm_90 code for it (a build for older architectures compiles its body to nothing).
bool read_bulk_runs(int cc_major, int smem_per_block_optin);

// One element of T per thread: out[i] <- in[i], i < n (T = float, float2, float4).
template <class T>
Status copy_one_per_thread(const void* in, void* out, long long n, cudaStream_t stream);

// data[i] <- k * i + seed (mod 2^32): a fill whose sum has a closed form.
Status fill_linear(void* data, long long words, std::uint32_t k, std::uint32_t seed, cudaStream_t stream);

// Sum of k * i + seed over i < n, mod 2^32.
inline std::uint32_t linear_sum(std::uint64_t n, std::uint32_t k, std::uint32_t seed) {
  // n (n - 1) / 2 fits 64 bits for n < 2^32; wrap the rest in 32-bit arithmetic.
  const std::uint64_t pairs = n % 2 == 0 ? (n / 2) * (n - 1) : n * ((n - 1) / 2);
  return static_cast<std::uint32_t>(pairs) * k + static_cast<std::uint32_t>(n) * seed;
}

// Persistent-grid size for the read kernel: every resident block slot once.
int resident_blocks(int sm_count, int max_threads_per_sm);

}  // namespace gemmlab::cuda::mem
