// The distributed GEMM's decomposition, panel schedules and model, without a GPU: balanced
// ranges cover each extent once, grids multiply to P with the most square blocks of C, panels
// tile K with one owner each and are cut where ownership changes, the bytes and times the model
// counts (local panels first, two receive buffers, C re-read by every product after the first)
// match cases worked by hand, the panel width chosen fits its memory and beats the others, and
// every refusal names the value at fault.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <ostream>
#include <utility>
#include <vector>

#include "gemmlab/distributed.hpp"
#include "gemmlab/distribution.hpp"
#include "core/out_of_core_plan.hpp"
#include "support/assertions.hpp"

namespace gemmlab {

// Readable failures.
void PrintTo(const Range& r, std::ostream* os) { *os << "[" << r.first << ", " << r.end() << ")"; }
void PrintTo(const ProcessGrid& g, std::ostream* os) { *os << g.rows << "x" << g.cols; }
void PrintTo(const Panel& p, std::ostream* os) {
  PrintTo(p.k, os);
  *os << " A from column " << p.a_root << ", B from row " << p.b_root;
}

namespace {

using testing::contains;

// Every part of the cut, in order.
std::vector<Range> all_parts(std::int64_t extent, int parts) {
  std::vector<Range> out;
  for (int i = 0; i < parts; ++i) out.push_back(block_range(extent, parts, i));
  return out;
}

ProcessGrid grid_for(int gpus, std::int64_t m, std::int64_t n) {
  ProcessGrid grid{0, 0};
  const Status status = process_grid(gpus, m, n, grid);
  EXPECT_TRUE(status.is_ok()) << status.describe();
  return grid;
}

std::vector<Panel> panels_for(std::int64_t k, std::int64_t kb, ProcessGrid grid) {
  std::vector<Panel> panels;
  const Status status = summa_panels(k, kb, grid, panels);
  EXPECT_TRUE(status.is_ok()) << status.describe();
  return panels;
}

// The panels tile [0, k) in order, none wider than kb, and each lies inside one block of A's K
// (grid columns) and one of B's (grid rows), those of its roots; a cut only where needed:
// consecutive panels with the same roots are as balanced as the run they split.
void expect_valid_schedule(const std::vector<Panel>& panels, std::int64_t k, std::int64_t kb, ProcessGrid grid) {
  std::int64_t next = 0;
  for (const Panel& p : panels) {
    SCOPED_TRACE(::testing::Message() << "panel [" << p.k.first << ", " << p.k.end() << ")");
    EXPECT_EQ(p.k.first, next);
    EXPECT_GE(p.k.count, 1);
    EXPECT_LE(p.k.count, kb);
    const Range a_block = block_range(k, grid.cols, p.a_root), b_block = block_range(k, grid.rows, p.b_root);
    EXPECT_GE(p.k.first, a_block.first);
    EXPECT_LE(p.k.end(), a_block.end());
    EXPECT_GE(p.k.first, b_block.first);
    EXPECT_LE(p.k.end(), b_block.end());
    next = p.k.end();
  }
  EXPECT_EQ(next, k);
}

TEST(Distribution, BlockRangesCoverTheExtentOnceAndAreBalanced) {
  EXPECT_EQ(all_parts(10, 3), (std::vector<Range>{{0, 4}, {4, 3}, {7, 3}}));
  EXPECT_EQ(all_parts(2, 4), (std::vector<Range>{{0, 1}, {1, 1}, {2, 0}, {2, 0}}));
  for (const std::int64_t extent : {0, 1, 7, 4097, 16383, 16384, 16385})
    for (const int parts : {1, 2, 3, 7, 8}) {
      SCOPED_TRACE(::testing::Message() << extent << " in " << parts);
      std::int64_t next = 0;
      for (int i = 0; i < parts; ++i) {
        const Range r = block_range(extent, parts, i);
        EXPECT_EQ(r.first, next);
        // The first extent % parts parts hold one more than the rest.
        EXPECT_EQ(r.count, extent / parts + (i < extent % parts ? 1 : 0));
        // Each index of the part (its ends suffice: parts are runs) is owned by it.
        if (r.count > 0) {
          EXPECT_EQ(block_owner(extent, parts, r.first), i);
          EXPECT_EQ(block_owner(extent, parts, r.end() - 1), i);
        }
        next = r.end();
      }
      EXPECT_EQ(next, extent);
    }
}

TEST(Distribution, DecompositionNamesRoundTrip) {
  for (const Decomposition d : {Decomposition::RowBlocks, Decomposition::Summa})
    EXPECT_EQ(parse_decomposition(to_string(d)), d);
  EXPECT_EQ(to_string(Decomposition::RowBlocks), "rows");
  EXPECT_EQ(to_string(Decomposition::Summa), "summa");
  EXPECT_FALSE(parse_decomposition("2d").has_value());
  EXPECT_FALSE(parse_decomposition("").has_value());
}

TEST(Distribution, PanelTransportNamesRoundTrip) {
  for (const PanelTransport t : {PanelTransport::CopyEngines, PanelTransport::Broadcasts})
    EXPECT_EQ(parse_panel_transport(to_string(t)), t);
  EXPECT_EQ(to_string(PanelTransport::CopyEngines), "copy-engines");
  EXPECT_EQ(to_string(PanelTransport::Broadcasts), "broadcasts");
  EXPECT_FALSE(parse_panel_transport("ce").has_value());
  EXPECT_FALSE(parse_panel_transport("").has_value());
}

TEST(Distribution, CutNamesRoundTrip) {
  for (const DistributedCut c : {DistributedCut::KPanels, DistributedCut::Slices, DistributedCut::Stripe})
    EXPECT_EQ(parse_cut(to_string(c)), c);
  EXPECT_EQ(to_string(DistributedCut::Slices), "slices");
  EXPECT_EQ(to_string(DistributedCut::Stripe), "stripe");
  EXPECT_FALSE(parse_cut("columns").has_value());
}

TEST(DistributionGrid, OneGpuIsOneByOne) {
  EXPECT_EQ(grid_for(1, 16384, 16384), (ProcessGrid{1, 1}));
  EXPECT_EQ(grid_for(1, 1, 1), (ProcessGrid{1, 1}));
}

TEST(DistributionGrid, SquareBlocksOfCAndTiesToMoreRows) {
  // Square C: 2 GPUs tie (8192 + 16384 either way), more rows wins; 4 and 8 split both ways.
  EXPECT_EQ(grid_for(2, 16384, 16384), (ProcessGrid{2, 1}));
  EXPECT_EQ(grid_for(4, 16384, 16384), (ProcessGrid{2, 2}));
  EXPECT_EQ(grid_for(6, 16384, 16384), (ProcessGrid{3, 2}));
  EXPECT_EQ(grid_for(8, 16384, 16384), (ProcessGrid{4, 2}));
  EXPECT_EQ(grid_for(16, 16384, 16384), (ProcessGrid{4, 4}));
  // Twice as tall as wide: 3x2 gives blocks 10923 x 8192 (sum 19115); 2x3 16384 x 5462 and
  // 6x1 5462 x 16384 (21846 each). Twice as wide: the transpose.
  EXPECT_EQ(grid_for(6, 32768, 16384), (ProcessGrid{3, 2}));
  EXPECT_EQ(grid_for(6, 16384, 32768), (ProcessGrid{2, 3}));
  // Six times as tall: row blocks are square.
  EXPECT_EQ(grid_for(6, 6 * 8192, 8192), (ProcessGrid{6, 1}));
  // Primes go along the longer side.
  EXPECT_EQ(grid_for(7, 20000, 10000), (ProcessGrid{7, 1}));
  EXPECT_EQ(grid_for(7, 10000, 20000), (ProcessGrid{1, 7}));
  EXPECT_EQ(grid_for(5, 16384, 16384), (ProcessGrid{5, 1}));
}

TEST(DistributionGrid, GridsMultiplyToTheGpusAndNoOtherHoldsLess) {
  for (const auto& [m, n] : {std::pair<std::int64_t, std::int64_t>{16384, 16384}, {40000, 3000}, {3000, 40000},
                             {16383, 16385}, {5, 1000}})
    for (int gpus = 1; gpus <= 16; ++gpus) {
      SCOPED_TRACE(::testing::Message() << gpus << " GPUs, " << m << " x " << n);
      const ProcessGrid g = grid_for(gpus, m, n);
      EXPECT_EQ(g.rows * g.cols, gpus);
      EXPECT_LE(g.rows, m);
      const auto held = [&](int rows, int cols) { return (m + rows - 1) / rows + (n + cols - 1) / cols; };
      for (int rows = 1; rows <= gpus; ++rows)
        if (gpus % rows == 0 && rows <= m && gpus / rows <= n) {
          EXPECT_LE(held(g.rows, g.cols), held(rows, gpus / rows)) << rows;
        }
    }
}

TEST(DistributionGrid, TooManyGpusForTheBlocksOfCAreRefusedByName) {
  ProcessGrid g;
  // 5 GPUs: 5x1 needs 5 rows, 1x5 five columns; C has 3 and 4.
  Status status = process_grid(5, 3, 4, g);
  EXPECT_EQ(status.code(), StatusCode::InvalidValue);
  EXPECT_TRUE(contains(status.message(), "5 GPUs cannot each hold a block of C (3x4)"));
  // 6 GPUs fit 3 x 4 as 3x2 or 2x3.
  EXPECT_TRUE(process_grid(6, 3, 4, g).is_ok());
  EXPECT_EQ(g, (ProcessGrid{3, 2}));
  status = process_grid(0, 100, 100, g);
  EXPECT_TRUE(contains(status.message(), "number of GPUs (0)"));
  status = process_grid(2, 0, 100, g);
  EXPECT_TRUE(contains(status.message(), "m (0)"));
  status = process_grid(2, 100, -3, g);
  EXPECT_TRUE(contains(status.message(), "n (-3)"));
  // Row blocks need a row of C per GPU; SUMMA on the same C finds a grid.
  status = decomposition_grid(Decomposition::RowBlocks, 8, 5, 1000, g);
  EXPECT_EQ(status.code(), StatusCode::InvalidValue);
  EXPECT_TRUE(contains(status.message(), "m >= 8 (m = 5)"));
  // (1x8 holds blocks of 5 x 125, 2x4 of 3 x 250.)
  EXPECT_TRUE(decomposition_grid(Decomposition::Summa, 8, 5, 1000, g).is_ok());
  EXPECT_EQ(g, (ProcessGrid{1, 8}));
  EXPECT_TRUE(decomposition_grid(Decomposition::RowBlocks, 8, 16384, 16384, g).is_ok());
  EXPECT_EQ(g, (ProcessGrid{8, 1}));
}

TEST(DistributionPanels, CutWhereOwnershipChangesThenBalanced) {
  // 2x2 grid, K = 4097: A's K over the 2 columns and B's over the 2 rows both end a block at
  // 2049. The run [0, 2049) takes 3 panels of 683, the run [2049, 4097) 2 of 1024.
  EXPECT_EQ(panels_for(4097, 1024, {2, 2}),
            (std::vector<Panel>{{{0, 683}, 0, 0}, {{683, 683}, 0, 0}, {{1366, 683}, 0, 0},
                                {{2049, 1024}, 1, 1}, {{3073, 1024}, 1, 1}}));
  // 3x2 grid, K = 1000: A's K ends blocks at 500 (columns), B's at 334 and 667 (rows): runs
  // [0, 334) (A 0, B 0), [334, 500) (0, 1), [500, 667) (1, 1), [667, 1000) (1, 2).
  EXPECT_EQ(panels_for(1000, 300, {3, 2}),
            (std::vector<Panel>{{{0, 167}, 0, 0}, {{167, 167}, 0, 0}, {{334, 166}, 0, 1}, {{500, 167}, 1, 1},
                                {{667, 167}, 1, 2}, {{834, 166}, 1, 2}}));
}

TEST(DistributionPanels, EveryPanelHasOneOwnerAndTheyTileK) {
  for (const ProcessGrid grid : {ProcessGrid{1, 1}, ProcessGrid{2, 1}, ProcessGrid{2, 2}, ProcessGrid{3, 2},
                                 ProcessGrid{1, 7}, ProcessGrid{4, 4}})
    for (const std::int64_t k : {1, 2, 5, 255, 4097, 16385})
      for (const std::int64_t kb : {1, 7, 256, 1000, 100000}) {
        SCOPED_TRACE(::testing::Message() << grid.rows << "x" << grid.cols << " k " << k << " kb " << kb);
        expect_valid_schedule(panels_for(k, kb, grid), k, kb, grid);
      }
}

TEST(DistributionPanels, RowBlocksBroadcastBFromTheGpuHoldingItsRows) {
  // B's 10 rows over 3 GPUs: [0, 4), [4, 7), [7, 10); A (grid column 0) never moves.
  std::vector<Panel> panels;
  ASSERT_TRUE(row_block_panels(10, 4, 3, panels).is_ok());
  EXPECT_EQ(panels, (std::vector<Panel>{{{0, 4}, 0, 0}, {{4, 3}, 0, 1}, {{7, 3}, 0, 2}}));
  ASSERT_TRUE(row_block_panels(10, 2, 3, panels).is_ok());
  EXPECT_EQ(panels, (std::vector<Panel>{{{0, 2}, 0, 0}, {{2, 2}, 0, 0}, {{4, 2}, 0, 1}, {{6, 1}, 0, 1},
                                        {{7, 2}, 0, 2}, {{9, 1}, 0, 2}}));
}

TEST(DistributionPanels, OddSizesKOfOneAndOneGpu) {
  // One GPU: every panel is its own; K = 4097 in panels of at most 1024 is 5 of 820 or 819.
  EXPECT_EQ(panels_for(4097, 1024, {1, 1}),
            (std::vector<Panel>{{{0, 820}, 0, 0}, {{820, 820}, 0, 0}, {{1640, 819}, 0, 0}, {{2459, 819}, 0, 0},
                                {{3278, 819}, 0, 0}}));
  // K = 1 on 2x2: one panel, held by grid column 0 and grid row 0; the others hold no K.
  EXPECT_EQ(panels_for(1, 64, {2, 2}), (std::vector<Panel>{{{0, 1}, 0, 0}}));
  const LocalBlocks last = local_blocks(16383, 16385, 1, {2, 2}, 3);
  EXPECT_EQ(last.rows, (Range{8192, 8191}));
  EXPECT_EQ(last.cols, (Range{8193, 8192}));
  EXPECT_EQ(last.a_k, (Range{1, 0}));
  EXPECT_EQ(last.b_k, (Range{1, 0}));
  // K = 0: nothing to broadcast.
  EXPECT_TRUE(panels_for(0, 64, {2, 2}).empty());

  // 16383 x 16385 x 4097 on one GPU: nothing moves, the model is the product alone.
  const DistributedShape odd{16383, 16385, 4097, 2};
  const DistributedRates rates{1e14, 0, 1e-5, 132};
  DistributedPlan plan;
  ASSERT_TRUE(plan_distribution(odd, Decomposition::Summa, 1, 1024, rates, plan).is_ok());
  EXPECT_EQ(plan.grid, (ProcessGrid{1, 1}));
  EXPECT_EQ(plan.panels.size(), 5u);
  EXPECT_EQ(plan.panel_buffer_bytes, 0u);
  EXPECT_DOUBLE_EQ(plan.model.flops_per_gpu_max, 2.0 * 16383 * 16385 * 4097);
  EXPECT_EQ(plan.model.bytes_received_total, 0.0);
  EXPECT_EQ(plan.model.comm_seconds, 0.0);
  EXPECT_DOUBLE_EQ(plan.model.model_seconds, plan.model.compute_seconds);
  EXPECT_GT(plan.model.compute_seconds, 2.0 * 16383 * 16385 * 4097 / 1e14);
}

// m = n = 2048, k = 256, 2-byte elements on a 2x2 grid with panels of 128: blocks of C
// 1024 x 1024; panel [0, 128) is rooted at grid column 0 and row 0, panel [128, 256) at
// column 1 and row 1. A panel of A or B is 1024 x 128 x 2 = 262144 bytes.
constexpr double kPanelOperandBytes = 1024.0 * 128 * 2;
const DistributedShape kWorkedShape{2048, 2048, 256, 2};
// 64 SMs hold the 8 x 8 tiles of 128 x 128 in one wave: block_efficiency is 1 / 1.2 for the
// wave (a fifth lost to the ramp) times 128 / (128 + 128) for the thin K: 1 / 2.4.
constexpr double kWorkedEfficiency = 1.0 / 2.4;
// One panel's product on a worked GPU (644 us), and the second's re-read of the 1024 x 1024
// block of 4-byte C at the nominal 3 TB/s (2.8 us).
constexpr double kWorkedProduct = 2.0 * 1024 * 1024 * 128 / (1e12 * kWorkedEfficiency);
constexpr double kWorkedCPass = 1024.0 * 1024 * 4 * 2 / 3e12;

TEST(DistributionModel, BytesAndTimesOfAWorkedCase) {
  ASSERT_DOUBLE_EQ(block_efficiency(1024, 1024, 128, 64), kWorkedEfficiency);
  const DistributedRates rates{1e12, 1e11, 1e-5, 64};
  DistributedPlan plan;
  ASSERT_TRUE(plan_distribution(kWorkedShape, Decomposition::Summa, 4, 128, rates, plan).is_ok());
  ASSERT_EQ(plan.grid, (ProcessGrid{2, 2}));
  ASSERT_EQ(plan.panels, (std::vector<Panel>{{{0, 128}, 0, 0}, {{128, 128}, 1, 1}}));
  const DistributedModel& m = plan.model;
  // GPU (0,0) receives both operands of panel 1, GPU (1,1) both of panel 0, GPUs (0,1) and
  // (1,0) one operand of each: two panels' worth of bytes each, eight in all.
  EXPECT_DOUBLE_EQ(m.bytes_received_per_gpu_max, 2 * kPanelOperandBytes);
  EXPECT_DOUBLE_EQ(m.panel_bytes_received_max, 2 * kPanelOperandBytes);
  EXPECT_DOUBLE_EQ(m.bytes_received_total, 8 * kPanelOperandBytes);
  EXPECT_DOUBLE_EQ(m.flops_per_gpu_max, 2.0 * 1024 * 1024 * 256);
  const double compute = 2 * kWorkedProduct + kWorkedCPass;  // 1.291 ms
  EXPECT_DOUBLE_EQ(m.compute_seconds, compute);
  // Each GPU: two broadcasts of 10 us and 524288 bytes at 100 GB/s.
  EXPECT_DOUBLE_EQ(m.comm_seconds, 2e-5 + 2 * kPanelOperandBytes / 1e11);
  // GPUs (0,0) and (1,1) multiply their own panel while the other arrives: no wait. GPUs (0,1)
  // and (1,0) have no local panel: they wait for one operand of the first, then the second has
  // arrived before the first product ends.
  const double fill = 1e-5 + kPanelOperandBytes / 1e11;
  EXPECT_DOUBLE_EQ(m.fill_seconds, fill);
  EXPECT_DOUBLE_EQ(m.wait_seconds, fill);
  EXPECT_DOUBLE_EQ(m.model_seconds, fill + compute);
  EXPECT_EQ(plan.panel_buffer_bytes, 3u * (1024 + 1024) * 128 * 2);
  EXPECT_TRUE(contains(plan.describe(), "summa on a 2x2 grid: 2 panels of K at most 128 wide"));
}

TEST(DistributionModel, OnASlowLinkTheLastBroadcastIsNeverHidden) {
  // At 100 MB/s the broadcasts outlast the products. GPU (0,0) multiplies its own first panel,
  // then waits for both operands of the second, whose broadcast its comm stream starts after
  // the first's 10 us. GPUs (0,1) and (1,0) receive one operand of each panel: the second has
  // arrived at the same time. So all three end one product (and a C re-read) after their whole
  // comm stream. GPU (1,1) multiplies its own second panel while the first arrives, and ends
  // first.
  const DistributedRates rates{1e12, 1e8, 1e-5, 64};
  DistributedPlan plan;
  ASSERT_TRUE(plan_distribution(kWorkedShape, Decomposition::Summa, 4, 128, rates, plan).is_ok());
  const double comm = 2e-5 + 2 * kPanelOperandBytes / 1e8;  // 5.26 ms
  EXPECT_DOUBLE_EQ(plan.model.comm_seconds, comm);
  EXPECT_DOUBLE_EQ(plan.model.compute_seconds, 2 * kWorkedProduct + kWorkedCPass);
  EXPECT_DOUBLE_EQ(plan.model.fill_seconds, 1e-5 + kPanelOperandBytes / 1e8);
  EXPECT_NEAR(plan.model.wait_seconds, comm - kWorkedProduct, 1e-15);
  EXPECT_DOUBLE_EQ(plan.model.model_seconds, comm + kWorkedProduct + kWorkedCPass);
}

TEST(DistributionModel, EachLocalHalfHidesTheOtherHalfsBroadcast) {
  // 2048 x 2048 x 256 on 2 GPUs in row blocks: each holds 1024 rows of C and 128 rows of B,
  // panel 0 is GPU 0's, panel 1 GPU 1's. Each GPU multiplies its own half (1.29 ms) while the
  // other's 128 x 2048 x 2 bytes arrive (25 us, its own broadcast's 10 us included): it never
  // waits, and its model is its two products and one re-read of its 1024 x 2048 block of C.
  const DistributedShape s{2048, 2048, 256, 2};
  const DistributedRates rates{1e12, 1e11, 1e-5, 128};
  ASSERT_DOUBLE_EQ(block_efficiency(1024, 2048, 128, 128), 1.0 / 2.4);
  DistributedPlan plan;
  ASSERT_TRUE(plan_distribution(s, Decomposition::RowBlocks, 2, 128, rates, plan).is_ok());
  ASSERT_EQ(plan.grid, (ProcessGrid{2, 1}));
  ASSERT_EQ(plan.panels, (std::vector<Panel>{{{0, 128}, 0, 0}, {{128, 128}, 0, 1}}));
  const double product = 2.0 * 1024 * 2048 * 128 * 2.4 / 1e12;
  const double c_pass = 1024.0 * 2048 * 4 * 2 / 3e12;
  const double half = 128.0 * 2048 * 2;
  EXPECT_DOUBLE_EQ(plan.model.bytes_received_per_gpu_max, half);
  EXPECT_DOUBLE_EQ(plan.model.comm_seconds, 2e-5 + half / 1e11);
  EXPECT_DOUBLE_EQ(plan.model.compute_seconds, 2 * product + c_pass);
  EXPECT_EQ(plan.model.fill_seconds, 0.0);
  EXPECT_EQ(plan.model.wait_seconds, 0.0);
  EXPECT_DOUBLE_EQ(plan.model.model_seconds, 2 * product + c_pass);
}

TEST(DistributionModel, TheSecondReceiveBufferMakesAGpuWait) {
  // 2048 x 2048 x 768 on 2 GPUs in row blocks, panels of 128: GPU 0 roots panels 0-2, GPU 1
  // panels 3-5. Each panel's product P = 1.29 ms (plus c = 5.6 us re-reading C after the
  // first), each received panel C = 10 us + 524288 bytes at 250 MB/s = 2.11 ms.
  // GPU 1 multiplies its panels 3-5 until 3P + 2c = 3.88 ms; panels 0 and 1 arrive at C and
  // 2C into the two buffers; panel 0's product ends at 4P + 3c, panel 1's at 5P + 4c. Panel
  // 2's receive must wait for panel 0's buffer, until 4P + 3c, and arrives C later: the GPU
  // sits idle C - P - c = 0.81 ms. With a third buffer it would have arrived at 3C = 6.32 ms,
  // before panel 1's product ends (6.46 ms). GPU 0 is the mirror image (its comm stream first
  // spends 3 x 10 us on its own panels' broadcasts, which moves nothing that matters).
  const DistributedShape s{2048, 2048, 768, 2};
  const DistributedRates rates{1e12, 2.5e8, 1e-5, 128};
  DistributedPlan plan;
  ASSERT_TRUE(plan_distribution(s, Decomposition::RowBlocks, 2, 128, rates, plan).is_ok());
  ASSERT_EQ(plan.panels, (std::vector<Panel>{{{0, 128}, 0, 0}, {{128, 128}, 0, 0}, {{256, 128}, 0, 0},
                                             {{384, 128}, 0, 1}, {{512, 128}, 0, 1}, {{640, 128}, 0, 1}}));
  const double product = 2.0 * 1024 * 2048 * 128 * 2.4 / 1e12;
  const double c_pass = 1024.0 * 2048 * 4 * 2 / 3e12;
  const double receive = 1e-5 + 128.0 * 2048 * 2 / 2.5e8;
  EXPECT_DOUBLE_EQ(plan.model.comm_seconds, 3 * receive + 3e-5);
  EXPECT_DOUBLE_EQ(plan.model.compute_seconds, 6 * product + 5 * c_pass);
  EXPECT_EQ(plan.model.fill_seconds, 0.0);
  EXPECT_NEAR(plan.model.wait_seconds, receive - product - c_pass, 1e-15);
  EXPECT_NEAR(plan.model.wait_seconds, 0.81306940e-3, 1e-11);
  EXPECT_DOUBLE_EQ(plan.model.model_seconds, 5 * product + 4 * c_pass + receive);
}

TEST(DistributionModel, OutputBytesAndDramRateChangeOnlyTheReReadsOfC) {
  // One GPU, 2048 x 2048 x 1024 in 4 panels: 3 products re-read C. 8-byte C at 1 TB/s instead
  // of 4-byte C at the nominal 3 TB/s adds 3 x 2048 x 2048 x (8 x 2 / 1e12 - 4 x 2 / 3e12).
  const DistributedShape base{2048, 2048, 1024, 2};
  const DistributedRates nominal{1e12, 0, 0, 132};
  DistributedPlan a, b, c;
  ASSERT_TRUE(plan_distribution(base, Decomposition::Summa, 1, 256, nominal, a).is_ok());
  ASSERT_EQ(a.panels.size(), 4u);
  DistributedRates explicit_rate = nominal;
  explicit_rate.device_bytes_per_second = 3e12;
  ASSERT_TRUE(plan_distribution(base, Decomposition::Summa, 1, 256, explicit_rate, b).is_ok());
  EXPECT_DOUBLE_EQ(b.model.compute_seconds, a.model.compute_seconds);
  DistributedShape wide = base;
  wide.output_bytes = 8;
  DistributedRates slow = nominal;
  slow.device_bytes_per_second = 1e12;
  ASSERT_TRUE(plan_distribution(wide, Decomposition::Summa, 1, 256, slow, c).is_ok());
  const double extra = 3 * 2048.0 * 2048 * (8.0 * 2 / 1e12 - 4.0 * 2 / 3e12);  // 168 us
  EXPECT_NEAR(c.model.compute_seconds - a.model.compute_seconds, extra, 1e-15);
  EXPECT_NEAR(c.model.model_seconds - a.model.model_seconds, extra, 1e-15);
  // Nothing else moves.
  EXPECT_EQ(c.model.comm_seconds, 0.0);
  EXPECT_EQ(c.model.wait_seconds, 0.0);
  EXPECT_EQ(c.panel_buffer_bytes, a.panel_buffer_bytes);

  // On the worked 2x2 grid each GPU re-reads its 1024 x 1024 block once.
  DistributedShape worked_wide = kWorkedShape;
  worked_wide.output_bytes = 2;
  DistributedRates worked_rates{1e12, 1e11, 1e-5, 64};
  worked_rates.device_bytes_per_second = 1e12;
  DistributedPlan d;
  ASSERT_TRUE(plan_distribution(worked_wide, Decomposition::Summa, 4, 128, worked_rates, d).is_ok());
  EXPECT_DOUBLE_EQ(d.model.compute_seconds, 2 * kWorkedProduct + 1024.0 * 1024 * 2 * 2 / 1e12);
}

TEST(DistributionModel, PanelsOfKPayTheRungsCostPerTile) {
  // One GPU, 2048 x 2048 x 1024 in 4 panels of 256: each product runs at 256 / (256 + k0) of
  // the rate (with the waves), so a tensor-core rung's k0 of 2,500 makes the panels cost far more
  // than the nominal 128 does, while one panel of all of K pays it once.
  const DistributedShape s{2048, 2048, 1024, 2};
  DistributedRates rates{1e12, 0, 0, 132};
  rates.tile_overhead_k = 2500;
  DistributedPlan quarters, whole, nominal;
  ASSERT_TRUE(plan_distribution(s, Decomposition::Summa, 1, 256, rates, quarters).is_ok());
  ASSERT_TRUE(plan_distribution(s, Decomposition::Summa, 1, 1024, rates, whole).is_ok());
  const double c_pass = 2048.0 * 2048 * 4 * 2 / 3e12;  // each product after the first
  const double product = 2.0 * 2048 * 2048 * 256 / (1e12 * block_efficiency(2048, 2048, 256, 132, 2500));
  EXPECT_DOUBLE_EQ(quarters.model.compute_seconds, 4 * product + 3 * c_pass);
  EXPECT_DOUBLE_EQ(whole.model.compute_seconds,
                   2.0 * 2048 * 2048 * 1024 / (1e12 * block_efficiency(2048, 2048, 1024, 132, 2500)));
  EXPECT_GT(quarters.model.compute_seconds, 2.5 * whole.model.compute_seconds);
  rates.tile_overhead_k = 0;  // the nominal 128
  ASSERT_TRUE(plan_distribution(s, Decomposition::Summa, 1, 256, rates, nominal).is_ok());
  EXPECT_DOUBLE_EQ(nominal.model.compute_seconds,
                   4 * 2.0 * 2048 * 2048 * 256 / (1e12 * block_efficiency(2048, 2048, 256, 132)) + 3 * c_pass);
  EXPECT_LT(nominal.model.compute_seconds, 0.5 * quarters.model.compute_seconds);
}

TEST(DistributionModel, PanelBuffersAreThreeOfEachMovingOperandOrTheRoundsSlots) {
  // Two to receive into, one where a root packs its panel: 3 x (A's rows + B's columns) x the
  // widest panel, of the largest block (the first of a balanced cut). Where one operand moves
  // among P GPUs, the copy engines' rounds hold 2 x P panels if that is more.
  // 3x2 grid, m = 1000, n = 999, k = 1000, kb = 300: widest panel 167, blocks up to 334 x 500.
  const DistributedShape s{1000, 999, 1000};
  const std::vector<Panel> panels = panels_for(1000, 300, {3, 2});
  EXPECT_EQ(panel_buffer_bytes(s, {3, 2}, panels), 3u * (334 + 500) * 167 * 4);
  // 1x2 grid: only A moves (B's rows of K stay with their grid column); panels of 64.
  EXPECT_EQ(panel_buffer_bytes(kWorkedShape, {1, 2}, panels_for(256, 100, {1, 2})), 4u * 2048 * 64 * 2);
  // 2x1 grid: only B moves.
  EXPECT_EQ(panel_buffer_bytes(kWorkedShape, {2, 1}, panels_for(256, 128, {2, 1})), 4u * 2048 * 128 * 2);
  // One GPU: nothing moves.
  EXPECT_EQ(panel_buffer_bytes(kWorkedShape, {1, 1}, panels_for(256, 128, {1, 1})), 0u);
}

TEST(DistributionModel, RowBlocksMoveOnlyB) {
  // 4 GPUs in row blocks of 512 rows: B (256 x 2048) in 4 blocks of 64 rows, each broadcast to
  // the 3 other GPUs.
  const DistributedRates rates{1e12, 1e11, 0, 64};
  DistributedPlan plan;
  ASSERT_TRUE(plan_distribution(kWorkedShape, Decomposition::RowBlocks, 4, 128, rates, plan).is_ok());
  EXPECT_EQ(plan.grid, (ProcessGrid{4, 1}));
  EXPECT_EQ(plan.panels.size(), 4u);
  const double b_block = 64.0 * 2048 * 2;
  EXPECT_DOUBLE_EQ(plan.model.bytes_received_per_gpu_max, 3 * b_block);
  EXPECT_DOUBLE_EQ(plan.model.panel_bytes_received_max, b_block);
  EXPECT_DOUBLE_EQ(plan.model.bytes_received_total, 12 * b_block);
  EXPECT_DOUBLE_EQ(plan.model.comm_seconds, 3 * b_block / 1e11);
  // Each GPU multiplies its own block of B (512 x 2048 x 64: 4 x 16 tiles in one wave of 64
  // SMs, efficiency 1 / 1.2 x 64 / 192) while the other three arrive at 2.6 us each.
  ASSERT_DOUBLE_EQ(block_efficiency(512, 2048, 64, 64), 1.0 / 3.6);
  const double product = 2.0 * 512 * 2048 * 64 * 3.6 / 1e12, c_pass = 512.0 * 2048 * 4 * 2 / 3e12;
  EXPECT_DOUBLE_EQ(plan.model.compute_seconds, 4 * product + 3 * c_pass);
  EXPECT_EQ(plan.model.wait_seconds, 0.0);
  EXPECT_DOUBLE_EQ(plan.model.model_seconds, 4 * product + 3 * c_pass);
  // B's widest panel (64 x 2048) in the rounds' 2 x 4 slots; A is multiplied where it lies.
  EXPECT_EQ(plan.panel_buffer_bytes, 8u * 64 * 2048 * 2);
}

TEST(DistributionChoice, TheChosenWidthFitsAndNoOtherWidthDoesBetter) {
  // 16384^3 bf16 (C f32) on 4 H100-like GPUs: 650 TFLOP/s, 20 us per broadcast. On the 2x2
  // grid GPUs (0,1) and (1,0) have no local panel (their A and B hold different halves of K):
  // they wait for the first panel, 8192 x kb x 2 bytes. Every panel past the first re-reads an
  // 8192 x 8192 block of f32 C: 0.18 ms.
  // At 300 GB/s one panel per run (8192) waits 0.47 ms; two per run (4096) wait 0.24 ms but
  // re-read C twice more (0.36 ms) on thinner products: the widest wins.
  // At 100 GB/s the whole run's panel waits 1.36 ms, two per run 0.69 ms: 4096 wins, and three
  // per run (2731, 0.47 ms) lose more to the re-read and thinner products than they save.
  const DistributedShape s{16384, 16384, 16384, 2};
  const std::uint64_t budget = 1ull << 30;
  for (const auto& [link, width] : {std::pair<double, std::int64_t>{300e9, 8192}, {100e9, 4096}}) {
    SCOPED_TRACE(::testing::Message() << link * 1e-9 << " GB/s");
    const DistributedRates rates{650e12, link, 20e-6, 132};
    DistributedPlan chosen;
    ASSERT_TRUE(choose_panel_width(s, Decomposition::Summa, 4, budget, rates, chosen).is_ok());
    EXPECT_LE(chosen.panel_buffer_bytes, budget);
    EXPECT_EQ(chosen.panel_width, width) << chosen.describe();
    // The width reported is the widest panel's.
    std::int64_t widest = 0;
    for (const Panel& p : chosen.panels) widest = std::max(widest, p.k.count);
    EXPECT_EQ(chosen.panel_width, widest);
    for (const std::int64_t kb : {256, 512, 1024, 2048, 2731, 4096, 8192}) {
      DistributedPlan other;
      ASSERT_TRUE(plan_distribution(s, Decomposition::Summa, 4, kb, rates, other).is_ok());
      if (other.panel_buffer_bytes <= budget) {
        EXPECT_LE(chosen.model.model_seconds, other.model.model_seconds * 1.001) << kb << ": " << other.describe();
      }
    }
  }
}

TEST(DistributionChoice, LessMemoryNarrowsThePanelsAndTooLittleIsRefused) {
  const DistributedShape s{16384, 16384, 16384, 2};
  const DistributedRates rates{650e12, 300e9, 20e-6, 132};
  double last = 0;
  for (const std::uint64_t mib : {1024, 64, 8, 1}) {
    DistributedPlan p;
    ASSERT_TRUE(choose_panel_width(s, Decomposition::Summa, 4, mib << 20, rates, p).is_ok()) << mib;
    EXPECT_LE(p.panel_buffer_bytes, mib << 20);
    EXPECT_GE(p.model.model_seconds, last) << mib << " MiB: " << p.describe();
    last = p.model.model_seconds;
  }
  // Width 1 on the 2x2 grid needs 3 x (8192 + 8192) x 2 = 98304 bytes.
  DistributedPlan p;
  const Status status = choose_panel_width(s, Decomposition::Summa, 4, 98303, rates, p);
  EXPECT_EQ(status.code(), StatusCode::InvalidValue);
  EXPECT_TRUE(contains(status.message(), "98304 bytes")) << status.message();
  EXPECT_TRUE(contains(status.message(), "budget of 98303 bytes")) << status.message();
}

TEST(DistributionChoice, OneGpuTakesAllOfKInOnePanel) {
  DistributedPlan p;
  ASSERT_TRUE(choose_panel_width({4096, 4096, 4097, 4}, Decomposition::Summa, 1, 0, {50e12, 0, 0, 0}, p).is_ok());
  EXPECT_EQ(p.panels, (std::vector<Panel>{{{0, 4097}, 0, 0}}));
  EXPECT_EQ(p.panel_width, 4097);
}

// Slices of C on two GPUs in row blocks (B moves): m = n = 2048, k = 256, 2-byte elements,
// 4 slices of 512 columns. Each GPU holds 128 of K and receives the other 128 of each slice:
// 128 x 512 x 2 = 131072 bytes a slice; each product is 1024 x 512 x all 256 of K.
TEST(DistributionSlices, BytesAndTimesOfAWorkedCase) {
  DistributedShape s = kWorkedShape;
  s.slices_possible = true;
  const DistributedRates rates{1e12, 1e11, 1e-5, 64};
  DistributedPlan plan;
  ASSERT_TRUE(plan_slices(s, Decomposition::RowBlocks, 2, 4, rates, plan).is_ok());
  EXPECT_EQ(plan.cut, DistributedCut::Slices);
  EXPECT_EQ(plan.grid, (ProcessGrid{2, 1}));
  EXPECT_EQ(plan.slices, (std::vector<Range>{{0, 512}, {512, 512}, {1024, 512}, {1536, 512}}));
  EXPECT_EQ(plan.panels.size(), 2u);  // each GPU's part of K
  EXPECT_EQ(plan.panel_width, 128);
  const double slice_bytes = 128.0 * 512 * 2;
  const DistributedModel& m = plan.model;
  EXPECT_DOUBLE_EQ(m.bytes_received_per_gpu_max, 4 * slice_bytes);
  EXPECT_DOUBLE_EQ(m.bytes_received_total, 8 * slice_bytes);
  EXPECT_DOUBLE_EQ(m.panel_bytes_received_max, slice_bytes);
  const double gather = 1e-5 + slice_bytes / 1e11;
  EXPECT_DOUBLE_EQ(m.comm_seconds, 4 * gather);
  // Every product whole in K and C written once: no re-read of C.
  const double product = 2.0 * 1024 * 512 * 256 / (1e12 * block_efficiency(1024, 512, 256, 64));
  EXPECT_DOUBLE_EQ(m.compute_seconds, 4 * product);
  // The first gather is waited for; each later one ends while the product before runs.
  ASSERT_LT(gather, product);
  EXPECT_DOUBLE_EQ(m.fill_seconds, gather);
  EXPECT_DOUBLE_EQ(m.wait_seconds, gather);
  EXPECT_DOUBLE_EQ(m.model_seconds, gather + 4 * product);
  // Two buffers of a slot per GPU, each the longest part of K by a slice.
  EXPECT_EQ(plan.panel_buffer_bytes, 2u * 2 * 128 * 512 * 2);
  EXPECT_TRUE(contains(plan.describe(), "B gathered whole in K, 4 slices of C's columns at most 512 wide"))
      << plan.describe();
}

TEST(DistributionSlices, OnlyWhereOneOperandMovesAndTheLibrarySaysTheyCanRun) {
  const DistributedRates rates{1e12, 1e11, 1e-5, 64};
  DistributedPlan plan;
  EXPECT_EQ(plan_slices(kWorkedShape, Decomposition::RowBlocks, 2, 4, rates, plan).code(), StatusCode::InvalidValue);
  DistributedShape s = kWorkedShape;
  s.slices_possible = true;
  // A 2 x 2 grid moves both operands.
  EXPECT_EQ(plan_slices(s, Decomposition::Summa, 4, 4, rates, plan).code(), StatusCode::InvalidValue);
  EXPECT_EQ(plan_slices(s, Decomposition::RowBlocks, 2, 0, rates, plan).code(), StatusCode::InvalidValue);
  EXPECT_EQ(plan_slices(s, Decomposition::RowBlocks, 2, 2049, rates, plan).code(), StatusCode::InvalidValue);
  // On a 1 x 2 grid (m < n) A moves: slices of C's rows.
  const DistributedShape wide{1024, 4096, 256, 2, 4, true};
  ASSERT_TRUE(plan_slices(wide, Decomposition::Summa, 2, 2, rates, plan).is_ok());
  EXPECT_EQ(plan.grid, (ProcessGrid{1, 2}));
  EXPECT_EQ(plan.slices, (std::vector<Range>{{0, 512}, {512, 512}}));
  EXPECT_TRUE(contains(plan.describe(), "A gathered whole in K, 2 slices of C's rows")) << plan.describe();
}

// The slice count the choice takes: the fastest the model sees among those that fit; panels
// are never considered there, nor slices by the panel choice.
TEST(DistributionSlices, TheChoiceTakesTheFastestCountThatFits) {
  const DistributedRates rates{6e14, 3.5e11, 1e-5, 132};
  DistributedShape s{16384, 16384, 4096, 2};
  DistributedPlan panels, sliced;
  EXPECT_EQ(choose_slices(s, Decomposition::RowBlocks, 2, ~std::uint64_t{0}, rates, sliced).code(),
            StatusCode::InvalidValue);
  s.slices_possible = true;
  ASSERT_TRUE(choose_panel_width(s, Decomposition::RowBlocks, 2, ~std::uint64_t{0}, rates, panels).is_ok());
  EXPECT_EQ(panels.cut, DistributedCut::KPanels);
  ASSERT_TRUE(choose_slices(s, Decomposition::RowBlocks, 2, ~std::uint64_t{0}, rates, sliced).is_ok());
  EXPECT_EQ(sliced.cut, DistributedCut::Slices);
  for (const std::int64_t count : {1, 2, 4, 8, 16, 32, 64}) {
    DistributedPlan other;
    ASSERT_TRUE(plan_slices(s, Decomposition::RowBlocks, 2, count, rates, other).is_ok());
    EXPECT_LE(sliced.model.model_seconds, other.model.model_seconds * 1.001) << count;
  }
  // A slice holds a part of K by a slice of C's columns, a panel a part of K by all of them:
  // 8 MB per GPU holds slices of 256 columns (2 x 2 x 2048 x 256 x 2 bytes), 2 MB none.
  DistributedPlan tight;
  ASSERT_TRUE(choose_slices(s, Decomposition::RowBlocks, 2, 8u << 20, rates, tight).is_ok());
  EXPECT_LE(tight.panel_buffer_bytes, 8u << 20);
  const Status none = choose_slices(s, Decomposition::RowBlocks, 2, 2u << 20, rates, tight);
  EXPECT_EQ(none.code(), StatusCode::InvalidValue);
  EXPECT_TRUE(contains(none.message(), "exceed the budget")) << none.message();
}

TEST(DistributionModel, RefusalsNameTheBadValue) {
  std::vector<Panel> panels;
  Status status = summa_panels(100, 0, {2, 2}, panels);
  EXPECT_EQ(status.code(), StatusCode::InvalidValue);
  EXPECT_TRUE(contains(status.message(), "kb (0)"));
  status = summa_panels(-1, 16, {2, 2}, panels);
  EXPECT_TRUE(contains(status.message(), "k (-1)"));
  status = summa_panels(100, 16, {0, 2}, panels);
  EXPECT_TRUE(contains(status.message(), "0x2 grid"));
  status = summa_panels(std::int64_t{1} << 40, 1, {1, 1}, panels);
  EXPECT_TRUE(contains(status.message(), "kb (1) cuts K (1099511627776)"));
  status = row_block_panels(100, 16, -2, panels);
  EXPECT_TRUE(contains(status.message(), "GPUs (-2)"));

  DistributedPlan plan;
  const DistributedRates good{1e12, 1e11, 1e-5, 0};
  status = plan_distribution(kWorkedShape, Decomposition::Summa, 4, -5, good, plan);
  EXPECT_TRUE(contains(status.message(), "kb (-5)"));
  // A huge kb is one panel per run of K, not an overflow.
  const std::int64_t widest_kb = std::numeric_limits<std::int64_t>::max();
  ASSERT_TRUE(plan_distribution(kWorkedShape, Decomposition::Summa, 4, widest_kb, good, plan).is_ok());
  EXPECT_EQ(plan.panels.size(), 2u);
  status = plan_distribution({2048, 2048, -1, 2}, Decomposition::Summa, 4, 128, good, plan);
  EXPECT_TRUE(contains(status.message(), "k (-1)"));
  status = plan_distribution({std::int64_t{1} << 40, 16, std::int64_t{1} << 30, 2}, Decomposition::Summa, 4, 128,
                             good, plan);
  EXPECT_TRUE(contains(status.message(), "A (1099511627776x1073741824) overflows"));
  status = plan_distribution(kWorkedShape, Decomposition::Summa, 4, 128, {0, 1e11, 0, 0}, plan);
  EXPECT_TRUE(contains(status.message(), "flop rate (0)"));
  status = plan_distribution(kWorkedShape, Decomposition::Summa, 4, 128, {1e12, -1, 0, 0}, plan);
  EXPECT_TRUE(contains(status.message(), "link rate (-1 bytes/s)"));
  status = plan_distribution(kWorkedShape, Decomposition::Summa, 4, 128, {1e12, 1e11, -1e-6, 0}, plan);
  EXPECT_TRUE(contains(status.message(), "broadcast (-1e-06 s)"));
  status = plan_distribution(kWorkedShape, Decomposition::Summa, 4, 128, {1e12, 1e11, 0, 0, -1}, plan);
  EXPECT_TRUE(contains(status.message(), "DRAM rate (-1 bytes/s)"));
  status = plan_distribution({2048, 2048, 256, 2, 0}, Decomposition::Summa, 4, 128, good, plan);
  EXPECT_TRUE(contains(status.message(), "element size of C"));

  // A schedule that does not tile K, or roots a panel off the grid.
  DistributedModel model;
  status = model_distribution(kWorkedShape, {2, 2}, {{{0, 128}, 0, 0}}, good, model);
  EXPECT_TRUE(contains(status.message(), "cover [0, 128) but K is 256"));
  status = model_distribution(kWorkedShape, {2, 2}, {{{0, 128}, 0, 0}, {{128, 128}, 2, 1}}, good, model);
  EXPECT_TRUE(contains(status.message(), "panel 1's roots (A: column 2, B: row 1)"));
  status = model_distribution(kWorkedShape, {2, 2}, {{{0, 100}, 0, 0}, {{120, 136}, 0, 0}}, good, model);
  EXPECT_TRUE(contains(status.message(), "panel 1 covers [120, 256) but should start at 100"));
  status = model_distribution(kWorkedShape, {4096, 1}, {}, good, model);
  EXPECT_TRUE(contains(status.message(), "4096x1 grid of GPUs leaves some without a block of C (2048x2048)"));
}

}  // namespace
}  // namespace gemmlab
