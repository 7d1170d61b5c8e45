// The stream-K schedule of the persistent wgmma kernel (src/cuda/hopper/stream_k.hpp), walked
// on the host for every cluster: each K step of each unit done once; whole rounds first;
// the tail evenly cut; each partial unit with one owner (the cluster with its first step),
// whose piece comes first in its range, and the writers (the clusters owner + 1 ... owner +
// writers) whose pieces come last in theirs. Owners first keeps the tail's K offsets
// together: every cluster whose range holds a unit's start begins its tail at offset 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "cuda/hopper/stream_k.hpp"

namespace gemmlab::cuda::stream_k {
namespace {

struct Piece {
  int cluster, index;  // index: place in the cluster's sequence
  Work work;
  bool last;
};

void check_schedule(const Schedule& s) {
  const int units = s.units, clusters = s.clusters, k_steps = s.k_steps;
  SCOPED_TRACE(::testing::Message() << units << " units, " << clusters << " clusters, " << k_steps << " K steps");
  std::vector<int> done(static_cast<std::size_t>(units) * k_steps, 0);
  std::map<int, std::vector<Piece>> pieces_of_unit;
  std::vector<long long> tail_steps(static_cast<std::size_t>(clusters), 0);
  std::vector<int> whole_units(static_cast<std::size_t>(clusters), 0);
  for (int c = 0; c < clusters; ++c) {
    Cursor cursor(s, c);
    Work w;
    std::vector<Work> sequence;
    while (cursor.next(w)) sequence.push_back(w);
    bool in_tail = false;
    for (std::size_t i = 0; i < sequence.size(); ++i) {
      const Work& x = sequence[i];
      ASSERT_GE(x.unit, 0);
      ASSERT_LT(x.unit, units);
      ASSERT_GE(x.k_begin, 0);
      ASSERT_LT(x.k_begin, x.k_end);
      ASSERT_LE(x.k_end, k_steps);
      for (int k = x.k_begin; k < x.k_end; ++k) ++done[static_cast<std::size_t>(x.unit) * k_steps + k];
      if (x.unit < s.dp_units) {
        ASSERT_FALSE(in_tail) << "a round-robin unit after the tail began";
        ASSERT_TRUE(x.whole(k_steps));
        ++whole_units[static_cast<std::size_t>(c)];
      } else {
        in_tail = true;
        tail_steps[static_cast<std::size_t>(c)] += x.k_end - x.k_begin;
        pieces_of_unit[x.unit].push_back({c, static_cast<int>(i), x, i + 1 == sequence.size()});
      }
    }
  }
  ASSERT_TRUE(std::all_of(done.begin(), done.end(), [](int d) { return d == 1; })) << "a K step done twice or never";
  // With a tail: whole rounds (every cluster the same number of units), then ranges within
  // one step of each other.
  if (s.has_tail()) {
    EXPECT_EQ(*std::min_element(whole_units.begin(), whole_units.end()),
              *std::max_element(whole_units.begin(), whole_units.end()));
    EXPECT_LE(*std::max_element(tail_steps.begin(), tail_steps.end()) -
                  *std::min_element(tail_steps.begin(), tail_steps.end()),
              1);
    EXPECT_GE(*std::min_element(tail_steps.begin(), tail_steps.end()), kMinSteps);
  }
  for (const auto& [unit, pieces] : pieces_of_unit) {
    SCOPED_TRACE(::testing::Message() << "tail unit " << unit);
    const int u = unit - s.dp_units;
    if (pieces.size() == 1 && pieces[0].work.whole(k_steps)) {
      EXPECT_EQ(s.writers(u), 0);
      EXPECT_EQ(s.owner(u), pieces[0].cluster);
      continue;
    }
    const auto owner = std::find_if(pieces.begin(), pieces.end(), [&](const Piece& p) { return p.work.owns(k_steps); });
    ASSERT_NE(owner, pieces.end()) << "a partial unit without an owner";
    EXPECT_EQ(owner->cluster, s.owner(u));
    EXPECT_EQ(owner->index, whole_units[static_cast<std::size_t>(owner->cluster)]) << "the owner's piece is not its first";
    EXPECT_EQ(static_cast<int>(pieces.size()) - 1, s.writers(u));
    for (const Piece& p : pieces) {
      if (&p == &*owner) continue;
      EXPECT_GT(p.work.k_begin, 0);
      EXPECT_GT(p.cluster, owner->cluster);
      EXPECT_LE(p.cluster, owner->cluster + s.writers(u));
      EXPECT_TRUE(p.last) << "a writer's piece is not its last";
    }
  }
}

void check_schedule(int units, int clusters, int k_steps) { check_schedule(with_tail(units, clusters, k_steps)); }

TEST(StreamK, EveryStepOnceAndOwnersFirst) {
  check_schedule(1024, 66, 128);  // 8192^3 bf16, clusters of 2: 15.5 rounds
  check_schedule(256, 66, 64);    // 4096^3 bf16
  check_schedule(2048, 132, 256); // 2048 units on 132 clusters
  check_schedule(132, 132, 64);   // whole rounds: no tail
  check_schedule(7, 132, 100);    // fewer units than clusters
  check_schedule(5, 3, 2);        // too few tail steps per cluster: rounds only
  for (int units : {1, 2, 67, 131, 133, 200, 263})
    for (int clusters : {1, 2, 7, 66})
      for (int k_steps : {1, 3, 16, 65}) check_schedule(units, clusters, k_steps);
}

// The whole problem spread by K (the configurations "auto" for a row of tiles and
// "spread_k"): no whole rounds, units x pieces clusters, each with kMinSteps at least, at
// most those offered.
TEST(StreamK, SpreadCutsEveryUnitIntoPieces) {
  const Schedule llm = spread(16, 132, 64, 3);  // 16 x 4096 x 4096 bf16: 16 tiles of 256 columns
  EXPECT_EQ(llm.dp_units, 0);
  EXPECT_EQ(llm.clusters, 48);
  EXPECT_EQ(llm.tail_steps, 16 * 64);
  check_schedule(llm);
  EXPECT_EQ(spread(16, 132, 64, 100).clusters, 132);  // at most the clusters offered
  EXPECT_EQ(spread(4, 132, 64, 3).clusters, 12);
  EXPECT_EQ(spread(4, 132, 8, 3).clusters, 8);         // kMinSteps each
  EXPECT_FALSE(spread(16, 132, 64, 1).has_tail());     // one piece a unit: whole units
  EXPECT_FALSE(spread(1, 132, 7, 8).has_tail());       // under two pieces' worth of steps
  EXPECT_EQ(spread(1, 132, 7, 8).dp_units, 1);
  EXPECT_EQ(spread(1, 132, 8, 8).clusters, 2);
  // As many units as clusters: whole rounds first (the kernel counts at most one tail unit
  // per cluster).
  const Schedule many = spread(200, 132, 64, 4), rounds = with_tail(200, 132, 64);
  EXPECT_EQ(many.dp_units, rounds.dp_units);
  EXPECT_EQ(many.tail_steps, rounds.tail_steps);
  EXPECT_EQ(many.clusters, 132);
  for (int units : {1, 2, 3, 16, 56, 131})
    for (int clusters : {1, 2, 7, 132})
      for (int k_steps : {1, 4, 9, 64, 224})
        for (int pieces : {2, 3, 9, 1000}) check_schedule(spread(units, clusters, k_steps, pieces));
}

// Pieces are added while the K steps the next one saves exceed a fix-up's kFixUpSteps.
TEST(StreamK, SpreadPiecesWhereTheyPay) {
  EXPECT_EQ(spread_pieces(64, 0.5), 3);   // 4096 deep, up to 64 rows of C: 32 step costs
  EXPECT_EQ(spread_pieces(64, 1.0), 5);
  EXPECT_EQ(spread_pieces(224, 0.5), 6);  // 14336 deep
  EXPECT_EQ(spread_pieces(224, 1.0), 9);
  EXPECT_EQ(spread_pieces(4, 1.0), 1);    // too short to cut
  EXPECT_EQ(spread_pieces(1, 1.0), 1);
  EXPECT_EQ(spread_pieces(0, 1.0), 1);
}

TEST(StreamK, ClusterOfMatchesTheRanges) {
  const Schedule s = with_tail(1024, 66, 128);
  ASSERT_TRUE(s.has_tail());
  EXPECT_EQ(s.dp_units, 990);
  EXPECT_EQ(s.tail_steps, 34 * 128);
  for (long long g = 0; g < s.tail_steps; ++g) {
    const int c = s.cluster_of(g);
    ASSERT_LE(s.begin(c), g) << g;
    ASSERT_LT(g, s.begin(c + 1)) << g;
  }
  EXPECT_FALSE(with_tail(132, 132, 64).has_tail());
  EXPECT_FALSE(with_tail(5, 3, 2).has_tail());  // 2 tail steps for 3 clusters
  EXPECT_EQ(rounds_only(1024, 66, 128).dp_units, 1024);
}

// The configuration "auto": the tail where the idle share of the last round, in K steps per
// cluster, reaches its cost (kTailCostSteps).
TEST(StreamK, TailPaysWhereTheLastRoundLeavesEnoughIdle) {
  EXPECT_FALSE(tail_pays(256, 66, 64));    // 4096^3 bf16: 8 of 66 idle, 7.8 steps < 32
  EXPECT_FALSE(tail_pays(256, 66, 128));   // 4096^3 tf32: 15.5 steps
  EXPECT_TRUE(tail_pays(1024, 66, 128));   // 8192^3 bf16: 32 of 66 idle, 62 steps
  EXPECT_TRUE(tail_pays(1024, 66, 256));   // 8192^3 tf32
  EXPECT_FALSE(tail_pays(576, 66, 96));    // 6144^3 bf16: 18 of 66 idle, 26 steps
  EXPECT_FALSE(tail_pays(1024, 66, 64));   // 4096 x 16384 x 4096 bf16: 31 steps
  EXPECT_FALSE(tail_pays(1024, 66, 65));   // 31.5 steps
  EXPECT_TRUE(tail_pays(1024, 66, 67));    // 32.5 steps
  EXPECT_FALSE(tail_pays(132, 66, 1000));  // whole rounds: nothing idle
  EXPECT_TRUE(tail_pays(67, 66, 100));     // one unit over: 65 clusters idle
  EXPECT_FALSE(tail_pays(0, 66, 100));
  EXPECT_FALSE(tail_pays(100, 0, 100));
}

// Whole rounds held in step (lockstep.cuh): the wait before round r needs r counts from
// every producer, so each producer must count rounds - 1 in all, the clusters without a
// unit in a partial last round too (else the others would wait out the bound there), and
// never more before it has begun the rounds those counts stand for.
void check_lockstep_counts(const Schedule& s) {
  SCOPED_TRACE(::testing::Message() << s.units << " units, " << s.clusters << " clusters, dp " << s.dp_units);
  const int rounds = s.rounds();
  for (int c = 0; c < s.clusters; ++c) {
    Cursor cursor(s, c);
    Work w;
    int began = 0;
    bool ended = false;
    while (cursor.next(w)) {
      if (w.unit < s.dp_units) {
        ASSERT_FALSE(ended) << "a round-robin unit after the tail began";
        ++began;
      } else {
        ended = true;
      }
    }
    ASSERT_LE(began, rounds);
    ASSERT_GE(began, rounds - 1);  // only the last round may be partial
    const int counts = (began > 0 ? began - 1 : 0) + lockstep_counts_at_end(began, rounds);
    EXPECT_EQ(counts, rounds > 0 ? rounds - 1 : 0) << "cluster " << c << ", " << began << " rounds begun";
  }
}

TEST(StreamK, LockstepCountsReachEveryRoundBoundary) {
  for (const int clusters : {1, 2, 7, 66, 128, 132})
    for (const int units : {1, 5, 66, 67, 131, 132, 133, 263, 1024, 2048, 18432}) {
      check_lockstep_counts(rounds_only(units, clusters, 64));
      check_lockstep_counts(with_tail(units, clusters, 64));
      check_lockstep_counts(spread(units, clusters, 64, 4));
    }
  // The persistent grid's own size: 18432 units on 132 SMs are 140 rounds of 132 clusters,
  // the last with 84 units.
  const Schedule s = rounds_only(18432, 132, 768);
  EXPECT_EQ(s.rounds(), 140);
  EXPECT_EQ(lockstep_counts_at_end(139, 140), 1);
  EXPECT_EQ(lockstep_counts_at_end(140, 140), 0);
  EXPECT_EQ(lockstep_counts_at_end(1, 1), 0);
  EXPECT_EQ(lockstep_counts_at_end(0, 0), 0);
}

}  // namespace
}  // namespace gemmlab::cuda::stream_k
