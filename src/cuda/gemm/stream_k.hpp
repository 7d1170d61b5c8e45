// The work of a persistent GEMM kernel, cluster by cluster, with a stream-K tail
// (wgmma_ws.cuh, GEMMLAB_WGMMA_TAIL=stream_k). Plain C++, so that the host tests
// (tests/unit/test_stream_k.cpp) check the kernel's own schedule: every K step of every
// unit done once, the clusters evenly loaded, and no owner ever waiting on work that comes
// after its own.
//
// Whole units (tiles, or a cluster's tiles) fill as many rounds as every cluster can take:
// `dp_units` of them, dealt round-robin. Units left over would leave clusters idle in a
// last, partial round (at 8192^3 on an H100: 1024 units for 66 clusters, 15.5 rounds), so
// their K steps are laid end to end and cut into one equal range per cluster. A range
// starts inside one unit, may cover whole units, and ends inside another. The cluster whose
// range holds a unit's first K step owns the unit: it finishes the sum, adding the partial
// sums of the clusters after it, and writes C. Those (the "writers") reach the unit at the
// start of their ranges, the owner at the end of its own: the partials are written by the
// time the owner waits for them. Every cluster gets at least kMinSteps steps, so that the
// writers of a unit are exactly the clusters between its owner and the one holding its last
// step.
#pragma once

#if defined(__CUDACC__)
#define GEMMLAB_STREAM_K_HD __host__ __device__
#else
#define GEMMLAB_STREAM_K_HD
#endif

namespace gemmlab::cuda::stream_k {

inline constexpr long long kMinSteps = 4;  // per cluster; below that, plain rounds

struct Schedule {
  int units = 0;     // all units of the problem
  int clusters = 1;  // persistent clusters launched
  int k_steps = 0;   // K steps of one unit
  int dp_units = 0;  // units done whole, round-robin (all of them without a stream-K tail)
  long long tail_steps = 0;  // K steps of the other units, cut into `clusters` ranges

  GEMMLAB_STREAM_K_HD constexpr bool has_tail() const { return tail_steps > 0; }
  // Cluster c's range of tail steps: [begin(c), begin(c + 1)).
  GEMMLAB_STREAM_K_HD constexpr long long begin(int c) const { return c * tail_steps / clusters; }
  // The cluster whose range holds tail step g.
  GEMMLAB_STREAM_K_HD constexpr int cluster_of(long long g) const {
    return static_cast<int>(((g + 1) * clusters + tail_steps - 1) / tail_steps - 1);
  }
  // The tail unit (0-based from dp_units) that tail step g belongs to.
  GEMMLAB_STREAM_K_HD constexpr int tail_unit_of(long long g) const { return static_cast<int>(g / k_steps); }
  // The clusters after the owner whose ranges hold steps of tail unit u: the writers the
  // owner waits for, clusters owner + 1 .. owner + writers(u).
  GEMMLAB_STREAM_K_HD constexpr int owner(int u) const { return cluster_of(static_cast<long long>(u) * k_steps); }
  GEMMLAB_STREAM_K_HD constexpr int writers(int u) const {
    return cluster_of(static_cast<long long>(u + 1) * k_steps - 1) - owner(u);
  }
};

// Rounds only: units round-robin over the clusters.
GEMMLAB_STREAM_K_HD constexpr Schedule rounds_only(int units, int clusters, int k_steps) {
  Schedule s;
  s.units = units;
  s.clusters = clusters;
  s.k_steps = k_steps;
  s.dp_units = units;
  return s;
}

// Whole rounds, then the leftover units as a stream-K tail, where there is a leftover and
// every cluster gets kMinSteps of it; rounds only otherwise.
GEMMLAB_STREAM_K_HD constexpr Schedule with_tail(int units, int clusters, int k_steps) {
  Schedule s = rounds_only(units, clusters, k_steps);
  if (clusters < 2 || k_steps < 1) return s;
  const int dp = units / clusters * clusters;
  const long long tail = static_cast<long long>(units - dp) * k_steps;
  if (tail == 0 || tail < kMinSteps * clusters) return s;
  s.dp_units = dp;
  s.tail_steps = tail;
  return s;
}

// One piece of a cluster's work: K steps [k_begin, k_end) of `unit`.
struct Work {
  int unit = 0, k_begin = 0, k_end = 0;
  GEMMLAB_STREAM_K_HD constexpr bool whole(int k_steps) const { return k_begin == 0 && k_end == k_steps; }
  // A partial unit whose first step is here: this cluster owns it and finishes it.
  GEMMLAB_STREAM_K_HD constexpr bool owns(int k_steps) const { return k_begin == 0 && k_end < k_steps; }
};

// Walks cluster c's work in order: its round-robin units, then the pieces of its tail range.
//   Cursor w(schedule, c); Work item; while (w.next(item)) { ... }
class Cursor {
 public:
  GEMMLAB_STREAM_K_HD constexpr Cursor(const Schedule& s, int c)
      : s_(s), unit_(c), step_(s.has_tail() ? s.begin(c) : 0), end_(s.has_tail() ? s.begin(c + 1) : 0) {}
  GEMMLAB_STREAM_K_HD constexpr bool next(Work& w) {
    if (unit_ < s_.dp_units) {
      w = {unit_, 0, s_.k_steps};
      unit_ += s_.clusters;
      return true;
    }
    if (step_ >= end_) return false;
    const int u = s_.tail_unit_of(step_);
    const int k = static_cast<int>(step_ - static_cast<long long>(u) * s_.k_steps);
    const long long left = end_ - step_;
    const int k_end = left < s_.k_steps - k ? k + static_cast<int>(left) : s_.k_steps;
    w = {s_.dp_units + u, k, k_end};
    step_ += k_end - k;
    return true;
  }

 private:
  Schedule s_;
  int unit_;
  long long step_, end_;
};

}  // namespace gemmlab::cuda::stream_k
