// Split-K's plan (src/cuda/tiles/split_k_plan.hpp): how many ranges a tile's K loop is cut
// into on a GPU of a given size, and the workspace that takes.
#include <gtest/gtest.h>

#include "cuda/tiles/split_k_plan.hpp"

namespace gemmlab::cuda {
namespace {

constexpr int kH100Blocks = 132 * 2;  // 132 SMs, two blocks each

TEST(SplitK, TilesThatFillHalfTheGpuAreNotSplit) {
  EXPECT_EQ(split_k_count(132, 1000, kH100Blocks), 1);
  EXPECT_EQ(split_k_count(133, 1000, kH100Blocks), 1);
  EXPECT_EQ(split_k_count(4096, 64, kH100Blocks), 1);
  EXPECT_EQ(split_k_count(0, 64, kH100Blocks), 1);
}

TEST(SplitK, FewTilesFillTheGpuOnce) {
  // 16 x 4096 x 4096 in tiles of 16 x 64 x 128: 64 tiles of 32 K steps -> 4 ranges of 8.
  EXPECT_EQ(split_k_count(64, 32, kH100Blocks), 4);
  // 1 x 1024 x 4096: 16 tiles -> 16 ranges would fill it, but ranges keep 4 K steps: 8.
  EXPECT_EQ(split_k_count(16, 32, kH100Blocks), 8);
  // 131 tiles: just under half, one range more each.
  EXPECT_EQ(split_k_count(131, 64, kH100Blocks), 2);
  // Never more ranges than the GPU holds blocks.
  for (int tiles = 1; tiles <= 132; ++tiles)
    EXPECT_LE(tiles * split_k_count(tiles, 1 << 20, kH100Blocks), kH100Blocks) << tiles;
}

TEST(SplitK, ShortKLoopsStayWhole) {
  EXPECT_EQ(split_k_count(1, 7, kH100Blocks), 1);  // under two ranges of kMinSplitKTiles
  EXPECT_EQ(split_k_count(1, 8, kH100Blocks), 2);
  EXPECT_EQ(split_k_count(1, 1, 1), 1);
}

TEST(SplitK, WorkspaceHoldsEveryRangesPartialAndOneCounterPerTile) {
  EXPECT_EQ(split_k_bytes(32, 1, 16 * 64), 0u);
  EXPECT_EQ(split_k_bytes(32, 4, 16 * 64), 32u * (4u * 16 * 64 * 4 + 4));
  // No overflow past 2^32 bytes.
  EXPECT_EQ(split_k_bytes(1 << 20, 8, 128 * 128), (1ull << 20) * (8ull * 128 * 128 * 4 + 4));
}

}  // namespace
}  // namespace gemmlab::cuda
