// The out-of-core schedule's model and tile choice, without a GPU: the bytes its buffers need
// are what the schedule lays out, every chosen plan fits its limit, a limit below one step is
// refused naming the bytes, fixed tiles are honoured, and the traffic the model counts is the
// traffic of the schedule (A once per row of tiles when it stays, B once per row of tiles).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/out_of_core_plan.hpp"
#include "support/assertions.hpp"

namespace gemmlab {
namespace {

using testing::contains;

OutOfCoreShape square(std::int64_t n, std::size_t in = 4) { return {n, n, n, false, false, in, 4, false}; }

TEST(OutOfCorePlan, BufferBytesAreTwoOfEachBlockWithPaddedRows) {
  const OutOfCoreShape s{1000, 900, 800, false, true, 2, 4, false};
  // A block 300 x 200 (rows padded to 208), B stored n x k: 100 x 200 (208), C 300 x 100 (112).
  const TileElements e = tile_elements(s, 300, 100, 200);
  EXPECT_EQ(e.a, 300 * 208);
  EXPECT_EQ(e.b, 100 * 208);
  EXPECT_EQ(e.c, 300 * 112);
  EXPECT_EQ(tile_buffer_bytes(s, 300, 100, 200), 2u * ((300 * 208 + 100 * 208) * 2u + 300 * 112 * 4u));
}

TEST(OutOfCorePlan, ChosenPlanFitsTheLimitAndCountsTheSchedulesTraffic) {
  const OutOfCoreShape s = square(32768);
  const OutOfCoreRates rates = nominal_rates(DType::F32, DType::F32, false);
  const std::uint64_t problem_bytes = 3ull * 32768 * 32768 * 4;
  for (const double share : {0.05, 0.25, 1.0}) {
    SCOPED_TRACE(share);
    const auto budget = static_cast<std::uint64_t>(share * static_cast<double>(problem_bytes));
    OutOfCorePlan p;
    ASSERT_TRUE(choose_out_of_core_tiles(s, budget, rates, {}, 0, 0, 0, p).is_ok());
    EXPECT_LE(p.device_bytes, budget);
    EXPECT_EQ(p.device_bytes, tile_buffer_bytes(s, p.tile_m, p.tile_n, p.tile_k));
    EXPECT_EQ(p.tiles_m, (32768 + p.tile_m - 1) / p.tile_m);
    EXPECT_EQ(p.blocks_k, (32768 + p.tile_k - 1) / p.tile_k);
    const double a = 32768.0 * 32768 * 4 * (p.a_resident ? 1.0 : static_cast<double>(p.tiles_n));
    const double b = 32768.0 * 32768 * 4 * (p.b_resident ? 1.0 : static_cast<double>(p.tiles_m));
    EXPECT_FALSE(p.a_resident && p.b_resident);
    EXPECT_EQ(p.a_resident || p.b_resident, p.blocks_k == 1);
    EXPECT_DOUBLE_EQ(p.h2d_bytes, a + b);
    EXPECT_DOUBLE_EQ(p.d2h_bytes, 32768.0 * 32768 * 4);
    EXPECT_GE(p.model_seconds, p.compute_seconds);
    // A quarter of the problem holds tiles wide enough that float32 SIMT is compute-bound.
    if (share >= 0.25) {
      EXPECT_LE(p.h2d_seconds, p.compute_seconds);
    }
  }
}

TEST(OutOfCorePlan, MoreMemoryNeverRanksWorse) {
  // Every plan that fits a limit fits a larger one: the best can only improve.
  const OutOfCoreShape s{20000, 30000, 50000, true, false, 2, 4, true};
  const OutOfCoreRates rates = nominal_rates(DType::BF16, DType::BF16, true);
  double last = 1e300;
  for (const std::uint64_t gb : {1, 2, 4, 8, 16}) {
    OutOfCorePlan p;
    ASSERT_TRUE(choose_out_of_core_tiles(s, gb << 30, rates, {}, 0, 0, 0, p).is_ok());
    EXPECT_LE(out_of_core_rank(s, p), last) << gb << " GiB: " << p.describe();
    last = out_of_core_rank(s, p);
  }
}

TEST(OutOfCorePlan, ReadsCWhenBetaIsNotZero) {
  OutOfCoreShape s = square(4096);
  OutOfCorePlan without, with;
  const OutOfCoreRates rates = nominal_rates(DType::F32, DType::F32, false);
  ASSERT_TRUE(choose_out_of_core_tiles(s, 1u << 30, rates, {}, 1024, 1024, 4096, without).is_ok());
  s.reads_c = true;
  ASSERT_TRUE(choose_out_of_core_tiles(s, 1u << 30, rates, {}, 1024, 1024, 4096, with).is_ok());
  EXPECT_DOUBLE_EQ(with.h2d_bytes - without.h2d_bytes, 4096.0 * 4096 * 4);
}

TEST(OutOfCorePlan, FixedTilesAreHonouredAndClippedToTheProblem) {
  const OutOfCoreShape s{1000, 700, 300, false, false, 4, 4, false};
  OutOfCorePlan p;
  ASSERT_TRUE(
      choose_out_of_core_tiles(s, 1u << 30, nominal_rates(DType::F32, DType::F32, false), {}, 256, 5000, 100, p)
          .is_ok());
  EXPECT_EQ(p.tile_m, 256);
  EXPECT_EQ(p.tile_n, 700);
  EXPECT_EQ(p.tile_k, 100);
  EXPECT_EQ(p.tiles_m, 4);
  EXPECT_EQ(p.blocks_k, 3);
  EXPECT_FALSE(p.a_resident);
  EXPECT_FALSE(p.b_resident);
}

TEST(OutOfCorePlan, TheStreamedOperandIsTheOneWhoseBlocksAreContiguous) {
  // Row-major NN: a block of A (whole rows of K) is one run of memory, a panel of B (all of K,
  // some columns) thousands of short rows: B stays, A streams. Under TT the other way round.
  const OutOfCoreRates rates = nominal_rates(DType::F32, DType::F32, false);
  OutOfCorePlan nn, tt;
  ASSERT_TRUE(choose_out_of_core_tiles({32768, 32768, 32768, false, false, 4, 4, false}, 3u << 30, rates, {}, 0, 0,
                                       32768, nn)
                  .is_ok());
  EXPECT_TRUE(nn.b_resident) << nn.describe();
  ASSERT_TRUE(choose_out_of_core_tiles({32768, 32768, 32768, true, true, 4, 4, false}, 3u << 30, rates, {}, 0, 0,
                                       32768, tt)
                  .is_ok());
  EXPECT_TRUE(tt.a_resident) << tt.describe();
}

TEST(OutOfCorePlan, StridedCopiesMoveAtTheirOperandsRateForTheirRowLength) {
  // Row-major NN float32, tiles 4096 x 4096 x 640: A's blocks in rows of 2.5 KiB (between the
  // curve's points at 2 and 3 KiB), B's and C's in rows of 16 KiB. Each operand has its own
  // curve, here linear in the logarithm of the row, which the interpolation reproduces. The
  // shared rates are left unmeasured, so each direction keeps its own.
  const OutOfCoreShape s = square(8192);
  OutOfCoreRates r = nominal_rates(DType::F32, DType::F32, false);
  const auto curve = [](double scale) {
    OutOfCoreRates::StridedCurve c;
    for (std::size_t i = 0; i < OutOfCoreRates::kStridedRowBytes.size(); ++i) {
      c.h2d[i] = scale * std::log2(OutOfCoreRates::kStridedRowBytes[i] / 256);
      c.d2h[i] = c.h2d[i] / 2;
    }
    return c;
  };
  r.a_strided_beside = curve(10e9);
  r.b_strided_beside = curve(20e9);
  r.c_strided_beside = curve(5e9);
  OutOfCorePlan p;
  p.tile_m = p.tile_n = 4096;
  p.tile_k = 640;
  model_out_of_core(s, r, p);
  const double a = 8192.0 * 8192 * 4 * 2, b = a;  // each streamed once per column (row) of tiles
  const double c = 8192.0 * 8192 * 4;
  EXPECT_NEAR(p.h2d_seconds, a / (10e9 * std::log2(10.0)) + b / (20e9 * 6), 1e-9 * p.h2d_seconds);
  EXPECT_NEAR(p.d2h_seconds, c / (5e9 * 6 / 2), 1e-9 * p.d2h_seconds);
  // Unmeasured (any point of a curve 0): the link's strided figure up, the contiguous rate
  // down; an operand measured keeps its curve.
  r.a_strided_beside.h2d[0] = 0;
  r.c_strided_beside.d2h[12] = 0;
  r.h2d_strided_bytes_per_second = 16e9;
  model_out_of_core(s, r, p);
  EXPECT_NEAR(p.h2d_seconds, a / 16e9 + b / (20e9 * 6), 1e-9 * p.h2d_seconds);
  EXPECT_NEAR(p.d2h_seconds, c / r.d2h_bytes_per_second, 1e-9 * p.d2h_seconds);
}

TEST(OutOfCorePlan, TheRampCutsTheFillIntoPieces) {
  EXPECT_EQ(ramp_piece(300), 300);    // too short to cut
  EXPECT_EQ(ramp_piece(1024), 256);
  EXPECT_EQ(ramp_piece(1100), 512);   // a quarter, rounded up to the tile alignment: 3 pieces
  EXPECT_EQ(ramp_piece(32768), 8192);
  // The fill: the first step's blocks that the ramp cuts (K their slow dimension: A under T, B
  // under N) go up a quarter at a time, the others whole before them. A quarter of the cut
  // blocks is exposed where the first product hides the rest, else all of them but three
  // quarters of that product; likewise the last tile down. The products cut into pieces (4 of
  // K first, 4 of rows last) take longer than whole ones (each piece pays the tile overhead,
  // fewer tiles fill fewer waves), which shows where compute is the longest part of the run.
  OutOfCoreRates r = nominal_rates(DType::F32, DType::F32, false);
  r.h2d_strided_bytes_per_second = r.h2d_bytes_per_second;  // every block at one rate
  const double block = 4096.0 * 8192 * 4, tile = 4096.0 * 4096 * 4;
  const double half = block / r.h2d_bytes_per_second, down = tile / r.d2h_bytes_per_second;
  for (const bool trans_a : {false, true})
    for (const bool trans_b : {false, true}) {
      OutOfCoreShape s = square(8192);
      s.trans_a = trans_a;
      s.trans_b = trans_b;
      EXPECT_EQ(ramp_cuts_a(s), trans_a);
      EXPECT_EQ(ramp_cuts_b(s), !trans_b);
      const bool cut = trans_a || !trans_b;
      const double cut_up = (trans_a ? half : 0.0) + (trans_b ? 0.0 : half), whole_up = 2 * half - cut_up;
      for (const double flops : {1e12, 1e15}) {  // blocks slower than the product, and faster
        SCOPED_TRACE(::testing::Message() << "trans " << trans_a << trans_b << " flops " << flops);
        r.flops_per_second = flops;
        OutOfCorePlan p;
        p.tile_m = p.tile_n = 4096;
        p.tile_k = 8192;
        p.a_resident = true;
        model_out_of_core(s, r, p);
        const auto seconds = [&](std::int64_t rows, std::int64_t depth) {
          return 2.0 * static_cast<double>(rows * 4096 * depth) /
                 (flops * block_efficiency(rows, 4096, depth, r.multiprocessors, r.tile_overhead_k));
        };
        const double whole = seconds(4096, 8192), last = 4 * seconds(1024, 8192);
        const double first = cut ? 4 * seconds(4096, 2048) : whole;
        if (cut) {
          EXPECT_GT(first, whole * 1.01);
        }
        EXPECT_GT(last, whole * 1.01);
        const double busy = std::max({p.compute_seconds, p.h2d_seconds, p.d2h_seconds});
        const double ramp = std::max(0.0, p.compute_seconds + (first - whole) + (last - whole) - busy);
        const double fill = whole_up + (cut ? std::max(cut_up / 4, cut_up - first * 3 / 4) : 0.0) +
                            std::max(down / 4, down - last * 3 / 4) + ramp;
        EXPECT_NEAR(p.fill_seconds, fill, 1e-9 * p.fill_seconds);
        // Both blocks cut (A under T, B under N): a quarter of both up, or all but the pieces'
        // share; neither cut: both blocks whole before the first product.
        if (trans_a && !trans_b) {
          const double expected = flops < 1e13 ? (2 * half + down) / 4 + first + last - 2 * whole
                                               : 2 * half + down - (first + last) * 3 / 4;
          EXPECT_NEAR(p.fill_seconds, expected, 1e-9 * p.fill_seconds);
        }
        if (!cut) {
          EXPECT_GE(p.fill_seconds, 2 * half);
        }
      }
    }
}

TEST(OutOfCorePlan, NoDownloadStartsBeforeTheFirstTileIsFinal) {
  // bf16 32768^3 in rows of tiles as wide as C, B resident: the first tile needs A's block and
  // all of B up, then its product; only then can the 4.3 GB of C start coming down. Here that
  // path is longer than the fill plus the longest stream, so it is the model's time.
  const OutOfCoreShape s = square(32768, 2);
  OutOfCoreRates r = nominal_rates(DType::BF16, DType::F32, true);
  r.flops_per_second = 700e12;
  r.h2d_bytes_per_second = r.d2h_bytes_per_second = 50e9;
  OutOfCorePlan p;
  p.tile_m = 11008;
  p.tile_n = p.tile_k = 32768;
  p.b_resident = true;
  model_out_of_core(s, r, p);
  const double a_block = 11008.0 * 32768 * 2 / 50e9, b_all = 32768.0 * 32768 * 2 / 50e9;
  EXPECT_GT(p.first_tile_seconds, a_block + b_all);  // both up, and the last piece multiplied
  const double streams = p.fill_seconds + std::max({p.compute_seconds, p.h2d_seconds, p.d2h_seconds});
  EXPECT_GT(p.first_tile_seconds + p.d2h_seconds, streams);
  EXPECT_DOUBLE_EQ(p.model_seconds, p.first_tile_seconds + p.d2h_seconds);
  EXPECT_DOUBLE_EQ(out_of_core_model_seconds(p), p.model_seconds);
  // A slower measured block rate lengthens the first tile by its share of the compute.
  const OutOfCorePlan before = p;
  set_out_of_core_compute(p, 2 * before.compute_seconds);
  EXPECT_NEAR(p.first_tile_seconds, before.first_tile_seconds + before.compute_seconds / 3, 1e-12);
  EXPECT_DOUBLE_EQ(p.model_seconds, out_of_core_model_seconds(p));
  EXPECT_GE(p.model_seconds, p.fill_seconds + p.compute_seconds);
  // The choice ranks that path: its plan's first tile and downloads are no longer than these.
  OutOfCorePlan chosen;
  ASSERT_TRUE(choose_out_of_core_tiles(s, 60ull << 30, r, {}, 0, 0, 0, chosen).is_ok());
  EXPECT_LE(out_of_core_rank(s, chosen), out_of_core_rank(s, before)) << chosen.describe();
  EXPECT_LE(chosen.first_tile_seconds, before.first_tile_seconds) << chosen.describe();
}

TEST(OutOfCorePlan, TheWorkspaceCountsAgainstTheLimit) {
  const OutOfCoreShape s = square(8192);
  const OutOfCoreRates rates = nominal_rates(DType::F32, DType::F32, true);
  const WorkspaceBound workspace = [](std::int64_t m, std::int64_t n, std::int64_t k) {
    return static_cast<std::uint64_t>((m + n) * k) * 8;
  };
  OutOfCorePlan p;
  ASSERT_TRUE(choose_out_of_core_tiles(s, 512u << 20, rates, workspace, 0, 0, 0, p).is_ok());
  EXPECT_EQ(p.workspace_bytes, static_cast<std::uint64_t>((p.tile_m + p.tile_n) * p.tile_k) * 8);
  EXPECT_EQ(p.device_bytes, tile_buffer_bytes(s, p.tile_m, p.tile_n, p.tile_k) + p.workspace_bytes);
  EXPECT_LE(p.device_bytes, 512u << 20);
}

TEST(OutOfCorePlan, AWorkspaceCountedForCopiesNeverMadeKeepsBlocksThinInK) {
  // bf16 32768^3 within a quarter of it (2 GiB). A rung that copies nothing for aligned
  // blocks and keeps 35 MB of stream-K partials leaves room for blocks with all of K, one
  // operand resident; a bound that counts every operand copied at 4 bytes an element takes
  // 1.36 GB of the limit for such blocks, and the plan falls back to thin blocks of K.
  const OutOfCoreShape s = square(32768, 2);
  OutOfCoreRates rates = nominal_rates(DType::BF16, DType::F32, true);
  rates.multiprocessors = 132;
  const std::uint64_t limit = std::uint64_t{2} << 30;
  const WorkspaceBound exact = [](std::int64_t, std::int64_t, std::int64_t) { return std::uint64_t{35} << 20; };
  const WorkspaceBound size_only = [](std::int64_t m, std::int64_t n, std::int64_t k) {
    return static_cast<std::uint64_t>((m + 64 + n + 64) * (k + 64)) * 4;
  };
  OutOfCorePlan counted, bounded;
  ASSERT_TRUE(choose_out_of_core_tiles(s, limit, rates, exact, 0, 0, 0, counted).is_ok());
  ASSERT_TRUE(choose_out_of_core_tiles(s, limit, rates, size_only, 0, 0, 0, bounded).is_ok());
  EXPECT_EQ(counted.blocks_k, 1) << counted.describe();
  EXPECT_TRUE(counted.a_resident || counted.b_resident) << counted.describe();
  EXPECT_GT(bounded.blocks_k, 1) << bounded.describe();
  EXPECT_LT(counted.model_seconds, bounded.model_seconds) << counted.describe() << " | " << bounded.describe();
}

TEST(OutOfCorePlan, ALimitBelowOneStepIsRefusedNamingTheBytes) {
  OutOfCorePlan p;
  const Status s = choose_out_of_core_tiles(square(8192), 1000, nominal_rates(DType::F32, DType::F32, false), {}, 0,
                                            0, 0, p);
  ASSERT_EQ(s.code(), StatusCode::InvalidValue);
  EXPECT_TRUE(contains(s.message(), "limit of 0.000 GB"));
  EXPECT_TRUE(contains(s.message(), "smallest needs"));
  EXPECT_TRUE(contains(s.message(), "--device-memory-limit"));
}

TEST(OutOfCorePlan, SmallDimensionsAreOneTile) {
  const OutOfCoreShape s{1, 100000, 3, false, false, 4, 4, false};
  OutOfCorePlan p;
  ASSERT_TRUE(choose_out_of_core_tiles(s, 64u << 20, nominal_rates(DType::F32, DType::F32, false), {}, 0, 0, 0, p)
                  .is_ok());
  EXPECT_EQ(p.tile_m, 1);
  EXPECT_EQ(p.tile_k, 3);
  EXPECT_TRUE(p.a_resident || p.b_resident);
}

}  // namespace
}  // namespace gemmlab
