// The CPU ladder: every rung of the registry (the anchors aside) against the float64
// reference on random odd shapes, every op and layout, padded leading dimensions,
// alpha/beta, beta = 0 with NaN in C, and shapes on the block boundaries of the packed
// rungs, in every named configuration; the rungs with a SIMD micro-kernel once per ISA path
// (AVX-512, AVX2, portable), capped with set_isa_limit. Also the pieces the rungs are made
// of: seed 002's loop-order choice, the thread grid, the pool and its barrier.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "core/verify.hpp"
#include "cpu/machine/cache_info.hpp"
#include "cpu/machine/cpu_features.hpp"
#include "cpu/blis/microkernel.hpp"
#include "cpu/blis/packed_gemm.hpp"
#include "cpu/ladder/rungs.hpp"
#include "cpu/thread_pool.hpp"
#include "gemmlab/gemm.hpp"
#include "gemmlab/registry.hpp"
#include "support/assertions.hpp"
#include "support/context.hpp"
#include "support/host_problem.hpp"
#include "support/seeds.hpp"

namespace gemmlab {
namespace {

using cpu::Blocking;
using testing::Dims;
using testing::HostProblem;
using testing::kLayouts;
using testing::kOps;
using testing::make_host_problem;
using testing::ProblemSpec;

// A rung and the widest ISA it may use.
struct RungPath {
  std::string rung;
  Isa isa;
};

void PrintTo(const RungPath& path, std::ostream* os) {
  *os << path.rung << " capped at " << to_string(path.isa);
}

std::string path_name(const ::testing::TestParamInfo<RungPath>& info) {
  return info.param.rung + "_" + std::string(to_string(info.param.isa));
}

// Every rung of the registry but the anchors: once on the portable path, and once per ISA
// path where its configuration names a vector width (VEC_BITS: a micro-kernel chosen by
// ISA at run time; the other rungs are portable C++ and ignore the cap).
std::vector<RungPath> rung_paths() {
  std::vector<RungPath> paths;
  for (const Variant& v : variants(Backend::Cpu)) {
    if (v.anchor) continue;
    if (v.config.get("VEC_BITS") > 0)
      for (const Isa isa : {Isa::Avx512, Isa::Avx2}) paths.push_back({v.name, isa});
    paths.push_back({v.name, Isa::Portable});
  }
  return paths;
}

// Caps the ISA for one test and restores the previous cap afterwards.
class IsaCap {
 public:
  explicit IsaCap(Isa cap) : previous_(cpu_features().limit) { set_isa_limit(cap); }
  ~IsaCap() { set_isa_limit(previous_); }
  IsaCap(const IsaCap&) = delete;
  IsaCap& operator=(const IsaCap&) = delete;

 private:
  Isa previous_;
};

// Skips (visibly) when this CPU cannot execute `isa`.
#define SKIP_WITHOUT_ISA(isa)                                                              \
  do {                                                                                     \
    if (cpu_features().widest < (isa))                                                     \
      GTEST_SKIP() << "this CPU lacks " << to_string(isa) << " (widest: "                  \
                   << to_string(cpu_features().widest) << "); that path is not exercised"; \
  } while (0)

class CpuLadder : public ::testing::TestWithParam<RungPath> {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_ISA(GetParam().isa);
    cap_ = std::make_unique<IsaCap>(GetParam().isa);
    variant_ = find_variant(Backend::Cpu, GetParam().rung);
    ASSERT_NE(variant_, nullptr) << GetParam().rung << " is not registered";
  }
  void TearDown() override { cap_.reset(); }

  // From here on, the rung bound to configuration `name` (through gemmlab::configure).
  void use_configuration(const std::string& name) {
    const Variant* registered = find_variant(Backend::Cpu, GetParam().rung);
    const Status s = configure(*registered, name, configured_);
    ASSERT_TRUE(s.is_ok()) << s.describe();
    EXPECT_EQ(configured_.config_name, name);
    variant_ = &configured_;
  }

  // Builds the problem, runs the rung through gemm(), verifies against the reference.
  void check(const ProblemSpec& spec, const testing::Seeds& seeds) {
    SCOPED_TRACE(spec.describe() + ", " + seeds.describe(spec.seed));
    HostProblem hp = make_host_problem(spec);
    ReferenceResult reference;
    ASSERT_TRUE(testing::host_reference(hp, reference).is_ok());
    const Status status = gemm(testing::cpu_context(), hp.problem, *variant_);
    ASSERT_TRUE(status.is_ok()) << status.describe();
    const Verification v = testing::verify_result(hp, hp.c.storage, reference);
    EXPECT_TRUE(v.passed) << v.summary();
    if (spec.nan_c) {
      EXPECT_TRUE(testing::no_nan_in_c(hp, hp.c.storage));
      EXPECT_EQ(v.unwritten, 0);
    }
  }

  // The block sizes the packed rungs use on this path (rungs 2-4 ignore them).
  Blocking blocking() const {
    return blocking_for(cpu::micro_kernel(GetParam().isa), cpu::cache_sizes());
  }

  std::unique_ptr<IsaCap> cap_;
  const Variant* variant_ = nullptr;
  Variant configured_;  // the rung bound to a configuration by use_configuration()
};

std::int64_t odd_in(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  std::uniform_int_distribution<std::int64_t> d(lo, hi);
  return d(rng) | 1;
}

// Random odd shapes (every one a remainder for every tile), every op and layout, random
// padding and alpha/beta.
TEST_P(CpuLadder, RandomOddShapesEveryOpAndLayout) {
  testing::Seeds seeds;
  std::mt19937_64 rng(seeds.next());
  std::uniform_real_distribution<double> scalar(-2.0, 2.0);
  for (const Layout layout : kLayouts)
    for (const Op op_a : kOps)
      for (const Op op_b : kOps)
        for (int trial = 0; trial < 2; ++trial) {
          const ProblemSpec spec{.m = odd_in(rng, 1, 97), .n = odd_in(rng, 1, 131),
                                 .k = odd_in(rng, 1, 300), .op_a = op_a, .op_b = op_b,
                                 .layout = layout, .ld_padding = odd_in(rng, 0, 9),
                                 .alpha = scalar(rng), .beta = scalar(rng), .seed = seeds.next()};
          check(spec, seeds);
        }
}

// beta = 0: C holds NaN and must be written without being read, on every path through the
// rung (full tiles, edge tiles, and every depth block after the first).
TEST_P(CpuLadder, BetaZeroNeverReadsC) {
  testing::Seeds seeds;
  const Blocking b = blocking();
  for (const Dims& d : {Dims{1, 1, 1}, Dims{23, 37, 19}, Dims{b.mr + 1, 2 * b.nr + 3, b.kc + 5}})
    for (const Layout layout : kLayouts)
      for (const Op op : kOps) {
        const ProblemSpec spec{.m = d.m, .n = d.n, .k = d.k, .op_a = op, .op_b = op,
                               .layout = layout, .ld_padding = 3, .alpha = -0.625, .beta = 0.0,
                               .seed = seeds.next(), .nan_c = true};
        check(spec, seeds);
      }
}

// Shapes one either side of the packed rungs' blocks: MR, NR, KC (several depth blocks,
// so the "add to C" path runs), MC (several row blocks) and NC (several column blocks).
TEST_P(CpuLadder, BlockBoundaries) {
  testing::Seeds seeds;
  const Blocking b = blocking();
  const std::vector<Dims> shapes = {
      {b.mr - 1, b.nr - 1, 1},           {b.mr, b.nr, b.kc},
      {b.mr + 1, b.nr + 1, b.kc + 1},    {2 * b.mr + 1, 3 * b.nr - 1, 2 * b.kc + 3},
      {b.mc + b.mr + 1, b.nr + 3, 7},    {b.mc - 1, 2 * b.nr + 1, b.kc - 1},
      {5, b.nc + b.nr + 3, 3},  // more than one NC block of columns
  };
  for (const Dims& d : shapes)
    for (const Op op_a : kOps)
      for (const Op op_b : kOps) {
        const ProblemSpec spec{.m = d.m, .n = d.n, .k = d.k, .op_a = op_a, .op_b = op_b,
                               .layout = Layout::RowMajor, .ld_padding = 1, .alpha = 1.5,
                               .beta = -0.75, .seed = seeds.next()};
        check(spec, seeds);
      }
}

// Problems large enough (over 2^21 multiply-adds) for the threaded rung to form a team on
// any machine with two or more cores: a single row (the team splits B's panels), several
// KC blocks (the double-buffered shared B block is reused), more than one NC block, with
// beta = 0 over NaN and transposed operands. The other rungs run them too.
TEST_P(CpuLadder, ProblemsLargeEnoughForATeam) {
  testing::Seeds seeds;
  const Blocking b = blocking();
  constexpr std::int64_t kTeamWork = std::int64_t{1} << 21;
  // Two NC blocks: k deep enough for a team whatever the cache sizes made nc (with 1 MiB of
  // L2 and the portable kernel, 160 was too shallow).
  const std::int64_t two_nc_m = 2 * b.mr + 1, two_nc_n = b.nc + b.nr + 1;
  const std::vector<Dims> shapes = {
      {1, 4099, 2 * b.kc + 7},          // one row of C
      {1001, 37, 2 * b.kc + 61},        // three KC blocks, rows split
      {two_nc_m, two_nc_n, std::max<std::int64_t>(160, kTeamWork / (two_nc_m * two_nc_n) + 1)},  // two NC blocks
  };
  for (const Dims& d : shapes)
    for (const Op op : kOps) {
      ASSERT_GT(d.m * d.n * d.k, kTeamWork);
      const ProblemSpec spec{.m = d.m, .n = d.n, .k = d.k, .op_a = op, .op_b = op,
                             .layout = Layout::RowMajor, .ld_padding = 1, .alpha = -1.5,
                             .beta = 0.0, .seed = seeds.next(), .nan_c = true};
      check(spec, seeds);
    }
}

// Tall and skinny, short and wide, k = 1, a single row or column, column-major storage.
TEST_P(CpuLadder, AwkwardShapes) {
  testing::Seeds seeds;
  std::vector<Dims> shapes(testing::kAwkwardDims.begin(), testing::kAwkwardDims.end());
  shapes.insert(shapes.end(), {Dims{301, 3, 29}, Dims{3, 301, 29}, Dims{97, 89, 1}, Dims{1, 257, 263},
                               Dims{257, 1, 263}});
  for (const Dims& d : shapes)
    for (const Layout layout : kLayouts) {
      const ProblemSpec spec{.m = d.m, .n = d.n, .k = d.k, .op_a = Op::T, .op_b = Op::N,
                             .layout = layout, .ld_padding = 2, .alpha = 0.75, .beta = 1.25,
                             .seed = seeds.next()};
      check(spec, seeds);
    }
}

// Every named configuration of the rung (configure() on each of variant.configs), on odd
// shapes around its blocks with both ops, beta = 0 over NaN and beta != 0.
TEST_P(CpuLadder, EveryConfiguration) {
  testing::Seeds seeds;
  const Blocking b = blocking();
  const std::vector<NamedConfig> configs = variant_->configs;
  if (configs.empty()) {
    // One form: no configure(), and a configuration named for it is refused.
    EXPECT_FALSE(variant_->configure);
    Variant out;
    const Status s = configure(*variant_, "auto", out);
    EXPECT_EQ(s.code(), StatusCode::InvalidValue) << s.describe();
    return;
  }
  EXPECT_EQ(variant_->config_name, configs.front().name) << "the default is the first configuration";
  for (const NamedConfig& config : configs) {
    SCOPED_TRACE("configuration " + config.name);
    EXPECT_FALSE(config.description.empty());
    use_configuration(config.name);
    if (HasFatalFailure()) return;
    for (const Op op : kOps)
      for (const double beta : {0.0, 0.5}) {
        const ProblemSpec spec{.m = 2 * b.mr + 1, .n = 3 * b.nr - 1, .k = 37, .op_a = op, .op_b = op,
                               .layout = Layout::RowMajor, .ld_padding = 1, .alpha = -0.75,
                               .beta = beta, .seed = seeds.next(), .nan_c = beta == 0.0};
        check(spec, seeds);
      }
  }
}

// Block sizes as a configuration of the packed rungs ("KC=7,MC=...,NC=..."): tiny blocks,
// so that every loop of the driver runs several times (4 KC, 2 MC, 3 NC blocks, edge tiles
// in each), in the driver's order for this path's kernel. A bad spec is refused by
// configure(), not run; a rung with one form refuses any spec.
TEST_P(CpuLadder, BlockSizesFromTheConfiguration) {
  testing::Seeds seeds;
  const Blocking b = blocking();
  const std::string spec_text = "KC=7,MC=" + std::to_string(2 * b.mr) + ",NC=" + std::to_string(2 * b.nr);
  const bool packed = !variant_->configs.empty();
  Variant refused;
  const Status bad = configure(*variant_, "KC=0", refused);
  EXPECT_EQ(bad.code(), StatusCode::InvalidValue) << bad.describe();
  EXPECT_NE(bad.message().find(GetParam().rung), std::string::npos) << bad.message();
  if (!packed) {
    const Status s = configure(*variant_, spec_text, refused);
    EXPECT_EQ(s.code(), StatusCode::InvalidValue) << s.describe();
    return;
  }
  EXPECT_NE(bad.message().find("KC must be"), std::string::npos) << bad.message();
  use_configuration(spec_text);
  if (HasFatalFailure()) return;
  EXPECT_EQ(variant_->config.get("KC"), 7);
  EXPECT_EQ(variant_->config.get("MC"), 2 * b.mr);
  EXPECT_EQ(variant_->config.get("NC"), 2 * b.nr);
  for (const Op op : kOps)
    for (const double beta : {0.0, 0.5}) {
      const ProblemSpec spec{.m = 3 * b.mr + 1, .n = 5 * b.nr + 3, .k = 23, .op_a = op, .op_b = op,
                             .layout = Layout::RowMajor, .ld_padding = 1, .alpha = 1.25,
                             .beta = beta, .seed = seeds.next(), .nan_c = beta == 0.0};
      check(spec, seeds);
    }
}

// The same problem twice: the second call (workspace already grown) gives the same bits.
TEST_P(CpuLadder, RepeatedCallsAreDeterministic) {
  testing::Seeds seeds;
  const ProblemSpec spec{.m = 133, .n = 71, .k = 301, .op_a = Op::N, .op_b = Op::T, .ld_padding = 1,
                         .alpha = 1.0, .beta = 0.0, .seed = seeds.next(), .nan_c = true};
  SCOPED_TRACE(spec.describe() + ", " + seeds.describe(spec.seed));
  HostProblem hp = make_host_problem(spec);
  ASSERT_TRUE(gemm(testing::cpu_context(), hp.problem, *variant_).is_ok());
  const std::vector<float> first = hp.c.storage;
  ASSERT_TRUE(gemm(testing::cpu_context(), hp.problem, *variant_).is_ok());
  EXPECT_TRUE(testing::bitwise_equal(first, hp.c.storage));
}

INSTANTIATE_TEST_SUITE_P(Rungs, CpuLadder, ::testing::ValuesIn(rung_paths()), path_name);

// The rungs come first, each name once, then the anchors (one thread and all cores).
TEST(CpuLadderRegistry, RungsAreRegisteredBeforeTheAnchors) {
  std::vector<std::string> names, anchors;
  for (const Variant& v : variants(Backend::Cpu)) {
    EXPECT_EQ(std::count(names.begin(), names.end(), v.name), 0) << v.name << " registered twice";
    EXPECT_TRUE(v.anchor || anchors.empty()) << v.name << " registered after an anchor";
    names.push_back(v.name);
    if (v.anchor) anchors.push_back(v.name);
  }
  EXPECT_EQ(anchors, (std::vector<std::string>{"openblas_sgemm_1t", "openblas_sgemm"}));
  EXPECT_EQ(names.front(), "naive");
  EXPECT_EQ(find_variant(Backend::Cpu, "packed_simd")->threads, 1);
  EXPECT_EQ(find_variant(Backend::Cpu, "threaded")->threads, 0);
  EXPECT_GT(find_variant(Backend::Cpu, "packed_simd")->config.get("KC"), 0);
}

// A configuration a rung does not have is a usage error (InvalidValue) that names the rung,
// the name asked for and every valid configuration.
TEST(CpuLadderRegistry, UnknownConfigurationListsTheValidOnes) {
  for (const char* rung : {"packed_simd", "threaded"}) {
    const Variant* v = find_variant(Backend::Cpu, rung);
    ASSERT_NE(v, nullptr) << rung;
    ASSERT_FALSE(v->configs.empty()) << rung;
    EXPECT_EQ(v->config_name, "auto") << rung;
    Variant out;
    const Status s = configure(*v, "no_such_config", out);
    EXPECT_EQ(s.code(), StatusCode::InvalidValue) << s.describe();
    EXPECT_NE(s.message().find(rung), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("no_such_config"), std::string::npos) << s.message();
    for (const NamedConfig& c : v->configs) EXPECT_NE(s.message().find(c.name), std::string::npos) << c.name;
    // An empty name keeps the default.
    ASSERT_TRUE(configure(*v, "", out).is_ok());
    EXPECT_EQ(out.config_name, v->config_name);
  }
}

// Seed 002's cost model picks i, k, j for row-major NN (C and B walked along rows) and a
// dot product of two contiguous rows (i, j, k) for NT.
TEST(CpuLoopOrder, CostModelPicksTheSeedsOrder) {
  const float dummy = 0;
  RowMajorGemm g{/*m=*/512, /*n=*/512, /*k=*/512, false, false, &dummy, 512, &dummy, 512,
                 const_cast<float*>(&dummy), 512, 1.0, 0.0};
  cpu::LoopOrder order = cpu::choose_loop_order(g);
  EXPECT_EQ(order.loops, (std::array<int, 3>{0, 2, 1}));  // i, p, j
  EXPECT_DOUBLE_EQ(order.cost[1], 2.0 * 512 / 16 + 1);     // CM(J) = 2n/cls + 1
  EXPECT_DOUBLE_EQ(order.cost[0], 2.0 * 512 + 1);          // CM(I) = 2m + 1
  EXPECT_DOUBLE_EQ(order.cost[2], 512 + 512.0 / 16 + 1);   // CM(K) = k + k/cls + 1
  g.trans_b = true;  // B stored n x k: op(B)(p, j) walks a row of the storage along p
  order = cpu::choose_loop_order(g);
  EXPECT_EQ(order.loops[2], 2);  // innermost p
}

// The thread grid: every thread used, the busiest thread within 10 % of the fewest
// micro-tiles any grid gives, and the shapes docs/cpu-ladder.md describes.
TEST(CpuThreaded, TeamShapeUsesEveryThreadAndBalances) {
  const cpu::Blocking b{6, 16, 512, 60, 8192};
  const auto tiles = [&](const Dims& d, int ic, int jr) {
    const std::int64_t rows = (d.m + b.mr - 1) / b.mr;
    const std::int64_t cols = (std::min(d.n, b.nc) + b.nr - 1) / b.nr;
    return ((rows + ic - 1) / ic) * ((cols + jr - 1) / jr);
  };
  for (const int threads : {1, 2, 3, 16})
    for (const Dims& d : {Dims{2048, 2048, 2048}, Dims{1, 4096, 64}, Dims{4096, 16, 64},
                          Dims{1000, 1000, 1000}, Dims{4096, 256, 64}, Dims{13, 37, 5}}) {
      SCOPED_TRACE(std::to_string(threads) + " threads, " + std::to_string(d.m) + "x" +
                   std::to_string(d.n));
      const cpu::TeamShape t = cpu::team_shape(threads, d.m, d.n, b);
      EXPECT_EQ(t.threads, threads);
      EXPECT_EQ(t.ways_ic * t.ways_jr, threads);
      std::int64_t fewest = tiles(d, threads, 1);
      for (int ic = 1; ic <= threads; ++ic)
        if (threads % ic == 0) fewest = std::min(fewest, tiles(d, ic, threads / ic));
      EXPECT_LE(static_cast<double>(tiles(d, t.ways_ic, t.ways_jr)), 1.1 * static_cast<double>(fewest));
    }
  EXPECT_EQ(cpu::team_shape(2, 2048, 2048, b).ways_ic, 2);   // rows split, B shared
  EXPECT_EQ(cpu::team_shape(2, 4096, 256, b).ways_ic, 2);    // not 1 x 2: A packed once
  EXPECT_EQ(cpu::team_shape(2, 1, 4096, b).ways_jr, 2);      // one row: split B's panels
  EXPECT_EQ(cpu::team_shape(16, 1, 4096, b).ways_jr, 16);
  EXPECT_EQ(cpu::team_shape(16, 4096, 16, b).ways_ic, 16);
  const cpu::TeamShape square16 = cpu::team_shape(16, 2048, 2048, b);
  EXPECT_EQ(square16.ways_ic, 8);
  EXPECT_EQ(square16.ways_jr, 2);
}

// The pool runs every thread id exactly once per call, and the barrier separates phases:
// after it, every thread sees what every other thread wrote before it.
TEST(CpuThreaded, PoolAndBarrier) {
  constexpr int kThreads = 4;
  cpu::ThreadPool pool(kThreads);
  ASSERT_EQ(pool.size(), kThreads);
  for (int round = 0; round < 50; ++round) {
    std::array<std::atomic<int>, kThreads> calls{};
    std::array<int, kThreads> written{};
    std::array<int, kThreads> seen_sum{};
    cpu::TeamBarrier barrier(kThreads);
    auto task = [&](int tid) {
      calls[static_cast<std::size_t>(tid)].fetch_add(1);
      for (int phase = 1; phase <= 3; ++phase) {
        written[static_cast<std::size_t>(tid)] = phase * (tid + 1);
        barrier.arrive_and_wait();
        int sum = 0;
        for (int t = 0; t < kThreads; ++t) sum += written[static_cast<std::size_t>(t)];
        seen_sum[static_cast<std::size_t>(tid)] = sum;
        barrier.arrive_and_wait();
      }
    };
    pool.run(kThreads, task);
    for (int t = 0; t < kThreads; ++t) {
      EXPECT_EQ(calls[static_cast<std::size_t>(t)].load(), 1) << "thread " << t;
      EXPECT_EQ(seen_sum[static_cast<std::size_t>(t)], 3 * (1 + 2 + 3 + 4)) << "thread " << t;
    }
  }
  // Fewer threads than the pool holds: the others stay out of it.
  std::array<std::atomic<int>, kThreads> calls{};
  auto two = [&](int tid) { calls[static_cast<std::size_t>(tid)].fetch_add(1); };
  pool.run(2, two);
  EXPECT_EQ(calls[0].load() + calls[1].load(), 2);
  EXPECT_EQ(calls[2].load() + calls[3].load(), 0);
}

}  // namespace
}  // namespace gemmlab
