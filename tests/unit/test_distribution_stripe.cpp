// The stripe schedule's plan and model, without a GPU: the bytes and times of a case worked by
// hand (the lead stripe's own product hides the gather, the rest runs whole in K, the stripe's
// other parts add into C), where it refuses, and the lead the choice takes: the fastest the
// model sees, one that hides the gather where the link is slow, and faster than panels of K
// where cutting K costs the rung, and one whose products fill whole waves of the rung's tile.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/out_of_core_plan.hpp"
#include "gemmlab/distribution.hpp"
#include "support/assertions.hpp"

namespace gemmlab {
namespace {

using testing::contains;

// Two GPUs in row blocks (B moves): m = n = 2048, k = 256, 2-byte A and B, 4-byte C. Each
// GPU holds 1024 rows of C and 128 of K, and receives the other 128 x 2048 of B.
const DistributedShape kShape{2048, 2048, 256, 2, 4, true};
const DistributedRates kRates{1e12, 5e8, 1e-5, 64, 2e12, 100};

TEST(DistributionStripe, BytesAndTimesOfAWorkedCase) {
  DistributedPlan plan;
  ASSERT_TRUE(plan_stripe(kShape, Decomposition::RowBlocks, 2, 512, kRates, plan).is_ok());
  EXPECT_EQ(plan.cut, DistributedCut::Stripe);
  EXPECT_EQ(plan.grid, (ProcessGrid{2, 1}));
  EXPECT_EQ(plan.lead, 512);
  EXPECT_EQ(plan.panels.size(), 2u);  // each GPU's part of K
  EXPECT_EQ(plan.panel_width, 128);
  const double part_bytes = 128.0 * 2048 * 2;
  const DistributedModel& m = plan.model;
  EXPECT_DOUBLE_EQ(m.bytes_received_per_gpu_max, part_bytes);
  EXPECT_DOUBLE_EQ(m.bytes_received_total, 2 * part_bytes);
  // The comm stream packs the own part (read and written at the DRAM rate), then gathers.
  const double comm = 2 * part_bytes / 2e12 + 1e-5 + part_bytes / 5e8;
  EXPECT_DOUBLE_EQ(m.comm_seconds, comm);
  const auto product = [](std::int64_t rows, std::int64_t depth) {
    return 2.0 * static_cast<double>(rows) * 2048 * static_cast<double>(depth) /
           (1e12 * block_efficiency(rows, 2048, depth, 64, 100));
  };
  const double lead_own = product(512, 128);
  const double rest = product(512, 256);
  const double lead_other = product(512, 128) + 512.0 * 2048 * 4 * 2 / 2e12;  // adds into C
  EXPECT_DOUBLE_EQ(m.compute_seconds, lead_own + rest + lead_other);
  // The gather outlasts the stripe's own product here: the rest waits for it.
  ASSERT_GT(comm, lead_own);
  EXPECT_DOUBLE_EQ(m.wait_seconds, comm - lead_own);
  EXPECT_DOUBLE_EQ(m.fill_seconds, 0.0);  // the first product needs nothing
  EXPECT_DOUBLE_EQ(m.model_seconds, comm + rest + lead_other);
  // One buffer: a slot per GPU, the longest part of K by all of C's columns.
  EXPECT_EQ(plan.panel_buffer_bytes, 2u * 128 * 2048 * 2);
  EXPECT_TRUE(contains(plan.describe(), "B gathered whole in K behind a lead stripe of 512 rows")) << plan.describe();
}

TEST(DistributionStripe, WithoutAStripeTheGatherIsWaitedFor) {
  DistributedPlan plan;
  ASSERT_TRUE(plan_stripe(kShape, Decomposition::RowBlocks, 2, 0, kRates, plan).is_ok());
  const DistributedModel& m = plan.model;
  EXPECT_DOUBLE_EQ(m.fill_seconds, m.comm_seconds);
  EXPECT_DOUBLE_EQ(m.wait_seconds, m.comm_seconds);
  EXPECT_DOUBLE_EQ(m.model_seconds,
                   m.comm_seconds + 2.0 * 1024 * 2048 * 256 / (1e12 * block_efficiency(1024, 2048, 256, 64, 100)));
}

TEST(DistributionStripe, RefusesWhatCannotRun) {
  DistributedPlan plan;
  DistributedShape not_gathered = kShape;
  not_gathered.slices_possible = false;
  EXPECT_EQ(plan_stripe(not_gathered, Decomposition::RowBlocks, 2, 256, kRates, plan).code(), StatusCode::InvalidValue);
  EXPECT_EQ(choose_stripe(not_gathered, Decomposition::RowBlocks, 2, ~std::uint64_t{0}, kRates, plan).code(),
            StatusCode::InvalidValue);
  // A 2 x 2 grid moves both operands.
  EXPECT_EQ(plan_stripe(kShape, Decomposition::Summa, 4, 256, kRates, plan).code(), StatusCode::InvalidValue);
  // A stripe as long as a block leaves no rest.
  const Status whole = plan_stripe(kShape, Decomposition::RowBlocks, 2, 1024, kRates, plan);
  EXPECT_EQ(whole.code(), StatusCode::InvalidValue);
  EXPECT_TRUE(contains(whole.message(), "1024 rows")) << whole.message();
  EXPECT_EQ(plan_stripe(kShape, Decomposition::RowBlocks, 2, -1, kRates, plan).code(), StatusCode::InvalidValue);
  // The buffer holds the moving operand whole: 2 x 128 x 2048 x 2 bytes.
  const Status tight = choose_stripe(kShape, Decomposition::RowBlocks, 2, 2u * 128 * 2048 * 2 - 1, kRates, plan);
  EXPECT_EQ(tight.code(), StatusCode::InvalidValue);
  EXPECT_TRUE(contains(tight.message(), "exceeds the budget")) << tight.message();
}

TEST(DistributionStripe, OnAOneRowGridAMovesAndTheStripeIsOfColumns) {
  const DistributedShape wide{1024, 4096, 256, 2, 4, true};
  DistributedPlan plan;
  ASSERT_TRUE(plan_stripe(wide, Decomposition::Summa, 2, 256, kRates, plan).is_ok());
  EXPECT_EQ(plan.grid, (ProcessGrid{1, 2}));
  EXPECT_TRUE(contains(plan.describe(), "A gathered whole in K behind a lead stripe of 256 columns")) << plan.describe();
  EXPECT_DOUBLE_EQ(plan.model.bytes_received_per_gpu_max, 128.0 * 1024 * 2);
}

// bf16 16384^3 on two GPUs at rates like an H200's (700 TFLOP/s, 390 GB/s received, 2,500 of K
// per tile): the chosen lead is the model's fastest, hides the 0.7 ms gather, and beats every
// panel plan, which cut all of C in K.
TEST(DistributionStripe, TheChoiceHidesTheGatherAndBeatsPanelsOfK) {
  const DistributedShape s{16384, 16384, 16384, 2, 4, true};
  const DistributedRates rates{7e14, 3.9e11, 2e-5, 132, 4e12, 2500};
  DistributedPlan chosen;
  ASSERT_TRUE(choose_stripe(s, Decomposition::RowBlocks, 2, ~std::uint64_t{0}, rates, chosen).is_ok());
  EXPECT_GT(chosen.lead, 0);
  EXPECT_LT(chosen.model.wait_seconds, 0.05 * chosen.model.comm_seconds);
  for (const std::int64_t lead : {0, 256, 512, 1024, 2048, 3072, 4096}) {
    DistributedPlan other;
    ASSERT_TRUE(plan_stripe(s, Decomposition::RowBlocks, 2, lead, rates, other).is_ok());
    EXPECT_LE(chosen.model.model_seconds, other.model.model_seconds * 1.001) << lead;
  }
  DistributedPlan panels;
  ASSERT_TRUE(choose_panel_width(s, Decomposition::RowBlocks, 2, ~std::uint64_t{0}, rates, panels).is_ok());
  EXPECT_LT(chosen.model.model_seconds, panels.model.model_seconds);
}

// 3xTF32 at 8192^3 on two GPUs at rates like an H200's (110 TFLOP/s, output tiles of 128 x
// 256): the chosen lead makes the stripe's products fill whole waves of the 132 SMs, where
// counting 128 x 128 tiles it took 768 rows (6 x 32 tiles, 1.45 waves).
TEST(DistributionStripe, TheLeadFillsWavesOfTheRungsTile) {
  const DistributedShape s{8192, 8192, 8192, 4, 4, true};
  DistributedRates rates{1.1e14, 3.9e11, 2e-5, 132, 4e12, 250};
  DistributedPlan square, own;
  ASSERT_TRUE(choose_stripe(s, Decomposition::RowBlocks, 2, ~std::uint64_t{0}, rates, square).is_ok());
  rates.tile_m = 128;
  rates.tile_n = 256;
  ASSERT_TRUE(choose_stripe(s, Decomposition::RowBlocks, 2, ~std::uint64_t{0}, rates, own).is_ok());
  const auto waves = [](std::int64_t lead) { return static_cast<double>((lead + 127) / 128 * 32) / 132; };
  EXPECT_GT(waves(square.lead) - std::floor(waves(square.lead)), 0.3) << square.lead;
  const double own_waves = waves(own.lead);
  EXPECT_GT(own_waves - std::floor(own_waves), 0.9) << own.lead;
}

}  // namespace
}  // namespace gemmlab
