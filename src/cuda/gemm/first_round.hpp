// Which rows of A the first round of the persistent wgmma_ws kernel multiplies: plain C++,
// so that the host tests (tests/unit/test_first_round.cpp) check it where there is no GPU.
//
// An A that TMA cannot address is copied into padded rows before the kernel. Of a 4095^3
// bf16 problem, that copy (with B's) took 44-51 us of 255, while the GEMM itself leaves
// DRAM two thirds idle. The first round of tiles needs only the rows of A its tiles
// multiply, so only those are copied before the kernel; the producer warpgroup's idle warps
// copy the rest while the first round runs (wgmma_ws.cuh, "A copied while the kernel runs").
#pragma once

#include <algorithm>

namespace gemmlab::cuda::wgmma_ws {

// The shape of the persistent launch: tiles of bm x bn, units of cluster_m tile rows by one
// tile column walked in groups of group_m tile rows (grouped_tile over units: group_m /
// cluster_m unit rows at a time, column after column), whole rounds over `resident`
// clusters, the grid the fewest clusters that finish in as many rounds (grid_size).
struct PersistentShape {
  int bm, bn, group_m, cluster_m, resident;
};

// The rows [0, first_round_rows) of an m-row A that the units of round 0 multiply, rounded
// up to whole groups of tile rows (every unit row of a group is reached once the round has
// as many units as the group has unit rows) and capped at m.
constexpr int first_round_rows(int m, int n, const PersistentShape& s) {
  if (m <= 0 || n <= 0 || s.resident < 1) return std::max(m, 0);
  const int tiles_m = (m + s.bm - 1) / s.bm, tiles_n = (n + s.bn - 1) / s.bn;
  const int unit_rows = (tiles_m + s.cluster_m - 1) / s.cluster_m;
  const int units = unit_rows * tiles_n;
  const int rounds = (units + s.resident - 1) / s.resident;
  const int clusters = (units + rounds - 1) / rounds;  // round 0: one unit per cluster
  const int group_rows = s.group_m / s.cluster_m;     // unit rows per group
  const int per_group = group_rows * tiles_n;
  const int groups = (clusters + per_group - 1) / per_group;
  const long long rows = static_cast<long long>(groups) * group_rows * s.cluster_m * s.bm;
  return static_cast<int>(std::min<long long>(rows, m));
}

}  // namespace gemmlab::cuda::wgmma_ws
