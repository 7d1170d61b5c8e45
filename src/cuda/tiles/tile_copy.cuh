// Copying a tile of op(A) or op(B) from global to shared memory, for any transposition,
// any leading dimension and ragged edges. Used by the register-tiled rungs and above.
//
// A tile is ROWS x COLS in logical coordinates: (BM, BK) for op(A), (BK, BN) for op(B).
// In global memory one of the two dimensions is contiguous ("inner"): the columns of
// op(A) when A is not transposed, its rows when it is (likewise for B). Threads walk the
// inner dimension so that a warp's loads are coalesced, whatever the transposition.
// Elements outside the matrix read as zero, so partial tiles add nothing to C.
#pragma once

#include <cuda_runtime.h>

#include "cuda/arch/cp_async.cuh"
#include "cuda/tiles/common.cuh"

namespace gemmlab::cuda {

// Where a tile starts in global memory and how much of it lies inside the matrix.
struct TileSource {
  const float* origin;  // element (0, 0) of the tile; only dereferenced where valid
  long long ld;         // distance between consecutive outer lines
  int rows_left;        // valid rows from the tile origin (may exceed ROWS)
  int cols_left;        // valid columns from the tile origin
};

// op(A) tile at (row0, k0): (BM, BK) logical, contiguous along k unless A is transposed.
template <bool TransA>
__device__ __forceinline__ TileSource a_tile(const GemmArgs& g, int row0, int k0) {
  const long long offset = TransA ? static_cast<long long>(k0) * g.lda + row0
                                  : static_cast<long long>(row0) * g.lda + k0;
  return {g.a + offset, g.lda, g.m - row0, g.k - k0};
}
// op(B) tile at (k0, col0): (BK, BN) logical, contiguous along n unless B is transposed.
template <bool TransB>
__device__ __forceinline__ TileSource b_tile(const GemmArgs& g, int k0, int col0) {
  const long long offset = TransB ? static_cast<long long>(col0) * g.ldb + k0
                                  : static_cast<long long>(k0) * g.ldb + col0;
  return {g.b + offset, g.ldb, g.k - k0, g.n - col0};
}

// A shared-memory tile: element (r, c) at s[r * RowStride + c * ColStride].
template <int RowStride, int ColStride>
struct SmemLayout {
  static constexpr int kRowStride = RowStride, kColStride = ColStride;
  __device__ static constexpr int offset(int r, int c) { return r * RowStride + c * ColStride; }
};

// Register-staged copy, VEC elements at a time along the inner dimension: load() issues
// the global loads (float4 when `Vector`, i.e. 16-byte aligned rows), store() writes them
// to shared memory in the layout the compute loop wants (a transposing store when the
// inner dimensions differ). Splitting the two lets a rung load the next tile while it
// computes on this one.
template <int Rows, int Cols, int Threads, bool ColsContiguous, bool Vector>
struct StagedTileCopy {
  static constexpr int kVec = 4;
  static constexpr int kInner = ColsContiguous ? Cols : Rows;
  static constexpr int kVecsPerLine = kInner / kVec;
  static constexpr int kPerThread = Rows * Cols / kVec / Threads;
  static_assert(kInner % kVec == 0, "the inner tile dimension must be a multiple of 4");
  static_assert(Rows * Cols % (kVec * Threads) == 0, "every thread copies the same number of vectors");

  float4 regs[kPerThread];

  __device__ __forceinline__ void load(const TileSource& src, int tid) {
    const int outer_left = ColsContiguous ? src.rows_left : src.cols_left;
    const int inner_left = ColsContiguous ? src.cols_left : src.rows_left;
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int e = tid + i * Threads;
      const int outer = e / kVecsPerLine, inner = (e % kVecsPerLine) * kVec;
      const float* p = src.origin + static_cast<long long>(outer) * src.ld + inner;
      if (Vector && outer < outer_left && inner + kVec <= inner_left) {
        regs[i] = __ldg(reinterpret_cast<const float4*>(p));
      } else {
        const bool line_ok = outer < outer_left;
        regs[i].x = line_ok && inner + 0 < inner_left ? __ldg(p + 0) : 0.0f;
        regs[i].y = line_ok && inner + 1 < inner_left ? __ldg(p + 1) : 0.0f;
        regs[i].z = line_ok && inner + 2 < inner_left ? __ldg(p + 2) : 0.0f;
        regs[i].w = line_ok && inner + 3 < inner_left ? __ldg(p + 3) : 0.0f;
      }
    }
  }

  template <class Layout>
  __device__ __forceinline__ void store(float* smem, int tid) const {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int e = tid + i * Threads;
      const int outer = e / kVecsPerLine, inner = (e % kVecsPerLine) * kVec;
      const int r = ColsContiguous ? outer : inner, c = ColsContiguous ? inner : outer;
      constexpr int kInnerStride = ColsContiguous ? Layout::kColStride : Layout::kRowStride;
      float* dst = smem + Layout::offset(r, c);
      if constexpr (kInnerStride == 1) {
        *reinterpret_cast<float4*>(dst) = regs[i];  // layouts keep these 16-byte aligned
      } else {
        dst[0 * kInnerStride] = regs[i].x;
        dst[1 * kInnerStride] = regs[i].y;
        dst[2 * kInnerStride] = regs[i].z;
        dst[3 * kInnerStride] = regs[i].w;
      }
    }
  }
};

// Asynchronous copy straight into shared memory (cp.async), which keeps the global
// orientation: the shared layout's inner stride must be 1. 16-byte copies with zero-fill
// when `Vector`; otherwise one 4-byte copy per element (rows not 16-byte aligned).
template <int Rows, int Cols, int Threads, bool ColsContiguous, bool Vector>
struct AsyncTileCopy {
  static constexpr int kVec = 4;
  static constexpr int kInner = ColsContiguous ? Cols : Rows;
  static constexpr int kVecsPerLine = kInner / kVec;
  static constexpr int kPerThread = Rows * Cols / kVec / Threads;
  static_assert(kInner % kVec == 0, "the inner tile dimension must be a multiple of 4");
  static_assert(Rows * Cols % (kVec * Threads) == 0, "every thread copies the same number of vectors");

  template <class Layout>
  __device__ __forceinline__ static void copy(const TileSource& src, float* smem, int tid) {
    static_assert((ColsContiguous ? Layout::kColStride : Layout::kRowStride) == 1,
                  "cp.async keeps the global orientation: the inner dimension must be contiguous");
    const int outer_left = ColsContiguous ? src.rows_left : src.cols_left;
    const int inner_left = ColsContiguous ? src.cols_left : src.rows_left;
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int e = tid + i * Threads;
      const int outer = e / kVecsPerLine, inner = (e % kVecsPerLine) * kVec;
      const int r = ColsContiguous ? outer : inner, c = ColsContiguous ? inner : outer;
      float* dst = smem + Layout::offset(r, c);
      const bool line_ok = outer < outer_left;
      // An invalid source still needs a legal address: the tile origin is one whenever
      // anything of the tile is valid, and src_bytes = 0 reads nothing.
      const float* p = src.origin + (line_ok ? static_cast<long long>(outer) * src.ld + inner : 0);
      if constexpr (Vector) {
        const int valid = line_ok ? min(max(inner_left - inner, 0), kVec) : 0;
        arch::cp_async_16(dst, valid > 0 ? p : src.origin, valid * 4);
      } else {
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          const bool ok = line_ok && inner + j < inner_left;
          arch::cp_async_4(dst + j, ok ? p + j : src.origin, ok ? 4 : 0);
        }
      }
    }
  }
};

// 16-byte vector loads need every row start 16-byte aligned: an aligned base and a
// leading dimension that is a multiple of 4 floats.
inline bool rows_16b_aligned(const void* base, long long ld) {
  return reinterpret_cast<unsigned long long>(base) % 16 == 0 && ld % 4 == 0;
}

}  // namespace gemmlab::cuda

namespace gemmlab::cuda {

// One element per thread per step, for tiles too small to give every thread a vector.
// Consecutive threads walk the contiguous dimension (coalesced for any transposition).
template <int Rows, int Cols, int Threads, bool ColsContiguous, class Layout>
__device__ __forceinline__ void copy_tile_scalar(const TileSource& src, float* smem, int tid) {
  constexpr int kInner = ColsContiguous ? Cols : Rows;
  const int outer_left = ColsContiguous ? src.rows_left : src.cols_left;
  const int inner_left = ColsContiguous ? src.cols_left : src.rows_left;
#pragma unroll
  for (int e = tid; e < Rows * Cols; e += Threads) {
    const int outer = e / kInner, inner = e % kInner;
    const int r = ColsContiguous ? outer : inner, c = ColsContiguous ? inner : outer;
    smem[Layout::offset(r, c)] = outer < outer_left && inner < inner_left
                                     ? __ldg(src.origin + static_cast<long long>(outer) * src.ld + inner)
                                     : 0.0f;
  }
}

}  // namespace gemmlab::cuda
