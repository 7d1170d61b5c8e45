// The work of a persistent GEMM kernel, cluster by cluster, with a stream-K tail
// (kernel.cuh, fixup.cuh; the configurations "auto" and "stream_k" of forms.hpp). Plain C++, so that the host tests
// (tests/unit/test_stream_k.cpp) check the kernel's own schedule: every K step of every
// unit done once, the clusters evenly loaded, and each cluster's tail in the order below.
//
// Whole units (tiles, or a cluster's tiles) fill as many rounds as every cluster can take:
// `dp_units` of them, dealt round-robin. Units left over would leave clusters idle in a
// last, partial round (at 8192^3 on an H100: 1024 units for 66 clusters, 15.5 rounds), so
// their K steps are laid end to end and cut into one equal range per cluster (shorter than
// a unit: fewer units are left than clusters). A range starts inside one unit and may end
// inside the next. The cluster whose range holds a unit's first K step is its owner; the
// clusters after it that hold its other steps are its writers. Each cluster runs its range
// last piece first: the piece that starts a unit (K offsets 0 ...), then the end of the
// unit before. In step order, neighbouring clusters would sit at K offsets a fraction of a
// unit apart and share no operand tiles in L2 (at 4096^3 tf32 the tail doubled the
// kernel's DRAM reads); last piece first, every cluster whose range holds a unit's start
// begins at offset 0, as in the rounds. Then the owner finishes its piece before its
// writers do, so whichever piece of a unit arrives last adds the others and writes C
// (fixup.cuh). Every cluster gets at least kMinSteps steps, so that
// the writers of a unit are exactly the clusters between its owner and the one holding its
// last step.
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
  // Rounds of whole units in the fullest clusters (the last round may be partial).
  GEMMLAB_STREAM_K_HD constexpr int rounds() const { return (dp_units + clusters - 1) / clusters; }
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

// Whether a tail pays for itself where the choice is left to the kernel (the configuration
// "auto"). It saves the idle share of the last round, (clusters - left) /
// clusters of a unit's K steps per cluster (left: the units over whole rounds), and costs
// about kTailCostSteps K steps: the partials, the fix-up, and on the bench the clock that
// 132 busy SMs cost against 128. A K step of a 128 x 256 tile takes about 1,056 cycles in
// bf16 and tf32 alike. Measured on an H100: 20 steps fitted four locked-clock sizes (4096^3,
// 8192^3); benches of whole rounds against the tail in three interleaved rounds with cuBLAS
// as the anchor put it at 28-34 steps at 6144^3, 8192 x 8192 x 2048, 4096 x 16384 x 4096
// and 16384 x 4096 x 4096 (the tail lost 0.3-2.5 % or tied where 20 said it gains
// 0.7-1.1 %), and 8192^3 at 21-31.
inline constexpr long long kTailCostSteps = 32;
GEMMLAB_STREAM_K_HD constexpr bool tail_pays(int units, int clusters, int k_steps) {
  if (clusters < 1 || units < 1 || k_steps < 1) return false;
  const int left = units % clusters;
  if (left == 0) return false;
  return static_cast<long long>(clusters - left) * k_steps >= kTailCostSteps * clusters;
}

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

// The whole problem as a stream-K tail, no whole rounds, for a problem of fewer units than
// clusters that is bound by loading one operand, not by the tensor cores (one row of tiles:
// a few rows of A against all of B): whole units would leave most SMs idle and a unit's
// K loop long. Each unit is cut into `pieces` (spread_pieces), so units x pieces clusters
// run (at most `clusters`, each with at least kMinSteps; `clusters` says how many to launch).
// Rounds only where that leaves one piece per unit; with_tail where there are as many units
// as clusters (the kernel counts the pieces of at most `clusters` tail units).
GEMMLAB_STREAM_K_HD constexpr Schedule spread(int units, int clusters, int k_steps, int pieces) {
  if (units >= clusters) return with_tail(units, clusters, k_steps);
  Schedule s = rounds_only(units, clusters, k_steps);
  if (units < 1 || k_steps < 1 || pieces < 2) return s;
  const long long steps = static_cast<long long>(units) * k_steps;
  long long fit = steps / kMinSteps;
  if (fit > static_cast<long long>(units) * pieces) fit = static_cast<long long>(units) * pieces;
  if (fit > clusters) fit = clusters;
  if (fit <= units) return s;
  s.clusters = static_cast<int>(fit);
  s.dp_units = 0;
  s.tail_steps = steps;
  return s;
}

// How many pieces to cut each unit into, where every unit is spread. A piece saves its share
// of the unit's K loop, `step_cost` per step in K steps of a whole 128 x 256 tile (half of one
// where a warpgroup has no rows of C and skips its MMAs), and costs the unit's last piece
// about kFixUpSteps to read its partial (the reads run one partial after another). So
// pieces are added while the K steps the next one saves, k_steps x step_cost / (p (p + 1)),
// exceed that. Measured on an H100 at 1-128 x 256-14336 x 4096-14336 bf16: a unit in 16
// pieces ran 44.5 us, in one 29.0 (1 x 256 x 4096).
inline constexpr double kFixUpSteps = 3.0;
GEMMLAB_STREAM_K_HD constexpr int spread_pieces(int k_steps, double step_cost) {
  int p = 1;
  while (k_steps * step_cost > kFixUpSteps * p * (p + 1)) ++p;
  return p;
}

// Whole rounds held in step (lockstep.cuh): a producer counts itself once at the start of
// each of its rounds after the first, and once its whole units end after `began` of them,
// for every round boundary it has no round for, so that each producer counts
// rounds - 1 in all and the grid's last boundary is reached without the clusters that
// have no unit in the last round.
GEMMLAB_STREAM_K_HD constexpr int lockstep_counts_at_end(int began, int rounds) {
  const int missing = rounds - (began > 1 ? began : 1);
  return missing > 0 ? missing : 0;
}

// One piece of a cluster's work: K steps [k_begin, k_end) of `unit`.
struct Work {
  int unit = 0, k_begin = 0, k_end = 0;
  GEMMLAB_STREAM_K_HD constexpr bool whole(int k_steps) const { return k_begin == 0 && k_end == k_steps; }
  // A partial unit whose first step is here: this cluster owns it and finishes it.
  GEMMLAB_STREAM_K_HD constexpr bool owns(int k_steps) const { return k_begin == 0 && k_end < k_steps; }
};

// Walks cluster c's work in order: its round-robin units, then the pieces of its tail range,
// last piece first.
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
    if (end_ <= step_) return false;
    // The range's pieces last-first: the one that starts a unit (K offsets 0 ...) first.
    const int u = s_.tail_unit_of(end_ - 1);
    const long long unit_start = static_cast<long long>(u) * s_.k_steps;
    const long long start = step_ > unit_start ? step_ : unit_start;
    w = {s_.dp_units + u, static_cast<int>(start - unit_start), static_cast<int>(end_ - unit_start)};
    end_ = start;
    return true;
  }

 private:
  Schedule s_;
  int unit_;
  long long step_, end_;
};

}  // namespace gemmlab::cuda::stream_k
