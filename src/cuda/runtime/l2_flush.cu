// The harness's "clean" L2 flush reads its flush buffer after writing it (executor.cpp):
// a read of more than the L2 evicts the dirty lines the write left, so their write-back
// happens here, outside the timed region, and not inside the next timed kernel.
#include <cstdint>

#include "cuda/runtime/check.hpp"
#include "cuda/runtime/l2_flush.hpp"

namespace gemmlab::cuda {
namespace {

constexpr int kReadThreads = 512;
constexpr int kReadBlocksPerSm = 4;

__global__ void read_through_kernel(const uint4* __restrict__ words, long long count, unsigned marker,
                                    unsigned* __restrict__ sink) {
  unsigned x = 0;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const uint4 w = words[i];
    x ^= w.x ^ w.y ^ w.z ^ w.w;
  }
  if (x == marker) *sink = x;
}

}  // namespace

Status read_through_l2(const void* data, std::size_t bytes, int sm_count, unsigned marker, unsigned* sink,
                       cudaStream_t stream) {
  if (reinterpret_cast<std::uintptr_t>(data) % sizeof(uint4) != 0 || bytes % sizeof(uint4) != 0)
    return {StatusCode::InvalidValue, "read_through_l2: the buffer must be 16-byte aligned and sized"};
  if (sm_count < 1) return {StatusCode::InvalidValue, "read_through_l2: sm_count must be positive"};
  read_through_kernel<<<static_cast<unsigned>(sm_count * kReadBlocksPerSm), kReadThreads, 0, stream>>>(
      static_cast<const uint4*>(data), static_cast<long long>(bytes / sizeof(uint4)), marker, sink);
  CUDA_CHECK_LAUNCH("read_through_kernel");
  return Status::ok();
}

}  // namespace gemmlab::cuda
