// The memory lab's bulk read deals a buffer in equal tiles, the same number per block, so
// that no SM idles at the end (src/cuda/mem/bulk_split.hpp): the tiles fit a stage, are
// 16-byte multiples (bulk copies), never reach past the buffer, and leave little for the
// ordinary loads.
#include <gtest/gtest.h>

#include "cuda/mem/bulk_split.hpp"

namespace gemmlab::cuda::mem {
namespace {

TEST(BulkSplit, EqualTilesFitAStageAndCoverAlmostEverything) {
  for (long long bytes : {2097152000LL, 8LL << 30, 400LL << 20, 48LL * 1024 * 132, 123456789LL, 4096LL})
    for (int blocks : {1, 114, 132, 264}) {
      if (bytes / blocks < 16) continue;  // the next test's case
      SCOPED_TRACE(::testing::Message() << bytes << " bytes on " << blocks << " blocks");
      const BulkSplit s = bulk_split(bytes, blocks);
      ASSERT_GT(s.rounds, 0);
      EXPECT_GT(s.tile_bytes, 0);
      EXPECT_LE(s.tile_bytes, kBulkTileBytes);
      EXPECT_EQ(s.tile_bytes % 16, 0);
      const long long tiled = static_cast<long long>(s.rounds) * blocks * s.tile_bytes;
      EXPECT_LE(tiled, bytes);
      // What is left for ordinary loads: under 17 bytes per tile and 1 per block.
      EXPECT_LT(bytes - tiled, 17LL * s.rounds * blocks + blocks);
      // One tile fewer per block would not fit in a stage: no block does extra rounds.
      EXPECT_GT(static_cast<long long>(s.rounds) * kBulkTileBytes, bytes / blocks - kBulkTileBytes);
    }
  // 2 GB on 132 SMs: 324 tiles of 49,024 bytes each (48 KiB tiles dealt round-robin: 323.2).
  EXPECT_EQ(bulk_split(2097152000LL, 132).rounds, 324);
  EXPECT_EQ(bulk_split(2097152000LL, 132).tile_bytes, 49024);
}

TEST(BulkSplit, TooLittleToTileGoesThroughOrdinaryLoads) {
  EXPECT_EQ(bulk_split(15, 1).rounds, 0);
  EXPECT_EQ(bulk_split(1000, 132).rounds, 0);  // 7 bytes per block
  EXPECT_EQ(bulk_split(1 << 20, 0).rounds, 0);
  EXPECT_EQ(bulk_split(16, 1).tile_bytes, 16);
}

}  // namespace
}  // namespace gemmlab::cuda::mem
