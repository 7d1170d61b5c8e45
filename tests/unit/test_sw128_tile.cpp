// The index arithmetic of the producer's cp.async loads (src/cuda/gemm/sw128_tile.hpp), run
// on the host: the swizzle is the 128-byte pattern TMA and wgmma use (address bits 4-6
// XOR bits 7-9), a bijection on the tile; each thread map copies every word of a tile once,
// every warp-wide step writes 32 different banks and reads whole 32-byte sectors.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "cuda/hopper/sw128_tile.hpp"

namespace gemmlab::cuda::sw128 {
namespace {

// The swizzle as the hardware defines it on a byte address inside a 1024-byte-aligned tile.
int address_swizzle(int address) { return address ^ (((address >> 7) & 7) << 4); }

TEST(Sw128Tile, OffsetIsTheHardwareSwizzleAndABijection) {
  for (int rows : {8, 128, 256}) {
    std::vector<int> seen(static_cast<std::size_t>(rows) * kRowBytes, 0);
    for (int row = 0; row < rows; ++row)
      for (int byte = 0; byte < kRowBytes; ++byte) {
        const int at = offset(row, byte);
        ASSERT_EQ(at, address_swizzle(row * kRowBytes + byte)) << "row " << row << " byte " << byte;
        ASSERT_GE(at, 0);
        ASSERT_LT(at, rows * kRowBytes);
        ++seen[static_cast<std::size_t>(at)];
      }
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; })) << rows << " rows";
  }
  // A word keeps its 4 bytes together and 4-byte aligned.
  EXPECT_EQ(offset(3, 20) + 1, offset(3, 21));
  EXPECT_EQ(offset(5, 36) % 4, 0);
}

enum class Source { KContiguous, RowsContiguous };

template <int Rows>
Word word_of(Source s, int t, int i) {
  return s == Source::KContiguous ? k_contiguous<Rows>(t, i) : rows_contiguous<Rows>(t, i);
}

// Element offset in the source, for a leading dimension far from any row length (a multiple
// of 8: rows start on 32-byte sectors).
template <int Rows>
long long source_offset(Source s, Word w) {
  constexpr long long kLd = 8 * 1251;
  return s == Source::KContiguous ? w.row * kLd + w.k : static_cast<long long>(w.k) * kLd + w.row;
}

template <int Rows>
void check_map(Source source) {
  SCOPED_TRACE(::testing::Message() << Rows << " rows, " << (source == Source::KContiguous ? "K" : "rows")
                                    << " contiguous");
  constexpr int kSteps = kWordsPerThread<Rows>;
  static_assert(kSteps * kLoaderThreads == Rows * kWordsPerRow);
  std::vector<int> copied(static_cast<std::size_t>(Rows) * kWordsPerRow, 0);
  for (int t = 0; t < kLoaderThreads; ++t)
    for (int i = 0; i < kSteps; ++i) {
      const Word w = word_of<Rows>(source, t, i);
      ASSERT_GE(w.row, 0);
      ASSERT_LT(w.row, Rows);
      ASSERT_GE(w.k, 0);
      ASSERT_LT(w.k, kWordsPerRow);
      ++copied[static_cast<std::size_t>(w.row) * kWordsPerRow + w.k];
      if (source == Source::KContiguous) {  // interior tiles: a fixed source stride per step
        const Word first = k_contiguous<Rows>(t, 0), second = k_contiguous<Rows>(t, 1);
        ASSERT_EQ(w.row, first.row + i * (second.row - first.row)) << "thread " << t << " step " << i;
        ASSERT_EQ(w.k, first.k) << "thread " << t << " step " << i;
      }
      if (source == Source::RowsContiguous) {  // the interior tiles' form of the same map
        ASSERT_EQ(rows_contiguous_offset(t, i / kGroups<Rows>, i % kGroups<Rows>), offset(w.row, 4 * w.k))
            << "thread " << t << " step " << i;
      }
    }
  EXPECT_TRUE(std::all_of(copied.begin(), copied.end(), [](int c) { return c == 1; })) << "a word copied twice or never";

  for (int warp = 0; warp < kLoaderThreads / kWarp; ++warp)
    for (int i = 0; i < kSteps; ++i) {
      std::set<int> banks;
      std::set<long long> sectors;  // 32-byte sectors = runs of 8 floats
      for (int lane = 0; lane < kWarp; ++lane) {
        const Word w = word_of<Rows>(source, warp * kWarp + lane, i);
        banks.insert(offset(w.row, 4 * w.k) / 4 % 32);
        sectors.insert(source_offset<Rows>(source, w) / 8);
      }
      ASSERT_EQ(banks.size(), 32u) << "warp " << warp << " step " << i << ": a bank conflict";
      // 32 words in 4 sectors: every sector read is used whole.
      ASSERT_EQ(sectors.size(), 4u) << "warp " << warp << " step " << i;
    }
}

TEST(Sw128Tile, ProducerLoadsCopyEveryWordOnceWithoutConflicts) {
  check_map<128>(Source::KContiguous);
  check_map<256>(Source::KContiguous);
  check_map<128>(Source::RowsContiguous);
  check_map<256>(Source::RowsContiguous);
}

}  // namespace
}  // namespace gemmlab::cuda::sw128
