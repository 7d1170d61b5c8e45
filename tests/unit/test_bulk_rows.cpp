// The bulk-copied epilogue's index arithmetic (src/cuda/gemm/bulk_rows.hpp), run on the
// host: a warp's staging slice holds every column of its rows once, each row's interior
// contiguous and 16-byte aligned at both ends of its copy; the copy and the lanes' edge
// stores together write every column of a row segment once, at its place in C, for every
// misalignment; a segment that straddles C's last column is left to the register stores;
// and the staging stores cost two wavefronts each, whatever C's pitch.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "cuda/hopper/bulk_rows.hpp"

namespace gemmlab::cuda::bulk_rows {
namespace {

constexpr int kWarp = 32;

TEST(BulkRows, EveryColumnHasOneSlotAndInteriorsAreAligned) {
  // Rows of every misalignment side by side, in every mix a pitch can make (s of row r is
  // s0 + r * pitch mod 4) and with all rows alike.
  for (int pitch = 0; pitch < kAlign; ++pitch)
    for (int s0 = 0; s0 < kAlign; ++s0) {
      SCOPED_TRACE(::testing::Message() << "pitch " << pitch << " mod 4, s0 " << s0);
      std::vector<int> seen(kSliceFloats, 0);
      for (int r = 0; r < kRows; ++r) {
        const int s = (s0 + r * pitch) % kAlign;
        for (int c = 0; c < kCols; ++c) {
          const int at = slot(r, s, c);
          ASSERT_GE(at, 0);
          ASSERT_LT(at, kSliceFloats);
          ++seen[static_cast<std::size_t>(at)];
          if (interior(s, c)) EXPECT_EQ(at, interior_start(r) + c - head(s)) << "r " << r << " c " << c;
          else EXPECT_EQ(edge_column(s, at - kEdgeBase - kAlign * r), c) << "r " << r << " c " << c;
        }
        EXPECT_EQ(interior_start(r) * 4 % 16, 0) << "row " << r;
        EXPECT_LE(interior_start(r) + kInterior, kEdgeBase) << "row " << r;
      }
      EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
    }
}

// One row segment of C staged and written as the kernel does: slot() on the way in, one
// bulk copy of the interior and four edge stores on the way out, into a simulated C.
TEST(BulkRows, CopyAndEdgeStoresWriteEachColumnOnceInPlace) {
  constexpr unsigned long long kBase = 1ull << 20;  // 16-byte aligned
  for (int word = 0; word < 2 * kAlign; ++word) {
    const unsigned long long start = kBase + 4ull * static_cast<unsigned>(word);
    const int s = word % kAlign;
    SCOPED_TRACE(::testing::Message() << "segment " << word << " floats past 16 bytes");
    for (int r : {0, 3, kRows - 1}) {
      std::vector<int> slice(kSliceFloats, -1);
      for (int c = 0; c < kCols; ++c) slice[static_cast<std::size_t>(slot(r, s, c))] = c;  // column c's value is c
      std::map<unsigned long long, std::vector<int>> written;  // address -> columns written there
      // The copy: the interior's slots to interior_address(start), both ends 16-byte aligned.
      const unsigned long long dst = interior_address(start);
      EXPECT_EQ(dst, start + 4ull * static_cast<unsigned>(head(s)));
      EXPECT_EQ(dst % 16, 0u);
      EXPECT_EQ(interior_start(r) * 4 % 16, 0);
      EXPECT_EQ(kInteriorBytes % 16, 0);
      for (int k = 0; k < kInterior; ++k)
        written[dst + 4ull * static_cast<unsigned>(k)].push_back(slice[static_cast<std::size_t>(interior_start(r) + k)]);
      // The edges: float e of the row's four, from the 16-byte boundary at or before start.
      for (int e = 0; e < kAlign; ++e)
        written[aligned_below(start) + static_cast<unsigned>(edge_offset(s, e))].push_back(
            slice[static_cast<std::size_t>(kEdgeBase + kAlign * r + e)]);
      ASSERT_EQ(written.size(), static_cast<std::size_t>(kCols));
      for (int c = 0; c < kCols; ++c) {
        const auto at = written.find(start + 4ull * static_cast<unsigned>(c));
        ASSERT_NE(at, written.end()) << "column " << c << " not written";
        EXPECT_EQ(at->second, std::vector<int>{c}) << "column " << c;
      }
    }
  }
}

// A tile's 256 columns from col0 against C's n columns: segments inside C are staged whole,
// the one that straddles n goes out from registers up to n, nothing lands at or past n.
TEST(BulkRows, SegmentsThatStraddleTheLastColumnGoFromRegisters) {
  constexpr int kTile = 256;
  for (int col0 : {0, 256, 3840})
    for (int n = col0 + 1; n <= col0 + kTile + kCols; ++n) {
      std::vector<int> stores(kTile, 0);
      for (int q = 0; q < kTile / kCols; ++q) {
        const int col = col0 + q * kCols;
        if (staged(col, n)) {
          for (int c = 0; c < kCols; ++c) ++stores[static_cast<std::size_t>(q * kCols + c)];
        } else {
          for (int c = 0; c < kCols; ++c)
            if (col + c < n) ++stores[static_cast<std::size_t>(q * kCols + c)];  // store_pair's test
        }
      }
      for (int c = 0; c < kTile; ++c)
        ASSERT_EQ(stores[static_cast<std::size_t>(c)], col0 + c < n ? 1 : 0) << "col0 " << col0 << " n " << n << " column " << c;
    }
}

// Shared-memory wavefronts of one warp-wide store: the most distinct 4-byte words any bank
// receives (a word written twice is one access).
int wavefronts(const std::vector<int>& words) {
  std::map<int, std::set<int>> banks;
  for (int w : words) banks[w % kWarp].insert(w);
  int most = 0;
  for (const auto& [bank, distinct] : banks) most = std::max(most, static_cast<int>(distinct.size()));
  return most;
}

// The staging stores as the kernel issues them: for each accumulator group jj (8 columns)
// and i, lane l writes row l / 4, column 8 jj + 2 (l % 4) + i. Two wavefronts each, for every
// pitch (32 lanes write words of one parity where the rows' misalignments share theirs);
// the lanes' edge reads one.
TEST(BulkRows, StagingStoresTakeTwoWavefrontsForEveryPitch) {
  for (int pitch = 0; pitch < kAlign; ++pitch)
    for (int s0 = 0; s0 < kAlign; ++s0) {
      SCOPED_TRACE(::testing::Message() << "pitch " << pitch << " mod 4, s0 " << s0);
      for (int jj = 0; jj < kCols / 8; ++jj)
        for (int i = 0; i < 2; ++i) {
          std::vector<int> words;
          for (int lane = 0; lane < kWarp; ++lane) {
            const int r = lane / 4, s = (s0 + r * pitch) % kAlign;
            words.push_back(slot(r, s, 8 * jj + 2 * (lane % 4) + i));
          }
          EXPECT_LE(wavefronts(words), 2) << "jj " << jj << " i " << i;
        }
    }
  std::vector<int> edges;
  for (int lane = 0; lane < kWarp; ++lane) edges.push_back(kEdgeBase + lane);
  EXPECT_EQ(wavefronts(edges), 1);
}

}  // namespace
}  // namespace gemmlab::cuda::bulk_rows
