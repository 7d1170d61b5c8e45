// Block -> warp -> thread tiling of C, shared by the warptile and pipelined rungs.
//
// A block of kThreads computes a BM x BN tile of C. Its warps split that into WM x WN
// warp tiles; the 32 lanes of a warp form an 8 x 4 grid over the warp tile. Each thread
// owns TM x TN elements, taken as 4 x 4 pieces spaced 32 rows and 16 columns apart, so
// that the lanes of a quarter warp read neighbouring 16-byte words of shared memory
// (no bank conflicts) and every fragment read is one float4.
#pragma once

#include <cuda_runtime.h>

#include "cuda/tiles/block_order.cuh"
#include "cuda/tiles/common.cuh"

namespace gemmlab::cuda {

// The order of a k step's TM x TN FFMAs. An FFMA reads three registers; the register file
// has two banks (register number mod 2) with one read port each, and a small operand-reuse
// cache per operand slot serves a source the previous FFMA marked `.reuse`. An FFMA whose
// sources all come from the file needs a second cycle. ptxas schedules FFMAs itself (in
// sweeps of at most 8 that share one operand), but the source order decides how often a
// sweep starts with nothing cached. Extra read cycles per 2048 FFMAs in the 256 x 128 NN
// loop, counted by scripts/ffma-banks.py on the SASS:
//  - Rows: a row of C after another: 420;
//  - Serpentine: 2 x 2 blocks (a0b0 a1b0 a1b1 a0b1), pairs of b outermost, the pairs of a
//    swept down and up in turn, so that each block starts with an operand of the last: 209
//    (222 TN, 225 NT). The same blocks always swept down measured +2-4 % over Rows (282).
enum class OuterProduct { Rows, Serpentine };

// MinBlocks_: resident blocks per SM asked of the compiler (__launch_bounds__), which caps
// registers at 65536 / (MinBlocks_ * threads).
template <int BM_, int BN_, int BK_, int WM_, int WN_, int Stages_ = 1, int MinBlocks_ = 1,
          OuterProduct Order_ = OuterProduct::Serpentine>
struct WarpTileConfig {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, kStages = Stages_;
  static constexpr int kMinBlocks = MinBlocks_;
  static constexpr OuterProduct kOrder = Order_;
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
// LayoutA maps (m, k) and LayoutB (k, n) to shared offsets; both tiles are k-major, so a
// thread's fragment for one k is TM (or TN) contiguous words, read as float4 pieces.
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

  static_assert(LayoutA::kRowStride == 1, "the A tile is k-major in shared memory: (BK, BM)");
  static_assert(LayoutB::kColStride == 1, "the B tile is k-major in shared memory: (BK, BN)");

  // a[i] = op(A)(row i of this thread, k): one float4 per piece of four rows.
  __device__ __forceinline__ void load_a(const float* sA, int k, float (&a)[Cfg::TM]) const {
#pragma unroll
    for (int p = 0; p < Cfg::kPiecesM; ++p)
      *reinterpret_cast<float4*>(&a[p * 4]) =
          *reinterpret_cast<const float4*>(sA + LayoutA::offset(row_base + p * Cfg::kPieceStrideM, k));
  }
  // b[j] = op(B)(k, column j of this thread)
  __device__ __forceinline__ void load_b(const float* sB, int k, float (&b)[Cfg::TN]) const {
#pragma unroll
    for (int p = 0; p < Cfg::kPiecesN; ++p)
      *reinterpret_cast<float4*>(&b[p * 4]) =
          *reinterpret_cast<const float4*>(sB + LayoutB::offset(k, col_base + p * Cfg::kPieceStrideN));
  }

  // One k step's operands: a thread's column of op(A) and row of op(B).
  struct Fragments {
    float a[Cfg::TM];  // (TM) of op(A)(:, k)
    float b[Cfg::TN];  // (TN) of op(B)(k, :)
  };
  __device__ __forceinline__ void load(const float* sA, const float* sB, int k, Fragments& f) const {
    load_a(sA, k, f.a);
    load_b(sB, k, f.b);
  }
  // acc += a b^T: the TM x TN outer product of one k step, in Cfg::kOrder.
  __device__ __forceinline__ void fma(const Fragments& f) {
    if constexpr (Cfg::kOrder == OuterProduct::Rows) {
#pragma unroll
      for (int i = 0; i < Cfg::TM; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::TN; ++j) acc[i][j] = fmaf(f.a[i], f.b[j], acc[i][j]);
    } else {
      static_assert(Cfg::TM % 2 == 0 && Cfg::TN % 2 == 0, "the outer product goes in 2 x 2 blocks");
#pragma unroll
      for (int j = 0; j < Cfg::TN; j += 2)
#pragma unroll
        for (int step = 0; step < Cfg::TM; step += 2) {
          const int i = (j / 2) % 2 == 0 ? step : Cfg::TM - 2 - step;  // down, then up
          acc[i][j] = fmaf(f.a[i], f.b[j], acc[i][j]);
          acc[i + 1][j] = fmaf(f.a[i + 1], f.b[j], acc[i + 1][j]);
          acc[i + 1][j + 1] = fmaf(f.a[i + 1], f.b[j + 1], acc[i + 1][j + 1]);
          acc[i][j + 1] = fmaf(f.a[i], f.b[j + 1], acc[i][j + 1]);
        }
    }
  }

  // All BK steps of one stage: outer products of fragments held in registers.
  __device__ __forceinline__ void compute(const float* sA, const float* sB) {
#pragma unroll
    for (int k = 0; k < Cfg::BK; ++k) {
      Fragments f;
      load(sA, sB, k, f);
      fma(f);
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

}  // namespace gemmlab::cuda
