// The pieces of rung 11 (11_mma_sync.cu) below the kernel: its tile configurations, the
// stored tiles in shared memory and their cp.async loads, one warp's ldmatrix + mma.sync
// tile, and split-K's end of a range. Device code for that rung's translation unit.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "cuda/arch/cp_async.cuh"
#include "cuda/arch/ldmatrix.cuh"
#include "cuda/arch/mma.cuh"
#include "cuda/arch/target.cuh"
#include "cuda/tiles/split_k.cuh"

namespace gemmlab::cuda::mma_sync {

// Every tile size of one configuration of the rung; the block shape and shared memory
// follow from it. MinBlocks_: resident blocks per SM asked of the compiler (__launch_bounds__).
template <int BM_, int BN_, int BK_, int WM_, int WN_, int Stages_, int MinBlocks_>
struct MmaSyncConfig {
  static constexpr int BM = BM_, BN = BN_, BK = BK_;  // block tile
  static constexpr int WM = WM_, WN = WN_;            // warp tile
  static constexpr int kStages = Stages_;             // tiles in shared memory: kStages - 1 in flight
  static constexpr int kMinBlocks = MinBlocks_;
  static constexpr int kGroupM = 8;                   // block rows per L2 group

  static constexpr int kMmaM = 16, kMmaN = 8, kMmaK = 16;  // one mma.m16n8k16
  static constexpr int MI = WM / kMmaM;                    // mma tiles of a warp tile along m
  static constexpr int NI = WN / kMmaN;                    // ... along n
  static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
  static constexpr int kThreads = kWarpsM * kWarpsN * 32;
  static constexpr int kTileFloats = BM * BN;  // a block's accumulators (split-K's partial)
  // Split-K's last block reads this many ranges' partials at once: 64 floats a thread.
  static constexpr int kRangesInFlight = MI * NI * 4 >= 64 ? 1 : 64 / (MI * NI * 4);

  static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must tile the block tile");
  static_assert(WM % kMmaM == 0 && WN % (2 * kMmaN) == 0,
                "a warp tile is whole m16 tiles and pairs of n8 tiles (one ldmatrix.x4 loads two)");
  static_assert(BK % kMmaK == 0, "BK must be whole k16 steps");
  static_assert(kStages >= 2, "a pipeline needs at least two stages");
};

using Bits = std::uint16_t;              // a 2-byte element, as stored
constexpr int kChunk = 16 / sizeof(Bits);  // elements per 16-byte copy
// 16 bytes of padding per shared row: row strides become an odd number of 16-byte units,
// so the 8 rows of an 8x8 ldmatrix operand land in 8 different bank groups.
constexpr int kPad = kChunk;

// One stored tile in shared memory: Outer lines of Inner contiguous elements (+ padding).
template <int Outer, int Inner>
struct SmemTile {
  static constexpr int kOuter = Outer, kInner = Inner;
  static constexpr int kStride = Inner + kPad;  // elements between consecutive lines
  static constexpr int kElems = Outer * kStride;
  static_assert(Inner % kChunk == 0, "lines are whole 16-byte chunks");
  static_assert(kStride * sizeof(Bits) % 16 == 0 && kElems * sizeof(Bits) % 16 == 0,
                "lines and stages stay 16-byte aligned for cp.async and ldmatrix");
};

// The stored orientation of each operand's tile: A^T and B are m- and n-contiguous
// (k lines), A and B^T are k-contiguous (m or n lines).
template <class Cfg, bool TransA, bool TransB>
struct MmaLayout {
  using A = std::conditional_t<TransA, SmemTile<Cfg::BK, Cfg::BM>, SmemTile<Cfg::BM, Cfg::BK>>;
  using B = std::conditional_t<TransB, SmemTile<Cfg::BN, Cfg::BK>, SmemTile<Cfg::BK, Cfg::BN>>;
  static constexpr int kSmemBytes = Cfg::kStages * (A::kElems + B::kElems) * static_cast<int>(sizeof(Bits));
};

// Copies one stored tile into shared memory, 16-byte chunks along the contiguous
// dimension, consecutive threads on consecutive chunks (coalesced). `origin` is the tile's
// first element, always inside the matrix; `outer_left` and `inner_left` how much of the
// tile is. Elements outside read as zero, so ragged tiles add nothing to C (and the NaN a
// matrix's padding may hold never enters a product).
// Async: cp.async with a partial source size (its zero-fill), rows 16-byte aligned.
// Otherwise: guarded 2-byte loads, packed and stored as one 16-byte word.
template <class Tile, int Threads, bool Async>
__device__ __forceinline__ void load_tile(const Bits* origin, long long ld, int outer_left, int inner_left, Bits* smem,
                                          int tid) {
  constexpr int kChunksPerLine = Tile::kInner / kChunk;
  constexpr int kChunks = Tile::kOuter * kChunksPerLine;
  static_assert(kChunks % Threads == 0, "every thread copies the same number of chunks");
  const auto chunk = [&](int i, Bits*& dst, const Bits*& src) {
    const int e = tid + i * Threads;
    const int outer = e / kChunksPerLine, inner = (e % kChunksPerLine) * kChunk;
    dst = smem + outer * Tile::kStride + inner;
    const int valid = outer < outer_left ? min(max(inner_left - inner, 0), kChunk) : 0;
    src = valid > 0 ? origin + outer * ld + inner : origin;
    return valid;
  };
  if constexpr (Async) {
#pragma unroll
    for (int i = 0; i < kChunks / Threads; ++i) {
      Bits* dst;
      const Bits* src;
      const int valid = chunk(i, dst, src);
      arch::cp_async_16(dst, src, valid * static_cast<int>(sizeof(Bits)));
    }
  } else {
    // One chunk at a time: the accumulators leave no registers for more in flight.
#pragma unroll 1
    for (int i = 0; i < kChunks / Threads; ++i) {
      Bits* dst;
      const Bits* src;
      const int valid = chunk(i, dst, src);
      unsigned words[kChunk / 2] = {};
#pragma unroll
      for (int j = 0; j < kChunk; ++j)
        if (j < valid) words[j / 2] |= static_cast<unsigned>(__ldg(reinterpret_cast<const unsigned short*>(src) + j))
                                       << (16 * (j % 2));
      *reinterpret_cast<uint4*>(dst) = make_uint4(words[0], words[1], words[2], words[3]);
    }
  }
}

// One warp's share of the block tile: a WM x WN tile of C as MI x NI mma.m16n8k16
// accumulators, fed by ldmatrix from the stored tiles.
template <class Cfg, class T, bool TransA, bool TransB>
struct WarpMma {
  using L = MmaLayout<Cfg, TransA, TransB>;
  float acc[Cfg::MI][Cfg::NI][4];  // (MI, NI) accumulators of 16 x 8
  int a_lane, b_lane;              // this lane's ldmatrix row, in elements from the stage start

  // Lane l addresses row l % 8 of 8x8 matrix l / 8. For A the four matrices are the
  // (m, k) quadrants (0-7, 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15), as a[0..3] want
  // them; for B, (k 0-7, n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15): the
  // b0, b1 of two neighbouring n8 tiles. Stored transposed to what the fragment wants,
  // the matrix is read with .trans.
  __device__ __forceinline__ void init(int warp_m, int warp_n, int lane) {
    const int row8 = lane % 8, second = (lane / 8) % 2, upper = lane / 16;
    const int m0 = warp_m * Cfg::WM, n0 = warp_n * Cfg::WN;
    a_lane = TransA ? (upper * 8 + row8) * L::A::kStride + m0 + second * 8      // (k, m) stored
                    : (m0 + second * 8 + row8) * L::A::kStride + upper * 8;     // (m, k) stored
    b_lane = TransB ? (n0 + upper * 8 + row8) * L::B::kStride + second * 8      // (n, k) stored
                    : (second * 8 + row8) * L::B::kStride + n0 + upper * 8;     // (k, n) stored
#pragma unroll
    for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
      for (int ni = 0; ni < Cfg::NI; ++ni)
#pragma unroll
        for (int r = 0; r < 4; ++r) acc[mi][ni][r] = 0.0f;
  }

  __device__ __forceinline__ void compute(const Bits* sA, const Bits* sB) {
#pragma unroll
    for (int kk = 0; kk < Cfg::BK / Cfg::kMmaK; ++kk) {
      unsigned a[Cfg::MI][4];      // (MI) A fragments, 16 x 16
      unsigned b[Cfg::NI / 2][4];  // (NI / 2) pairs of B fragments, 16 x 8 each
#pragma unroll
      for (int mi = 0; mi < Cfg::MI; ++mi) {
        // Step to m tile mi and k step kk along the stored orientation.
        const int step = TransA ? kk * Cfg::kMmaK * L::A::kStride + mi * Cfg::kMmaM
                                : mi * Cfg::kMmaM * L::A::kStride + kk * Cfg::kMmaK;
        if constexpr (TransA) arch::ldmatrix_x4_trans(a[mi], sA + a_lane + step);
        else arch::ldmatrix_x4(a[mi], sA + a_lane + step);
      }
#pragma unroll
      for (int nj = 0; nj < Cfg::NI / 2; ++nj) {
        const int step = TransB ? nj * 2 * Cfg::kMmaN * L::B::kStride + kk * Cfg::kMmaK
                                : kk * Cfg::kMmaK * L::B::kStride + nj * 2 * Cfg::kMmaN;
        if constexpr (TransB) arch::ldmatrix_x4(b[nj], sB + b_lane + step);
        else arch::ldmatrix_x4_trans(b[nj], sB + b_lane + step);
      }
#pragma unroll
      for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < Cfg::NI; ++ni)
          arch::MmaM16N8K16F32<T>::run(acc[mi][ni], a[mi], b[ni / 2][(ni % 2) * 2], b[ni / 2][(ni % 2) * 2 + 1]);
    }
  }
};

#if GEMMLAB_CODE_SM80  // (only the kernel's sm_80 body stores)
// Split-K's end of a range: this block's partial sums, element e of thread t at
// e * kThreads + t of its (tile, range) slot (coalesced), rows below C neither written nor
// read. Returns whether it arrived last; then `acc` holds every range's partial added in
// range order. `flag`: an int of shared memory no warp still reads.
template <class Cfg>
__device__ __forceinline__ bool add_ranges(float (&acc)[Cfg::MI][Cfg::NI][4], const SplitK& split_k, int warp_row,
                                           int m, int tid, int* flag) {
  const int splits = static_cast<int>(gridDim.y);
  float* const tile_partials = split_k.partials + static_cast<long long>(blockIdx.x) * splits * Cfg::kTileFloats;
  const auto at = [&](int range, int mi, int ni, int r) {
    return tile_partials + range * Cfg::kTileFloats + ((mi * Cfg::NI + ni) * 4 + r) * Cfg::kThreads + tid;
  };
  const auto live = [&](int mi, int r) { return warp_row + mi * Cfg::kMmaM + (r / 2) * 8 < m; };
#pragma unroll
  for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < Cfg::NI; ++ni)
#pragma unroll
      for (int r = 0; r < 4; ++r)
        if (live(mi, r)) __stcg(at(static_cast<int>(blockIdx.y), mi, ni, r), acc[mi][ni][r]);
  if (!split_k_arrive(split_k.arrived + blockIdx.x, splits, flag)) return false;
#pragma unroll
  for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < Cfg::NI; ++ni)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[mi][ni][r] = 0.0f;
  // Every read is an L2 round trip: kRangesInFlight ranges' worth go out at once.
  int range = 0;
  if constexpr (Cfg::kRangesInFlight > 1) {
    for (; range + Cfg::kRangesInFlight <= splits; range += Cfg::kRangesInFlight) {
      float part[Cfg::kRangesInFlight][Cfg::MI][Cfg::NI][4];
#pragma unroll
      for (int u = 0; u < Cfg::kRangesInFlight; ++u)
#pragma unroll
        for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
          for (int ni = 0; ni < Cfg::NI; ++ni)
#pragma unroll
            for (int r = 0; r < 4; ++r) part[u][mi][ni][r] = live(mi, r) ? __ldcg(at(range + u, mi, ni, r)) : 0.0f;
#pragma unroll
      for (int u = 0; u < Cfg::kRangesInFlight; ++u)
#pragma unroll
        for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
          for (int ni = 0; ni < Cfg::NI; ++ni)
#pragma unroll
            for (int r = 0; r < 4; ++r) acc[mi][ni][r] += part[u][mi][ni][r];
    }
  }
  for (; range < splits; ++range)
#pragma unroll
    for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
      for (int ni = 0; ni < Cfg::NI; ++ni)
#pragma unroll
        for (int r = 0; r < 4; ++r)
          if (live(mi, r)) acc[mi][ni][r] += __ldcg(at(range, mi, ni, r));
  return true;
}
#endif

}  // namespace gemmlab::cuda::mma_sync
