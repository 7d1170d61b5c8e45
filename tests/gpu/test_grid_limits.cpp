// Problems one grid cannot cover (issue 28): CUDA caps a grid's y dimension at 65,535
// blocks, so a rung that puts tile rows (or, naive, tile columns) along y must run larger
// problems as sub-grids in sequence (src/cuda/tiles/sub_grid.hpp). Every CUDA rung that runs
// on this device, of every --dtype, on a tall problem of more than 65,535 of its tile rows
// and a wide one of more than 65,535 of its tile columns (the tile from its Config; k = 3,
// the other side 3), against the float64 reference, every element checked: NN with NaN in
// C (beta = 0), and where a rung split the problem TT with alpha and beta, so that the
// sub-grids move A, B and C along each kind of stride. The largest problem, 65,535 x 256 +
// 37 by 3, holds about 0.2 GB per matrix (wgmma_3xtf32's split copy of its 16.8 million
// rows of B, K padded to 32 per part, takes 4.3 GB of workspace). Label: gpu; skipped
// without a device.
//
//   build/gemmlab_gpu_tests --gtest_filter='*GridLimit*'
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bench/harness.hpp"
#include "core/random.hpp"
#include "gemmlab/availability.hpp"
#include "gemmlab/registry.hpp"
#include "support/cuda_executor.hpp"

namespace gemmlab {
namespace {

constexpr std::int64_t kMaxGridY = 65535;
constexpr std::int64_t kRagged = 37;  // past the last whole tile of the first sub-grid's worth
constexpr std::int64_t kSmall = 3;    // the other side of C, and k

// A block's tile of C as the rung's configuration names it: BM x BN, TILE_WIDTH square, or
// naive's and coalesced's block_rows x block_cols. (pipelined's "auto" names its largest.)
struct Tile {
  std::int64_t rows = 0, cols = 0;
};
Tile tile_of(const Variant& v) {
  const Config& c = v.config;
  if (c.get("BM") > 0) return {c.get("BM"), c.get("BN")};
  if (c.get("TILE_WIDTH") > 0) return {c.get("TILE_WIDTH"), c.get("TILE_WIDTH")};
  return {c.get("block_rows"), c.get("block_cols")};
}

// The rungs of one --dtype and --out-dtype on one problem: run together, so they share its
// reference.
struct Group {
  DType dtype;
  DType out_dtype;
  bench::Shape shape;
  std::vector<std::string> rungs;
};

std::vector<Group> groups() {
  std::map<std::pair<std::pair<int, int>, std::pair<std::int64_t, std::int64_t>>, Group> by_shape;
  for (DType dtype : kDTypeNames)
    for (DType output : kOutDTypeNames)
      for (const Variant& v : variants(Backend::Cuda)) {
        if (!output_allowed(dtype, output) || v.anchor || v.precision() != *precision_for(dtype, output)) continue;
        if (const std::string why = unavailable_here(v); !why.empty()) {
          std::printf("SKIPPED: %s cannot run here: %s\n", v.name.c_str(), why.c_str());
          continue;
        }
        const Tile t = tile_of(v);
        EXPECT_GT(t.rows, 0) << v.name << ": its configuration names no tile (BM/BN, TILE_WIDTH or block_rows/cols)";
        EXPECT_GT(t.cols, 0) << v.name;
        if (t.rows <= 0 || t.cols <= 0) continue;
        for (const bench::Shape shape : {bench::Shape{kMaxGridY * t.rows + kRagged, kSmall, kSmall},
                                         bench::Shape{kSmall, kMaxGridY * t.cols + kRagged, kSmall}}) {
          Group& g = by_shape[{{static_cast<int>(dtype), static_cast<int>(output)}, {shape.m, shape.n}}];
          g.dtype = dtype;
          g.out_dtype = output;
          g.shape = shape;
          g.rungs.push_back(v.name);
        }
      }
  std::vector<Group> out;
  for (auto& [key, g] : by_shape) out.push_back(std::move(g));
  return out;
}

// One run of a group: NN over NaN in C (beta = 0), or TT with alpha and beta. Returns
// whether some rung ran as several launches (its model's Traffic::launches).
bool run_group(Executor& ex, const Group& g, bool transposed) {
  bench::Options o;
  o.dtype = g.dtype;
  o.out_dtype = g.out_dtype;
  o.variants = g.rungs;
  o.shapes = {g.shape};
  o.op_a = o.op_b = transposed ? Op::T : Op::N;  // A moved by rows of lda or by elements; B alike
  o.alpha = transposed ? -1.5 : 1.0;
  o.beta = transposed ? 0.75 : 0.0;  // 0: C holds NaN, every element must be written
  o.seed = fresh_seed();
  o.time = false;
  const std::string context = fmt::format("{} (C in {}) {}x{}x{} {}", to_string(g.dtype), to_string(g.out_dtype),
                                          g.shape.m, g.shape.n, g.shape.k, transposed ? "TT" : "NN");
  std::vector<bench::Record> records;
  const Status status = bench::run(o, ex, records);
  EXPECT_TRUE(status.is_ok()) << context << ": " << status.describe();
  EXPECT_EQ(records.size(), g.rungs.size()) << context;
  bool split = false;
  for (const bench::Record& r : records) {
    SCOPED_TRACE(fmt::format("{} {} seed {}", context, r.variant, r.seed));
    // A tensor-core rung may refuse a layout with its reason (as in test_cuda_ladder.cpp), an
    // f32 rung nothing.
    if (r.status == "skipped" && r.dtype != "f32" && !r.message.empty()) continue;
    EXPECT_EQ(r.status, "ok") << r.message;
    EXPECT_TRUE(r.verified);
    EXPECT_TRUE(r.verification.passed) << r.verification.summary();
    EXPECT_EQ(r.verification.checked, r.m * r.n);
    EXPECT_GE(r.model.launches, 1);
    split = split || r.model.launches > 1;
  }
  return split;
}

// Every group NN; TT too where a rung split the problem, so that its sub-grids move A and B
// along the other stride (the rungs with 1-D grids of tiles run one launch: once is enough).
TEST(CudaGridLimits, EveryRungPastOneGrid) {
  REQUIRE_CUDA(ex);
  const std::vector<Group> all = groups();
  ASSERT_FALSE(all.empty());
  int split = 0;
  for (const Group& g : all)
    if (run_group(*ex, g, /*transposed=*/false)) {
      ++split;
      run_group(*ex, g, /*transposed=*/true);
    }
  // naive's wide problem, coalesced's to warptile's tall ones at least.
  EXPECT_GE(split, 6) << "too few problems ran as several launches: did the rungs' tiles change?";
}

}  // namespace
}  // namespace gemmlab
