// Copies of operands the TMA + wgmma kernels cannot read as they are.
//
// Padded (repitch_rows): rows as they are, into rows that start every 16 bytes (seed 001's
// memory padding): a source row of odd pitch is read element by element (a warp still
// reads consecutive elements: coalesced) and written in 16-byte stores. Measured on an H100
// for a 4095 x 4095 bf16 matrix: 31 us against cudaMemcpy2DAsync's 53 us in a bench run,
// 22 us under Nsight Compute with its cache flush (3.0 TB/s of traffic; reading aligned
// words and shifting them into place gained 1 us, so the copy stays this simple). Both
// operands in one grid took 51 us where the L2 was left dirty by the kernel before (Nsight
// Compute without cache control): part of that is writing those lines back.
//
// K-major (stage_k_major): operands rewritten K-major for the tf32 and FP8 tensor cores,
// which read A and B only with K contiguous: op(X) (rows x k, either orientation, any ld) is copied through a padded
// shared-memory tile (the seeds' transpose: coalesced reads and coalesced writes, the
// extra column keeping the column-wise tile accesses free of bank conflicts) into a
// row-major workspace whose rows start every 16 bytes.
//
// With Split (3xTF32), each row holds two segments of `segment` columns: the tf32 part
// big = rna(x) and the remainder small = x - big (exact in f32). big·big + big·small +
// small·big then carries about 21 bits of each input's mantissa: float32-level products
// at tensor-core speed. Columns from k to the segment's end are zeros, so a K loop over
// whole segments adds nothing.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "cuda/arch/grid_dependency.cuh"
#include "cuda/arch/target.cuh"
#include "cuda/tiles/common.cuh"
#include "cuda/runtime/check.hpp"
#include "gemmlab/variant.hpp"

namespace gemmlab::cuda::staging {

constexpr int kTile = 32;      // a 32 x 32 tile per block
constexpr int kBlockRows = 8;  // 32 x 8 threads, four rows each
constexpr int kMaxGridY = 65535;
constexpr int kRepitchThreads = 256;

// cvt.rna.tf32.f32 (PTX ISA, cvt): x rounded to the nearest tf32 value, ties away from
// zero, as a float whose low 13 mantissa bits are zero. The instruction is sm_80 code; the
// 3xTF32 split that uses it runs on Hopper only, but this header is compiled for every
// architecture of the build, so sm_75 gets the same rounding in integer arithmetic (half a
// tf32 ulp added to the magnitude, then truncated; NaN and infinity left as they are).
__device__ __forceinline__ float round_to_tf32(float x) {
#if GEMMLAB_CODE_SM80
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
#else
  const std::uint32_t bits = __float_as_uint(x);
  if ((bits & 0x7F800000u) == 0x7F800000u) return x;
  return __uint_as_float((bits + 0x1000u) & 0xFFFFE000u);
#endif
}

// Source: element (r, kk) of op(X) at x[r * ld + kk] (KContiguous) or x[kk * ld + r].
// Destination: row r at out + r * pitch; with Split, big at column kk, small at segment + kk.
// T: float, or the bytes of FP8 (whose 32-byte reads and writes use a sector each: a copy
// that only transposed FP8 operands need).
template <class T, bool KContiguous, bool Split>
__global__ void __launch_bounds__(kTile * kBlockRows)
    k_major_kernel(const T* __restrict__ x, long long ld, int rows, int k, T* __restrict__ out, long long pitch,
                   int segment) {
  static_assert(!Split || sizeof(T) == 4, "3xTF32 splits f32 operands");
  __shared__ T tile[kTile][kTile + 1];  // [row][kk]; the extra column: see above
  arch::launch_dependents();  // the GEMM may launch early (repitch_kernel)
  const int k0 = blockIdx.x * kTile;
  const int tx = threadIdx.x, ty = threadIdx.y;
  // r0 + gridDim.y x kTile may pass 2^31 where rows comes near it: the last step lands on
  // rows instead. (r0 is a multiple of kTile below rows, so r0 + kTile - 1 stays in int.)
  const int r_stride = gridDim.y * kTile;
  for (int r0 = blockIdx.y * kTile; r0 < rows; r0 = rows - r0 > r_stride ? r0 + r_stride : rows) {
#pragma unroll
    for (int j = 0; j < kTile; j += kBlockRows) {
      if constexpr (KContiguous) {  // a warp reads 32 consecutive kk of one row
        const int r = r0 + ty + j, kk = k0 + tx;
        tile[ty + j][tx] = r < rows && kk < k ? x[static_cast<long long>(r) * ld + kk] : T{};
      } else {  // a warp reads 32 consecutive rows of one kk
        const int r = r0 + tx, kk = k0 + ty + j;
        tile[tx][ty + j] = r < rows && kk < k ? x[static_cast<long long>(kk) * ld + r] : T{};
      }
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kTile; j += kBlockRows) {
      const int r = r0 + ty + j, kk = k0 + tx;
      if (r < rows && kk < segment) {  // zeros from k to the segment's end
        const T v = tile[ty + j][tx];
        T* row = out + static_cast<long long>(r) * pitch;
        if constexpr (Split) {
          const float big = round_to_tf32(v);
          row[kk] = big;
          // inf and NaN stay in big; the remainder of a non-finite value is zero, not NaN.
          row[segment + kk] = isfinite(big) ? v - big : 0.0f;
        } else {
          row[kk] = v;
        }
      }
    }
    __syncthreads();  // the tile is reused by the next rows
  }
}

// One matrix to re-pitch: `rows` rows of `cols` elements, row r at src + r * ld, into rows
// at dst + r * pitch (pitch a multiple of 16 bytes, dst 16-byte aligned).
template <class T>
struct RepitchJob {
  const T* src;
  long long ld;
  T* dst;
  long long pitch;
  int rows, cols;
};

// Both operands in one launch (rows of `a`, then rows of `b`; b.rows may be 0): one grid
// instead of two, so the second copy starts no ramp of its own and the GEMM after it waits
// for one tail, not two. Each block triggers the dependent launch at once (programmatic
// dependent launch, PDL): the GEMM's blocks are launched while the last wave of the copy
// runs, take SMs as they free up and wait in arch::wait_for_dependencies() for the whole
// copy to finish and be visible, so the launch latency hides behind the copy's tail.
// (Reading the source with an evict-first hint, so that the copy's output outlives it in L2,
// measured no faster: 53 against 51 us for both 4095^2 bf16 operands.)
template <class T>
__global__ void __launch_bounds__(kRepitchThreads) repitch_kernel(RepitchJob<T> a, RepitchJob<T> b) {
  arch::launch_dependents();
  constexpr int kPerStore = 16 / sizeof(T);
  // Rows and columns in 64-bit: a.rows + b.rows, row + gridDim.y and c + stride pass 2^31
  // where a matrix comes near it (a copy: the arithmetic costs nothing against the bytes).
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x * kPerStore;
  const long long rows = static_cast<long long>(a.rows) + b.rows;
  for (long long row = blockIdx.y; row < rows; row += gridDim.y) {
    // The job's fields one by one (a reference to either parameter would put both on the stack).
    const bool in_a = row < a.rows;
    const long long r = in_a ? row : row - a.rows;
    const int cols = in_a ? a.cols : b.cols;
    const T* s = (in_a ? a.src : b.src) + r * (in_a ? a.ld : b.ld);
    T* d = (in_a ? a.dst : b.dst) + r * (in_a ? a.pitch : b.pitch);
    for (long long c = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * kPerStore; c < cols;
         c += stride) {
      T v[kPerStore];
#pragma unroll
      for (int j = 0; j < kPerStore; ++j) v[j] = c + j < cols ? s[c + j] : T{};  // the pitch's tail: zeros
      uint4 chunk;
      memcpy(&chunk, v, sizeof chunk);
      *reinterpret_cast<uint4*>(d + c) = chunk;
    }
  }
}

// Enqueues the copies of `a` and `b` in one grid (T: the 1-, 2- or 4-byte element; b.rows may be 0).
template <class T>
Status repitch_rows(const RepitchJob<T>& a, const RepitchJob<T>& b, Stream stream) {
  constexpr int kPerStore = 16 / sizeof(T);
  const int cols = std::max(a.cols, b.rows > 0 ? b.cols : 0);
  const dim3 grid(static_cast<unsigned>(ceil_div(ceil_div(cols, kPerStore), kRepitchThreads)),
                  static_cast<unsigned>(std::min<long long>(static_cast<long long>(a.rows) + b.rows, kMaxGridY)));
  repitch_kernel<T><<<grid, kRepitchThreads, 0, static_cast<cudaStream_t>(stream)>>>(a, b);
  CUDA_CHECK_LAUNCH("repitch_kernel");
  return Status::ok();
}

// The layout of one staged operand.
struct StagedLayout {
  int segment;         // columns per segment: k rounded up (to 16 bytes, or to the K tile for Split)
  int segments;        // 1, or 2 with Split
  int element_bytes = sizeof(float);  // 4, or 1 for FP8
  long long pitch() const { return static_cast<long long>(segment) * segments; }
  std::size_t bytes(int rows) const { return static_cast<std::size_t>(rows) * pitch() * element_bytes; }
};

// Enqueues the copy of op(X) (rows x k) into `out` with layout `l` on `stream` (T: float, or
// std::uint8_t for FP8, never split).
template <class T>
Status stage_k_major(const T* x, long long ld, bool k_contiguous, int rows, int k, bool split, const StagedLayout& l,
                     T* out, Stream stream) {
  if (l.element_bytes != static_cast<int>(sizeof(T)) || (split && sizeof(T) != sizeof(float)))
    return {StatusCode::InternalError, "stage_k_major: the layout is not of this element type"};
  const dim3 block(kTile, kBlockRows);
  const dim3 grid(static_cast<unsigned>(ceil_div(l.segment, kTile)),
                  static_cast<unsigned>(std::min(ceil_div(rows, kTile), kMaxGridY)));
  const auto s = static_cast<cudaStream_t>(stream);
  const long long pitch = l.pitch();
  const auto launch = [&](auto kernel) { kernel<<<grid, block, 0, s>>>(x, ld, rows, k, out, pitch, l.segment); };
  if constexpr (sizeof(T) == sizeof(float)) {
    if (split) {
      if (k_contiguous) launch(k_major_kernel<T, true, true>);
      else launch(k_major_kernel<T, false, true>);
      CUDA_CHECK_LAUNCH("k_major_kernel");
      return Status::ok();
    }
  }
  if (k_contiguous) launch(k_major_kernel<T, true, false>);
  else launch(k_major_kernel<T, false, false>);
  CUDA_CHECK_LAUNCH("k_major_kernel");
  return Status::ok();
}
}  // namespace gemmlab::cuda::staging
