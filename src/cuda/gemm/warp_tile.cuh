// Block -> warp -> thread tiling of C, shared by the warptile and pipelined rungs.
//
// A block of kThreads computes a BM x BN tile of C. Its warps split that into WM x WN
// warp tiles; the 32 lanes of a warp form an 8 x 4 grid over the warp tile. Each thread
// owns TM x TN elements, taken as 4 x 4 pieces spaced 32 rows and 16 columns apart, so
// that the lanes of a quarter warp read neighbouring 16-byte words of shared memory
// (no bank conflicts) and every fragment read is one float4.
#pragma once

#include <cuda_runtime.h>

#include "cuda/gemm/common.cuh"

namespace gemmlab::cuda {

// MinBlocks_: resident blocks per SM asked of the compiler (__launch_bounds__), which caps
// registers at 65536 / (MinBlocks_ * threads).
template <int BM_, int BN_, int BK_, int WM_, int WN_, int Stages_ = 1, int MinBlocks_ = 1>
struct WarpTileConfig {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, kStages = Stages_;
  static constexpr int kMinBlocks = MinBlocks_;
  static constexpr int kLanesM = 8, kLanesN = 4;           // lanes of a warp over its tile
  static constexpr int kPiece = 4;                         // a float4
  static constexpr int TM = WM / kLanesM, TN = WN / kLanesN;  // elements of C per thread
  static constexpr int kPiecesM = TM / kPiece, kPiecesN = TN / kPiece;
  static constexpr int kPieceStrideM = kLanesM * kPiece;  // 32 rows between a thread's pieces
  static constexpr int kPieceStrideN = kLanesN * kPiece;  // 16 columns
  static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
  static constexpr int kThreads = kWarpsM * kWarpsN * 32;
  static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles cover the block tile");
  static_assert(TM % kPiece == 0 && TN % kPiece == 0, "thread tiles are whole 4 x 4 pieces");
  static_assert(BK % kPiece == 0, "k advances four at a time");
  static_assert(kThreads <= 1024, "at most 1024 threads per block");
};

// The TM x TN accumulators of one thread and the loop over one shared-memory stage.
// LayoutA maps (m, k) and LayoutB (k, n) to shared offsets; either operand may be stored
// k-major or k-minor (see tile_copy.cuh), and fragments are read as float4 either way.
template <class Cfg, class LayoutA, class LayoutB>
struct WarpTileMma {
  float acc[Cfg::TM][Cfg::TN];  // (TM, TN) of C in registers
  int row_base;                 // first row of this thread's first piece, within the block tile
  int col_base;

  __device__ __forceinline__ void init(int tid) {
    const int warp = tid / 32, lane = tid % 32;
    const int warp_m = warp / Cfg::kWarpsN, warp_n = warp % Cfg::kWarpsN;
    row_base = warp_m * Cfg::WM + (lane / Cfg::kLanesN) * Cfg::kPiece;
    col_base = warp_n * Cfg::WN + (lane % Cfg::kLanesN) * Cfg::kPiece;
#pragma unroll
    for (int i = 0; i < Cfg::TM; ++i)
#pragma unroll
      for (int j = 0; j < Cfg::TN; ++j) acc[i][j] = 0.0f;
  }

  // A layout with m contiguous: one float4 holds four rows of one k. With k contiguous,
  // one float4 holds four steps of k of one row, so fragments come four k at a time.
  static constexpr bool kAByChunk = LayoutA::kRowStride != 1;
  static constexpr bool kBByChunk = LayoutB::kColStride != 1;
  static_assert(kAByChunk ? LayoutA::kColStride == 1 : true, "one dimension of the A tile is contiguous");
  static_assert(kBByChunk ? LayoutB::kRowStride == 1 : true, "one dimension of the B tile is contiguous");

  static __device__ __forceinline__ void unpack(float4 v, float* out, int stride) {
    out[0 * stride] = v.x;
    out[1 * stride] = v.y;
    out[2 * stride] = v.z;
    out[3 * stride] = v.w;
  }

  // a[i] = op(A)(row i of this thread, k) (m contiguous)
  __device__ __forceinline__ void load_a_step(const float* sA, int k, float (&a)[Cfg::TM]) const {
#pragma unroll
    for (int p = 0; p < Cfg::kPiecesM; ++p)
      unpack(*reinterpret_cast<const float4*>(sA + LayoutA::offset(row_base + p * Cfg::kPieceStrideM, k)),
             &a[p * 4], 1);
  }
  // a[q][i] = op(A)(row i, k0 + q), q in 0..3 (k contiguous)
  __device__ __forceinline__ void load_a_chunk(const float* sA, int k0, float (&a)[Cfg::kPiece][Cfg::TM]) const {
#pragma unroll
    for (int p = 0; p < Cfg::kPiecesM; ++p)
#pragma unroll
      for (int i = 0; i < Cfg::kPiece; ++i)
        unpack(*reinterpret_cast<const float4*>(sA + LayoutA::offset(row_base + p * Cfg::kPieceStrideM + i, k0)),
               &a[0][p * 4 + i], Cfg::TM);
  }
  // b[j] = op(B)(k, column j of this thread) (n contiguous)
  __device__ __forceinline__ void load_b_step(const float* sB, int k, float (&b)[Cfg::TN]) const {
#pragma unroll
    for (int p = 0; p < Cfg::kPiecesN; ++p)
      unpack(*reinterpret_cast<const float4*>(sB + LayoutB::offset(k, col_base + p * Cfg::kPieceStrideN)),
             &b[p * 4], 1);
  }
  // b[q][j] = op(B)(k0 + q, column j), q in 0..3 (k contiguous)
  __device__ __forceinline__ void load_b_chunk(const float* sB, int k0, float (&b)[Cfg::kPiece][Cfg::TN]) const {
#pragma unroll
    for (int p = 0; p < Cfg::kPiecesN; ++p)
#pragma unroll
      for (int j = 0; j < Cfg::kPiece; ++j)
        unpack(*reinterpret_cast<const float4*>(sB + LayoutB::offset(k0, col_base + p * Cfg::kPieceStrideN + j)),
               &b[0][p * 4 + j], Cfg::TN);
  }

  // All BK steps of one stage: outer products of fragments held in registers. Fragments
  // of a contiguous-k operand are read four steps at a time; the others one step at a
  // time, which keeps the live registers near TM * TN + 4 * max(TM, TN).
  __device__ __forceinline__ void compute(const float* sA, const float* sB) {
#pragma unroll
    for (int k0 = 0; k0 < Cfg::BK; k0 += Cfg::kPiece) {
      float a4[kAByChunk ? Cfg::kPiece : 1][Cfg::TM];
      float b4[kBByChunk ? Cfg::kPiece : 1][Cfg::TN];
      if constexpr (kAByChunk) load_a_chunk(sA, k0, a4);
      if constexpr (kBByChunk) load_b_chunk(sB, k0, b4);
#pragma unroll
      for (int q = 0; q < Cfg::kPiece; ++q) {
        float a[Cfg::TM], b[Cfg::TN];
        if constexpr (kAByChunk) {
#pragma unroll
          for (int i = 0; i < Cfg::TM; ++i) a[i] = a4[q][i];
        } else {
          load_a_step(sA, k0 + q, a);
        }
        if constexpr (kBByChunk) {
#pragma unroll
          for (int j = 0; j < Cfg::TN; ++j) b[j] = b4[q][j];
        } else {
          load_b_step(sB, k0 + q, b);
        }
#pragma unroll
        for (int i = 0; i < Cfg::TM; ++i)
#pragma unroll
          for (int j = 0; j < Cfg::TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
    }
  }

  // alpha * acc + beta * C for this thread's elements, 16-byte stores where possible.
  __device__ __forceinline__ void store(const GemmArgs& g, int block_row, int block_col, bool vec_c) const {
#pragma unroll
    for (int pm = 0; pm < Cfg::kPiecesM; ++pm)
#pragma unroll
      for (int i = 0; i < Cfg::kPiece; ++i) {
        const int r = block_row + row_base + pm * Cfg::kPieceStrideM + i;
#pragma unroll
        for (int pn = 0; pn < Cfg::kPiecesN; ++pn) {
          const int c = block_col + col_base + pn * Cfg::kPieceStrideN;
          const float* v = &acc[pm * 4 + i][pn * 4];
          store_c4(g, r, c, make_float4(v[0], v[1], v[2], v[3]), vec_c);
        }
      }
  }
};

// Blocks launched in groups of kGroupM block rows: consecutive blocks share the same
// columns of B and nearby rows of A, so both stay in L2 while the group runs.
template <int kGroupM>
__device__ __forceinline__ void grouped_block(int tiles_m, int tiles_n, int& block_m, int& block_n) {
  const int pid = blockIdx.x;
  const int per_group = kGroupM * tiles_n;
  const int first_m = (pid / per_group) * kGroupM;
  const int rows_in_group = min(tiles_m - first_m, kGroupM);
  block_m = first_m + (pid % per_group) % rows_in_group;
  block_n = (pid % per_group) / rows_in_group;
}

}  // namespace gemmlab::cuda
