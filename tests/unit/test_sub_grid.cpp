// The second level of blocking of the CUDA rungs (src/cuda/tiles/sub_grid.hpp), on the host:
// the plan keeps every launch within its grid's limits and its indices within int, covers
// each row, column and K step once, and is one launch on the problem as it is at ordinary
// sizes; the sub-problems, run one after another by a host stand-in for a kernel, compute
// C exactly (integer inputs) for every transposition, writing each element of C once per
// K chunk and nothing else; and the CUDA rungs' models count their launches (explain).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "core/traffic.hpp"
#include "cuda/tiles/sub_grid.hpp"
#include "gemmlab/registry.hpp"
#include "support/seeds.hpp"

namespace gemmlab::cuda {
namespace {

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();

std::int64_t tiles(std::int64_t extent, std::int64_t tile) { return (extent + tile - 1) / tile; }

// Every launch of the plan within `l`, and the spans covering each extent once.
void check_plan(std::int64_t m, std::int64_t n, std::int64_t k, const GridLimits& l) {
  SCOPED_TRACE(::testing::Message() << m << "x" << n << "x" << k << ", tile " << l.tile_m << "x" << l.tile_n);
  const SubGrids s = plan_sub_grids(m, n, k, l);
  const struct {
    std::int64_t extent, span, parts, tile, max_tiles;
  } dims[] = {{m, s.span_m, s.parts_m, l.tile_m, l.max_tiles_m}, {n, s.span_n, s.parts_n, l.tile_n, l.max_tiles_n}};
  for (const auto& d : dims) {
    ASSERT_GE(d.parts, 1);
    // Whole tiles in every span but the last (moved bases stay aligned to the tile).
    if (d.parts > 1) {
      EXPECT_EQ(d.span % d.tile, 0);
    }
    EXPECT_EQ(d.parts, tiles(d.extent, d.span));
    EXPECT_LE(tiles(d.span, d.tile), d.max_tiles);
    // The kernel's int indices reach tiles x tile - 1.
    EXPECT_LE(tiles(d.span, d.tile) * d.tile, kIntMax);
    // The last span holds what is left, and is not empty.
    EXPECT_GT(d.extent - (d.parts - 1) * d.span, 0);
  }
  EXPECT_LE(tiles(s.span_m, l.tile_m) * tiles(s.span_n, l.tile_n), l.max_blocks);
  EXPECT_LE(s.span_k, l.max_k);
  EXPECT_EQ(s.parts_k, tiles(k, s.span_k));
  EXPECT_EQ(s.launches(), s.parts_m * s.parts_n * s.parts_k);
}

// What each rung of 01-11 launches (their files: the tiles of the default configurations).
const std::vector<GridLimits>& rung_limits() {
  static const std::vector<GridLimits> limits = {
      cols_on_y(32, 8),                    // 01 naive: rows along x, columns along y
      rows_on_y(8, 32),                    // 02 coalesced
      rows_on_y(16, 16, kMaxKChunk),       // 03 smem_tiled_16
      rows_on_y(32, 32, kMaxKChunk),       // 03-05 smem_tiled_32, smem_padded, pitched
      rows_on_y(64, 64, kMaxKChunk),       // 06 reg_1d
      rows_on_y(128, 128, kMaxKChunk),     // 07-09
      tiles_on_x(256, 128),                // 10 pipelined, its largest tile
      tiles_on_x(64, 64),                  // 10 pipelined, its smallest
      tiles_on_x(128, 128),                // 11 mma_sync
  };
  return limits;
}

auto fields(const RowMajorGemm& g) {
  return std::tie(g.m, g.n, g.k, g.trans_a, g.trans_b, g.a, g.lda, g.b, g.ldb, g.c, g.ldc, g.alpha, g.beta);
}

TEST(SubGrid, OrdinaryProblemsLaunchOnceAsTheyAre) {
  for (const GridLimits& l : rung_limits())
    for (const auto& [m, n, k] : std::vector<std::array<std::int64_t, 3>>{
             {1, 1, 1}, {4096, 4096, 4096}, {65535, 3, 5}, {3, 65535, 5}, {524280, 3, 5}, {8192, 8192, 65536}}) {
      SCOPED_TRACE(::testing::Message() << m << "x" << n << "x" << k << ", tile " << l.tile_m << "x" << l.tile_n);
      const SubGrids s = plan_sub_grids(m, n, k, l);
      EXPECT_EQ(s.launches(), 1);
      // The one sub-problem is the problem itself, field for field.
      std::vector<float> a(1), b(1), c(1);
      const RowMajorGemm g{m, n, k, true, false, a.data(), 7, b.data(), 9, c.data(), 11, 1.5, -0.25};
      EXPECT_TRUE(fields(sub_problem(g, s, 0, 0, 0, sizeof(float), sizeof(float))) == fields(g));
    }
}

// The shapes of issue 28 (coalesced and smem_tiled_16 at 1,100,000 rows, naive at 1,100,000
// columns), and the extremes: 2^31 - 1 in each dimension.
TEST(SubGrid, PastOneGridEveryLaunchFits) {
  const std::int64_t extents[] = {1, 3, 65535, 65536, 524280, 524281, 1100000, 16777216, 16777217,
                                  (std::int64_t{1} << 30) + 1, kIntMax - 256, kIntMax};
  for (const GridLimits& l : rung_limits())
    for (const std::int64_t big : extents) {
      check_plan(big, 3, 5, l);
      check_plan(3, big, 5, l);
      check_plan(5, 3, big, l);
      check_plan(big, big, big, l);
    }
  EXPECT_EQ(plan_sub_grids(1100000, 3, 5, rows_on_y(8, 32)).parts_m, 3);           // coalesced
  EXPECT_EQ(plan_sub_grids(1100000, 3, 5, rows_on_y(16, 16, kMaxKChunk)).parts_m, 2);  // smem_tiled_16
  EXPECT_EQ(plan_sub_grids(3, 1100000, 5, cols_on_y(32, 8)).parts_n, 3);           // naive
  // K past 2^30 in chunks for the kernels that step k0 += BK in int; not for the others.
  EXPECT_EQ(plan_sub_grids(1, 1, kIntMax, rows_on_y(128, 128, kMaxKChunk)).parts_k, 2);
  EXPECT_EQ(plan_sub_grids(1, 1, kIntMax, tiles_on_x(128, 128)).parts_k, 1);
  // A 1-D grid: tiles_m x tiles_n blocks in int.
  const SubGrids both = plan_sub_grids(kIntMax, kIntMax, 1, tiles_on_x(64, 64));
  EXPECT_LE(tiles(both.span_m, 64) * tiles(both.span_n, 64), kMaxGridX);
}

// A host stand-in for a kernel: C <- alpha op(A) op(B) + beta C on the sub-problem's own
// pointers and extents, counting the writes to each element of the whole C.
void host_kernel(const RowMajorGemm& g, const float* c_base, std::vector<int>& writes) {
  const auto* a = static_cast<const float*>(g.a);
  const auto* b = static_cast<const float*>(g.b);
  auto* c = static_cast<float*>(g.c);
  for (std::int64_t i = 0; i < g.m; ++i)
    for (std::int64_t j = 0; j < g.n; ++j) {
      float sum = 0;
      for (std::int64_t p = 0; p < g.k; ++p) {
        const float x = g.trans_a ? a[p * g.lda + i] : a[i * g.lda + p];
        const float y = g.trans_b ? b[j * g.ldb + p] : b[p * g.ldb + j];
        sum += x * y;
      }
      float& out = c[i * g.ldc + j];
      out = g.beta == 0.0 ? static_cast<float>(g.alpha) * sum
                          : static_cast<float>(g.alpha) * sum + static_cast<float>(g.beta) * out;
      ++writes[static_cast<std::size_t>(&out - c_base)];
    }
}

// Small limits, so that every dimension splits: the sub-problems together compute C exactly.
TEST(SubGrid, SubProblemsComputeTheProblem) {
  testing::Seeds seeds;
  const std::uint64_t seed = seeds.next();
  SCOPED_TRACE(seeds.describe(seed));
  std::uint64_t state = seed;
  const auto small_integer = [&state] {  // -3 .. 3: every product and sum exact in float
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>(static_cast<int>((state >> 33) % 7) - 3);
  };
  const std::int64_t m = 17, n = 13, k = 11, pad = 2;
  const GridLimits limits[] = {
      {.tile_m = 3, .tile_n = 2, .max_tiles_m = 2, .max_tiles_n = 3, .max_blocks = kUnlimited, .max_k = 4},
      {.tile_m = 2, .tile_n = 4, .max_tiles_m = 5, .max_tiles_n = 1, .max_blocks = 3, .max_k = kIntMax},
  };
  for (const GridLimits& l : limits)
    for (const bool ta : {false, true})
      for (const bool tb : {false, true})
        for (const double beta : {0.0, -2.0}) {
          SCOPED_TRACE(::testing::Message() << "trans " << ta << tb << " beta " << beta << " tile " << l.tile_m << "x"
                                            << l.tile_n);
          // Row-major storage: A is m x k (k x m under T), B k x n (n x k under T).
          const std::int64_t lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
          std::vector<float> a(static_cast<std::size_t>((ta ? k : m) * lda));
          std::vector<float> b(static_cast<std::size_t>((tb ? n : k) * ldb));
          std::vector<float> c(static_cast<std::size_t>(m * ldc));
          for (float& x : a) x = small_integer();
          for (float& x : b) x = small_integer();
          for (float& x : c) x = beta == 0.0 ? std::numeric_limits<float>::quiet_NaN() : small_integer();
          const std::vector<float> c_before = c;
          const RowMajorGemm g{m, n, k, ta, tb, a.data(), lda, b.data(), ldb, c.data(), ldc, 3.0, beta};
          const SubGrids s = plan_sub_grids(g, l);
          ASSERT_GT(s.parts_m, 1);
          ASSERT_GT(s.parts_n, 1);
          std::vector<int> writes(c.size(), 0);
          std::int64_t launched = 0;
          const Status status = for_each_sub_grid(g, l, sizeof(float), sizeof(float), [&](const RowMajorGemm& sub) {
            EXPECT_LE(tiles(sub.m, l.tile_m), l.max_tiles_m);
            EXPECT_LE(tiles(sub.n, l.tile_n), l.max_tiles_n);
            EXPECT_LE(tiles(sub.m, l.tile_m) * tiles(sub.n, l.tile_n), l.max_blocks);
            EXPECT_LE(sub.k, l.max_k);
            host_kernel(sub, c.data(), writes);
            ++launched;
            return Status::ok();
          });
          ASSERT_TRUE(status.is_ok());
          EXPECT_EQ(launched, s.launches());
          for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < ldc; ++j) {
              const auto at = static_cast<std::size_t>(i * ldc + j);
              if (j >= n) {  // C's padding: never written
                EXPECT_EQ(writes[at], 0);
                continue;
              }
              EXPECT_EQ(writes[at], s.parts_k) << "C(" << i << ", " << j << ")";
              double want = beta == 0.0 ? 0.0 : beta * c_before[at];
              for (std::int64_t p = 0; p < k; ++p)
                want += 3.0 * (ta ? a[static_cast<std::size_t>(p * lda + i)] : a[static_cast<std::size_t>(i * lda + p)]) *
                        (tb ? b[static_cast<std::size_t>(j * ldb + p)] : b[static_cast<std::size_t>(p * ldb + j)]);
              EXPECT_EQ(c[at], static_cast<float>(want)) << "C(" << i << ", " << j << ")";
            }
        }
}

// A failed launch stops the sequence and comes back as it was.
TEST(SubGrid, FirstFailureStops) {
  std::vector<float> a(1), b(1), c(1);
  const RowMajorGemm g{100, 10, 1, false, false, a.data(), 1, b.data(), 10, c.data(), 10, 1.0, 0.0};
  const GridLimits l{.tile_m = 10, .tile_n = 10, .max_tiles_m = 1, .max_tiles_n = 1};
  int calls = 0;
  const Status s = for_each_sub_grid(g, l, sizeof(float), sizeof(float), [&](const RowMajorGemm&) {
    return ++calls == 3 ? Status{StatusCode::InternalError, "third"} : Status::ok();
  });
  EXPECT_EQ(s.code(), StatusCode::InternalError);
  EXPECT_EQ(calls, 3);
}

// explain's model (Traffic::launches) of the rungs whose grids put tile rows (or, naive,
// tile columns) along y: the shapes of issue 28 take several launches, 4096^3 one. (The
// models of rungs 01-09 are host arithmetic: no device needed.)
TEST(SubGrid, ModelsCountTheLaunches) {
  const auto matrix = [](std::int64_t rows, std::int64_t cols) {
    Matrix x;
    x.rows = rows;
    x.cols = cols;
    x.ld = cols;
    return x;
  };
  const auto problem = [&](std::int64_t m, std::int64_t n, std::int64_t k) {
    GemmProblem p;
    p.m = m;
    p.n = n;
    p.k = k;
    p.a = matrix(m, k);
    p.b = matrix(k, n);
    p.c = matrix(m, n);
    return p;
  };
  struct Expected {
    const char* rung;
    std::int64_t tall, wide;  // launches at 1,100,000 x 3 x 5 and 3 x 1,100,000 x 5
  };
  const Expected expected[] = {{"naive", 1, 3},         {"coalesced", 3, 1},   {"smem_tiled_16", 2, 1},
                               {"smem_tiled_32", 1, 1}, {"smem_padded", 1, 1}, {"pitched", 1, 1},
                               {"reg_1d", 1, 1},        {"reg_2d", 1, 1},      {"vectorized", 1, 1},
                               {"warptile", 1, 1}};
  if (variants(Backend::Cuda).empty()) GTEST_SKIP() << "this build has no CUDA backend";
  for (const Expected& e : expected) {
    const Variant* v = find_variant(Backend::Cuda, e.rung);
    ASSERT_NE(v, nullptr) << e.rung;
    EXPECT_EQ(v->model(problem(1100000, 3, 5)).launches, e.tall) << e.rung;
    EXPECT_EQ(v->model(problem(3, 1100000, 5)).launches, e.wide) << e.rung;
    EXPECT_EQ(v->model(problem(4096, 4096, 4096)).launches, 1) << e.rung;
    // One tile past 65,535 tile rows along y (naive: tile columns): two launches.
    const bool naive = std::string(e.rung) == "naive";
    const std::int64_t tile = v->config.get("BM", v->config.get("TILE_WIDTH", v->config.get("block_rows")));
    const std::int64_t past = kMaxGridYZ * (naive ? v->config.get("block_cols") : tile) + 1;
    ASSERT_GT(past, kMaxGridYZ) << e.rung << ": its configuration names no tile";
    EXPECT_EQ(v->model(naive ? problem(1, past, 1) : problem(past, 1, 1)).launches, 2) << e.rung;
    EXPECT_EQ(v->model(naive ? problem(1, past - 1, 1) : problem(past - 1, 1, 1)).launches, 1) << e.rung;
  }
}

}  // namespace
}  // namespace gemmlab::cuda
