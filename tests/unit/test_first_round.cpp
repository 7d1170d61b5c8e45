// The rows of A that the first round of the persistent wgmma_ws kernel multiplies
// (src/cuda/gemm/first_round.hpp), against a walk of that round on the host: the units of
// round 0 in grouped order, every rank of each cluster. Every tile row the round reaches
// lies inside first_round_rows (else its tiles would wait for the copy that runs beside the
// kernel), and the bound is at most one group of tile rows past the last row reached.
#include <gtest/gtest.h>

#include <algorithm>

#include "cuda/gemm/first_round.hpp"

namespace gemmlab::cuda::wgmma_ws {
namespace {

// grouped_tile (block_order.cuh) over units, as cluster_tile calls it.
void unit_tile(int unit, int unit_rows, int tiles_n, int group_rows, int& um, int& tn) {
  const int per_group = group_rows * tiles_n;
  const int first = unit / per_group * group_rows;
  const int rows_in_group = std::min(unit_rows - first, group_rows);
  um = first + unit % per_group % rows_in_group;
  tn = unit % per_group / rows_in_group;
}

void check(int m, int n, const PersistentShape& s) {
  SCOPED_TRACE(::testing::Message() << m << " x " << n << ", clusters of " << s.cluster_m << ", " << s.resident
                                    << " resident");
  const int rows = first_round_rows(m, n, s);
  ASSERT_GE(rows, 0);
  ASSERT_LE(rows, m);
  if (rows < m) {
    EXPECT_EQ(rows % s.bm, 0) << "the copy beside the kernel starts on a tile row";
  }
  const int tiles_m = (m + s.bm - 1) / s.bm, tiles_n = (n + s.bn - 1) / s.bn;
  const int unit_rows = (tiles_m + s.cluster_m - 1) / s.cluster_m;
  const int units = unit_rows * tiles_n;
  const int rounds = (units + s.resident - 1) / s.resident;
  const int clusters = (units + rounds - 1) / rounds;  // grid_size
  int reached = 0;                                     // rows below the last tile row round 0 reaches
  for (int u = 0; u < std::min(units, clusters); ++u) {
    int um, tn;
    unit_tile(u, unit_rows, tiles_n, s.group_m / s.cluster_m, um, tn);
    ASSERT_LT(tn, tiles_n);
    for (int rank = 0; rank < s.cluster_m; ++rank) {
      const int tm = um * s.cluster_m + rank;
      if (tm < tiles_m) reached = std::max(reached, std::min(m, (tm + 1) * s.bm));
    }
  }
  EXPECT_LE(reached, rows);
  EXPECT_LE(rows, std::min(m, reached + s.group_m * s.bm));
}

TEST(FirstRound, CoversEveryRowTheFirstRoundMultiplies) {
  for (int cluster : {1, 2})
    for (int resident : {1, 7, 60, 64, 66, 132 / cluster})
      for (int m : {1, 127, 128, 1000, 1024, 1025, 2100, 4095, 4096, 8192, 20000})
        for (int n : {1, 256, 257, 4095, 8192}) check(m, n, {128, 256, 8, cluster, resident});
}

// The problem the copy beside the kernel was made for: a 4095^3 bf16 GEMM on an H100 (132
// SMs, 66 clusters of two): 256 units in 4 rounds of 64 clusters, round 0 the first group of
// 8 tile rows, so rows 0-1023 are copied before the kernel and 3071 beside it.
TEST(FirstRound, HandCountedShapes) {
  const PersistentShape h100{128, 256, 8, 2, 66};
  EXPECT_EQ(first_round_rows(4095, 4095, h100), 1024);
  EXPECT_EQ(first_round_rows(8192, 8192, h100), 1024);  // 1024 units, 16 rounds of 64
  EXPECT_EQ(first_round_rows(1000, 1000, h100), 1000);  // one round: all of A before
  // 64 units of 4 tile columns: one round reaches all four groups.
  EXPECT_EQ(first_round_rows(4096, 1024, h100), 4096);
  // Without clusters: 512 tiles in 4 rounds of 128 blocks; a group is 8 tile rows by 16
  // columns, 128 tiles: round 0 is one group.
  EXPECT_EQ(first_round_rows(4096, 4096, {128, 256, 8, 1, 132}), 1024);
  EXPECT_EQ(first_round_rows(0, 10, h100), 0);
}

}  // namespace
}  // namespace gemmlab::cuda::wgmma_ws
