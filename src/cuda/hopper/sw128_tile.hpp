// The 128-byte-swizzled tile wgmma reads, and which word each thread of a producer
// warpgroup copies when it fills one with cp.async (wgmma_ws.cuh, "operands the producer
// loads itself"). Plain C++, so that the host tests (tests/unit/test_sw128_tile.cpp) check
// the kernel's own index arithmetic: every word copied once, no shared-memory bank
// conflict, whole 32-byte sectors read.
#pragma once

#if defined(__CUDACC__)
#define GEMMLAB_HOST_DEVICE __host__ __device__
#else
#define GEMMLAB_HOST_DEVICE
#endif

namespace gemmlab::cuda::sw128 {

inline constexpr int kRowBytes = 128;  // one tile row: 128 bytes of K
inline constexpr int kChunkBytes = 16;
inline constexpr int kAtomRows = 8;  // the swizzle repeats every 8 rows (1024 bytes)
inline constexpr int kWordsPerRow = kRowBytes / 4;
inline constexpr int kLoaderThreads = 128;  // one warpgroup
inline constexpr int kWarp = 32;

// Byte `byte` of row `row`, in a tile that starts on a 1024-byte boundary: 16-byte chunk c
// of row r sits at chunk c ^ (r % 8) (the layout TMA writes with CU_TENSOR_MAP_SWIZZLE_128B
// and wgmma reads with its 128-byte swizzle mode).
GEMMLAB_HOST_DEVICE constexpr int offset(int row, int byte) {
  const int chunk = (byte / kChunkBytes) ^ (row % kAtomRows);
  return row * kRowBytes + chunk * kChunkBytes + byte % kChunkBytes;
}

// A word of the tile: its row (M or N) and its place along K (0..31).
struct Word {
  int row, k;
};

// Words per thread when kLoaderThreads copy a tile of `Rows` rows.
template <int Rows>
inline constexpr int kWordsPerThread = Rows * kWordsPerRow / kLoaderThreads;

// Step i of thread t, for a source whose K is contiguous (element (r, k) at r * ld + k):
// a warp copies one whole row per step, lane = k. Reads: 128 contiguous bytes; writes: the
// 32 words of one row, which the swizzle only permutes by chunk: 32 banks.
template <int Rows>
GEMMLAB_HOST_DEVICE constexpr Word k_contiguous(int t, int i) {
  return {t / kWarp + (kLoaderThreads / kWarp) * i, t % kWarp};
}

// For a source whose rows are contiguous (element (r, k) at k * ld + r: K strided, the tile
// is transposed on the way), a warp copies 8 rows by 4 k per step. Reads: four runs of 8
// floats, one 32-byte sector each; writes: the 4 k of a chunk times 8 rows whose swizzle
// sends that chunk to 8 different chunks: 32 banks. (A warp along 32 rows would read one
// 128-byte run but write 4 words to each of 8 banks.)
// Thread t's words are (first.row + kGroupRows * group, first.k + kQuadK * quad): a fixed
// source stride and a fixed shared-memory stride per group, which the kernel's loop over
// interior tiles uses as immediate offsets.
inline constexpr int kGroupRows = kAtomRows * kLoaderThreads / kWarp;  // 32
inline constexpr int kQuadK = kChunkBytes / 4;                         // 4
template <int Rows>
inline constexpr int kGroups = Rows / kGroupRows;
GEMMLAB_HOST_DEVICE constexpr Word rows_contiguous_first(int t) {
  return {(t / kWarp) * kAtomRows + t % kAtomRows, (t % kWarp) / kAtomRows};
}
// Step i = quad * kGroups + group.
template <int Rows>
GEMMLAB_HOST_DEVICE constexpr Word rows_contiguous(int t, int i) {
  const Word first = rows_contiguous_first(t);
  return {first.row + kGroupRows * (i % kGroups<Rows>), first.k + kQuadK * (i / kGroups<Rows>)};
}
// Where word (quad, group) of thread t goes: offset(row, 4 k) with the swizzle worked out
// (the row's place in its atom is the same in every group).
GEMMLAB_HOST_DEVICE constexpr int rows_contiguous_offset(int t, int quad, int group) {
  const Word first = rows_contiguous_first(t);
  return (first.row + kGroupRows * group) * kRowBytes + (quad ^ (first.row % kAtomRows)) * kChunkBytes + 4 * first.k;
}

}  // namespace gemmlab::cuda::sw128
