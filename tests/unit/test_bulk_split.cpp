// The memory lab's bulk read gives every block the same bytes (src/cuda/mem/bulk_split.hpp):
// whole 48 KiB tiles dealt round-robin, then one slice each of the rest. Every copy is whole
// 128-byte lines within the buffer, a slice fits a stage, and the ordinary loads get under a
// line per block.
#include <gtest/gtest.h>

#include "cuda/mem/bulk_split.hpp"

namespace gemmlab::cuda::mem {
namespace {

TEST(BulkPlan, BlocksReadEqualWholeLinesAndLeaveUnderALineEach) {
  for (long long bytes : {4194304000LL, 2097152000LL, 8LL << 30, 400LL << 20, 48LL * 1024 * 132, 123456789LL, 4096LL, 1000LL})
    for (int blocks : {1, 114, 132, 264}) {
      SCOPED_TRACE(::testing::Message() << bytes << " bytes on " << blocks << " blocks");
      const BulkPlan p = bulk_plan(bytes, blocks);
      EXPECT_GE(p.rounds, 0);
      EXPECT_GE(p.slice_bytes, 0);
      EXPECT_LT(p.slice_bytes, kBulkTileBytes);
      EXPECT_EQ(p.slice_bytes % kBulkAlign, 0);
      EXPECT_EQ(p.bulk_bytes, (p.rounds * kBulkTileBytes + p.slice_bytes) * blocks);
      EXPECT_LE(p.bulk_bytes, bytes);
      EXPECT_LT(bytes - p.bulk_bytes, static_cast<long long>(kBulkAlign) * blocks);
      // No block could take another whole tile.
      EXPECT_LT(bytes - p.rounds * kBulkTileBytes * blocks, static_cast<long long>(kBulkTileBytes) * blocks);
    }
  // 4 GB on 132 SMs (the H100's read row): 969 tiles and a 22,784-byte slice per block,
  // 7,168 bytes for the ordinary loads.
  const BulkPlan h100 = bulk_plan(4194304000LL, 132);
  EXPECT_EQ(h100.rounds, 969);
  EXPECT_EQ(h100.slice_bytes, 22784);
  EXPECT_EQ(4194304000LL - h100.bulk_bytes, 7168);
}

TEST(BulkPlan, TooLittleGoesThroughOrdinaryLoads) {
  EXPECT_EQ(bulk_plan(1000, 132).bulk_bytes, 0);  // 7 bytes per block
  EXPECT_EQ(bulk_plan(127, 1).bulk_bytes, 0);     // under a line
  EXPECT_EQ(bulk_plan(1 << 20, 0).bulk_bytes, 0);
  EXPECT_EQ(bulk_plan(-1, 4).bulk_bytes, 0);
  const BulkPlan one_line = bulk_plan(128, 1);
  EXPECT_EQ(one_line.rounds, 0);
  EXPECT_EQ(one_line.slice_bytes, 128);
}

}  // namespace
}  // namespace gemmlab::cuda::mem
