// Standalone throughput of b5a91a0's RowCopy copier warps (probe, not part of the build).
#include <cuda_runtime.h>
#include <cuda/atomic>
#include <cuda/ptx>
#include <cstdint>
#include <cstdio>
#include <vector>
#include <algorithm>
namespace ptx = ::cuda::ptx;
namespace arch {
__device__ __forceinline__ void prefetch_l2_bulk(const void* gmem_src, unsigned bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(gmem_src), "r"(bytes) : "memory");
}
}
constexpr int kBM = 128;
struct RowCopy {
  const std::uint16_t* src;  // A as stored: `rows` rows of `cols` elements, `ld` apart
  std::uint16_t* dst;        // the padded workspace: rows `pitch` apart (a multiple of 8)
  long long ld, pitch;
  int first_row;      // rows below it were copied before the kernel (a multiple of kBM)
  int rows, cols;
  unsigned* copied;   // per tile row: its rows copied so far in this run
  unsigned* ready;    // per tile row: the epoch of the last run that copied all of them
  unsigned epoch;     // this run's, never 0
  __host__ __device__ bool active() const { return rows > first_row; }
};
// The 16 bytes at p, 16-byte aligned, of which only those below `end` are read (the last
// chunk of the last row may end past A, and past its allocation).
__device__ __forceinline__ uint4 load_chunk(const unsigned char* p, const unsigned char* end) {
  if (p + 16 <= end) return __ldg(reinterpret_cast<const uint4*>(p));
  std::uint32_t w[4] = {0, 0, 0, 0};
#pragma unroll
  for (int e = 0; e < 8; ++e)
    if (p + 2 * e + 2 <= end) w[e / 2] |= static_cast<std::uint32_t>(__ldg(reinterpret_cast<const std::uint16_t*>(p + 2 * e))) << (16 * (e % 2));
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// One row: its 16-byte chunks j of the workspace are bytes [16 j, 16 j + 16) of the source
// row, which starts `offset` = 4 Q + 2 h bytes past a 16-byte boundary: lane l of a step
// reads the aligned chunks j and j + 1 around them (j + 1 is lane l + 1's j: an L1 hit) and
// keeps words Q .. Q + 4 of the pair, shifted by h halves (byte_perm). Elements past `cols`
// become zeros. kCopySteps steps' loads go out before their stores (a store between them
// would hold the next loads back: the compiler cannot tell that the copy does not overlap A).
constexpr int kCopySteps = 2, kRowsAhead = 2;
template <int Q>
__device__ __forceinline__ void copy_row(const unsigned char* aligned, bool half, std::uint16_t* d, int cols, long long pitch,
                                         const unsigned char* end) {
  constexpr int kStep = 32 * 8;  // elements per step of a warp
  const int lane = threadIdx.x % 32;
  const unsigned selector = half ? 0x5432u : 0x3210u;
  for (int col0 = lane * 8; col0 < pitch; col0 += kCopySteps * kStep) {
    uint4 x[kCopySteps][2];
#pragma unroll
    for (int step = 0; step < kCopySteps; ++step) {
      const unsigned char* p = aligned + 2 * static_cast<long long>(col0 + step * kStep);
      x[step][0] = load_chunk(p, end);
      x[step][1] = load_chunk(p + 16, end);
    }
#pragma unroll
    for (int step = 0; step < kCopySteps; ++step) {
      const int col = col0 + step * kStep;
      const std::uint32_t w[8] = {x[step][0].x, x[step][0].y, x[step][0].z, x[step][0].w,
                                  x[step][1].x, x[step][1].y, x[step][1].z, x[step][1].w};
      std::uint32_t out[4];
#pragma unroll
      for (int t = 0; t < 4; ++t) {
        out[t] = __byte_perm(w[Q + t], w[Q + t + 1], selector);
        if (col + 2 * t >= cols) out[t] = 0;                                   // the pitch's tail: zeros
        else if (col + 2 * t + 1 >= cols) out[t] &= 0xFFFFu;
      }
      if (col < pitch) *reinterpret_cast<uint4*>(d + col) = make_uint4(out[0], out[1], out[2], out[3]);
    }
  }
}

// Copier `copier` of `copiers` (one warp each): rows first_row + copier, + copiers, ...,
// with 16-byte loads (copy_row; element-wise loads and their address arithmetic left the
// warps too slow to stay ahead of the tiles). Lane 0 first has the TMA unit prefetch the
// aligned interior of the warp's row kRowsAhead rows on into L2 (one instruction, no
// registers), so that the loads wait for L2, not DRAM.
__device__ __forceinline__ void copy_rows(const RowCopy& c, int copier, int copiers) {
  namespace cu = ::cuda;
  const int lane = threadIdx.x % 32;
  const auto* a = reinterpret_cast<const unsigned char*>(c.src);
  const unsigned char* end = a + 2 * (static_cast<long long>(c.rows - 1) * c.ld + c.cols);
  const auto prefetch = [&](int r) {
    if (lane != 0 || r >= c.rows) return;
    const auto begin = reinterpret_cast<std::uintptr_t>(a + 2 * static_cast<long long>(r) * c.ld);
    const std::uintptr_t first = (begin + 15) / 16 * 16, last = (begin + 2 * static_cast<std::uintptr_t>(c.cols)) / 16 * 16;
    if (last > first) arch::prefetch_l2_bulk(reinterpret_cast<const void*>(first), static_cast<unsigned>(last - first));
  };
  for (int i = 0; i < kRowsAhead; ++i) prefetch(c.first_row + copier + i * copiers);
  for (int r = c.first_row + copier; r < c.rows; r += copiers) {
    prefetch(r + kRowsAhead * copiers);
    const unsigned char* row = a + 2 * static_cast<long long>(r) * c.ld;
    const unsigned offset = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(row) % 16);  // even
    const unsigned char* aligned = row - offset;
    std::uint16_t* d = c.dst + static_cast<long long>(r) * c.pitch;
    const bool half = offset % 4 != 0;
    switch (offset / 4) {  // the same in the whole warp
      case 0: copy_row<0>(aligned, half, d, c.cols, c.pitch, end); break;
      case 1: copy_row<1>(aligned, half, d, c.cols, c.pitch, end); break;
      case 2: copy_row<2>(aligned, half, d, c.cols, c.pitch, end); break;
      default: copy_row<3>(aligned, half, d, c.cols, c.pitch, end); break;
    }
    ptx::fence_proxy_async(ptx::space_global);  // for the TMA loads of other blocks
    __syncwarp();
    if (lane == 0) {
      const int tile = r / kBM;
      const int first = tile * kBM > c.first_row ? tile * kBM : c.first_row;
      const int last = tile * kBM + kBM < c.rows ? tile * kBM + kBM : c.rows;
      // The warp's rows before the count (release), and the last counter acquires them all.
      cu::atomic_ref<unsigned, cu::thread_scope_device> copied(c.copied[tile]);
      if (copied.fetch_add(1u, cu::memory_order_release) + 1 == static_cast<unsigned>(last - first)) {
        cu::atomic_thread_fence(cu::memory_order_acquire, cu::thread_scope_device);
        copied.store(0u, cu::memory_order_relaxed);  // for the next run (kernels end in between)
        cu::atomic_ref<unsigned, cu::thread_scope_device>(c.ready[tile]).store(c.epoch, cu::memory_order_release);
      }
    }
  }
}

__global__ void copier_kernel(RowCopy c, int warps) {
  const int w = threadIdx.x / 32;
  if (w >= warps) { // idle warps that spin like consumers waiting
    return;
  }
  copy_rows(c, blockIdx.x * warps + w, gridDim.x * warps);
}
int main() {
  const int rows = 4095, cols = 4095; const long long ld = 4095, pitch = 4096;
  std::uint16_t *src, *dst; unsigned* flags;
  cudaMalloc(&src, rows * ld * 2); cudaMalloc(&dst, rows * pitch * 2); cudaMalloc(&flags, 2 * 64 * 4);
  cudaMemset(src, 1, rows * ld * 2); cudaMemset(flags, 0, 2 * 64 * 4);
  void* flush; cudaMalloc(&flush, 256 << 20);
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  unsigned epoch = 0;
  for (int warps : {1, 3, 6, 12, 32}) for (int blocks : {sms, 2 * sms}) {
    std::vector<float> t;
    for (int rep = 0; rep < 12; ++rep) {
      cudaMemsetAsync(flush, rep, 256 << 20);
      RowCopy c{src, dst, ld, pitch, 0, rows, cols, flags, flags + 64, ++epoch};
      cudaEventRecord(e0);
      copier_kernel<<<blocks, 32 * std::max(warps, 1)>>>(c, warps);
      cudaEventRecord(e1); cudaEventSynchronize(e1);
      float ms; cudaEventElapsedTime(&ms, e0, e1); if (rep >= 2) t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    const double us = t[t.size() / 2] * 1e3, mb = rows * cols * 2.0 / 1e6;
    printf("warps/block %2d blocks %3d: %8.1f us  %6.3f MB/us of A (%5.0f GB/s traffic) %s\n", warps, blocks, us, mb / us, 2 * mb / us * 1e3, cudaGetErrorString(cudaGetLastError()));
  }
}
