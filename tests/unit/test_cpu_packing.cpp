// Packing and micro-kernels of the packed CPU rungs, tested below the rung: every packed
// element against the source it came from (edge panels with fewer than MR/NR lines, odd k
// remainders, transposed and plain storage, padded ld), the zero fill, no write past the
// block; each ISA's micro-kernel against a float64 dot product, beta = 0 with NaN in C;
// the block sizes derived from the caches; the cache-size parser.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "core/random.hpp"
#include "cpu/machine/cache_info.hpp"
#include "cpu/machine/cpu_features.hpp"
#include "cpu/blis/microkernel.hpp"
#include "cpu/blis/packing.hpp"
#include "cpu/blis/workspace.hpp"
#include "support/seeds.hpp"

namespace gemmlab {
// gtest prints test parameters through PrintTo found by argument-dependent lookup.
[[maybe_unused]] static void PrintTo(Isa isa, std::ostream* os) { *os << to_string(isa); }
}  // namespace gemmlab

namespace gemmlab::cpu {
namespace {

constexpr float kGuard = -12345.0f;  // written after the block: must survive packing

// A random lines x ld source in which element (r, c) lives at r * rs + c * cs.
struct Source {
  std::vector<float> storage;
  StridedView view;
};

// rows x cols logical matrix, stored row-major (transposed = false) or column-major, with
// `pad` extra elements per line; padding holds NaN so that reading it shows up.
Source make_source(std::int64_t rows, std::int64_t cols, bool transposed, std::int64_t pad,
                   std::uint64_t seed) {
  Source s;
  const std::int64_t lines = transposed ? cols : rows, extent = transposed ? rows : cols;
  const std::int64_t ld = extent + pad;
  s.storage.assign(static_cast<std::size_t>(lines * ld), std::numeric_limits<float>::quiet_NaN());
  std::vector<float> values(static_cast<std::size_t>(lines * extent));
  fill_random(values, seed, 1);
  for (std::int64_t l = 0; l < lines; ++l)
    for (std::int64_t e = 0; e < extent; ++e)
      s.storage[static_cast<std::size_t>(l * ld + e)] = values[static_cast<std::size_t>(l * extent + e)];
  s.view = transposed ? StridedView{s.storage.data(), 1, ld} : StridedView{s.storage.data(), ld, 1};
  return s;
}

// Same bits or both NaN is not good enough: packed values must equal the source exactly.
bool same(float x, float y) { return std::memcmp(&x, &y, sizeof x) == 0; }

class PackA : public ::testing::TestWithParam<int> {};  // MR

TEST_P(PackA, EdgePanelsAndKRemainder) {
  const int mr = GetParam();
  testing::Seeds seeds;
  for (const bool transposed : {false, true})
    for (const std::int64_t mc : {std::int64_t{1}, std::int64_t{mr - 1}, std::int64_t{mr},
                                  std::int64_t{2 * mr + 1}, std::int64_t{3 * mr - 1}})
      for (const std::int64_t kc : {1, 7, 33}) {
        if (mc < 1) continue;
        const std::uint64_t seed = seeds.next();
        SCOPED_TRACE("mr=" + std::to_string(mr) + " mc=" + std::to_string(mc) + " kc=" +
                     std::to_string(kc) + (transposed ? " A^T" : " A") + ", " + seeds.describe(seed));
        // The block starts at (i0, p0) = (2, 3) of a larger matrix.
        const std::int64_t i0 = 2, p0 = 3;
        const Source a = make_source(i0 + mc + 4, p0 + kc + 5, transposed, 3, seed);
        const std::int64_t size = round_up(mc, mr) * kc;
        std::vector<float> packed(static_cast<std::size_t>(size + 16), kGuard);
        pack_a(packed.data(), a.view, i0, mc, p0, kc, mr);
        for (std::int64_t q = 0; q * mr < mc; ++q)
          for (std::int64_t p = 0; p < kc; ++p)
            for (int r = 0; r < mr; ++r) {
              const float got = packed[static_cast<std::size_t>(q * mr * kc + p * mr + r)];
              const std::int64_t i = q * mr + r;
              const float want = i < mc ? a.view(i0 + i, p0 + p) : 0.0f;
              ASSERT_TRUE(same(got, want)) << "panel " << q << " p=" << p << " r=" << r << ": "
                                           << got << " != " << want;
            }
        for (std::int64_t x = size; x < size + 16; ++x)
          ASSERT_EQ(packed[static_cast<std::size_t>(x)], kGuard) << "wrote past the block at " << x;
      }
}

INSTANTIATE_TEST_SUITE_P(Widths, PackA, ::testing::Values(4, 6, 12, 5));

class PackB : public ::testing::TestWithParam<int> {};  // NR

TEST_P(PackB, EdgePanelsKRemainderAndPanelRanges) {
  const int nr = GetParam();
  testing::Seeds seeds;
  for (const bool transposed : {false, true})
    for (const std::int64_t nc : {std::int64_t{1}, std::int64_t{nr - 1}, std::int64_t{nr},
                                  std::int64_t{2 * nr + 3}})
      for (const std::int64_t kc : {1, 5, 31}) {
        if (nc < 1) continue;
        const std::uint64_t seed = seeds.next();
        SCOPED_TRACE("nr=" + std::to_string(nr) + " nc=" + std::to_string(nc) + " kc=" +
                     std::to_string(kc) + (transposed ? " B^T" : " B") + ", " + seeds.describe(seed));
        const std::int64_t p0 = 1, j0 = 4;
        const Source b = make_source(p0 + kc + 2, j0 + nc + 3, transposed, 5, seed);
        const std::int64_t panels = ceil_div(nc, nr), size = panels * nr * kc;
        std::vector<float> packed(static_cast<std::size_t>(size + 16), kGuard);
        // In two pieces, as two threads of a team would: panels [0, h) and [h, panels).
        const std::int64_t h = panels / 2;
        pack_b(packed.data(), b.view, p0, kc, j0, nc, nr, 0, h);
        pack_b(packed.data(), b.view, p0, kc, j0, nc, nr, h, panels);
        for (std::int64_t q = 0; q < panels; ++q)
          for (std::int64_t p = 0; p < kc; ++p)
            for (int c = 0; c < nr; ++c) {
              const float got = packed[static_cast<std::size_t>(q * nr * kc + p * nr + c)];
              const std::int64_t j = q * nr + c;
              const float want = j < nc ? b.view(p0 + p, j0 + j) : 0.0f;
              ASSERT_TRUE(same(got, want)) << "panel " << q << " p=" << p << " c=" << c << ": "
                                           << got << " != " << want;
            }
        for (std::int64_t x = size; x < size + 16; ++x)
          ASSERT_EQ(packed[static_cast<std::size_t>(x)], kGuard) << "wrote past the block at " << x;
      }
}

INSTANTIATE_TEST_SUITE_P(Widths, PackB, ::testing::Values(8, 16, 32, 7));

// A panel range that is empty packs nothing (a thread with no share of B).
TEST(PackB, EmptyRangeWritesNothing) {
  const Source b = make_source(4, 4, false, 0, 7);
  std::vector<float> packed(64, kGuard);
  pack_b(packed.data(), b.view, 0, 4, 0, 4, 16, 1, 1);
  for (const float x : packed) ASSERT_EQ(x, kGuard);
}

// Each ISA's micro-kernel on its own: C(MR, NR) = alpha Ap Bp + beta C, compared with a
// float64 product of the same packed panels; beta = 0 with NaN in C must give no NaN.
class MicroKernelTest : public ::testing::TestWithParam<Isa> {};

TEST_P(MicroKernelTest, MatchesFloat64AndHonoursBetaZero) {
  const Isa isa = GetParam();
  if (cpu_features().widest < isa)
    GTEST_SKIP() << "this CPU lacks " << to_string(isa) << " (widest: "
                 << to_string(cpu_features().widest) << "); that kernel is not exercised";
  const MicroKernel& kernel = micro_kernel(isa);
  ASSERT_EQ(kernel.isa, isa);
  testing::Seeds seeds;
  for (const std::int64_t kc : {1, 2, 3, 17, 256})
    for (const float beta : {0.0f, 1.0f, -0.5f}) {
      const std::uint64_t seed = seeds.next();
      SCOPED_TRACE(std::string(kernel.name) + " kc=" + std::to_string(kc) + " beta=" +
                   std::to_string(beta) + ", " + seeds.describe(seed));
      AlignedFloats ap, bp;
      ASSERT_TRUE(ap.reserve(kernel.mr * kc));
      ASSERT_TRUE(bp.reserve(kernel.nr * kc));
      fill_random({ap.data(), static_cast<std::size_t>(kernel.mr * kc)}, seed, 1);
      fill_random({bp.data(), static_cast<std::size_t>(kernel.nr * kc)}, seed, 2);
      const std::int64_t ldc = kernel.nr + 3;
      std::vector<float> c(static_cast<std::size_t>(kernel.mr * ldc));
      fill_random(c, seed, 3);
      if (beta == 0.0f)
        for (float& x : c) x = std::numeric_limits<float>::quiet_NaN();
      const std::vector<float> c0 = c;
      const float alpha = 1.25f;
      kernel.fn(kc, ap.data(), bp.data(), c.data(), ldc, alpha, beta);
      for (int r = 0; r < kernel.mr; ++r) {
        for (int j = 0; j < kernel.nr; ++j) {
          double sum = 0, mag = 0;
          for (std::int64_t p = 0; p < kc; ++p) {
            const double x = ap.data()[p * kernel.mr + r], y = bp.data()[p * kernel.nr + j];
            sum += x * y;
            mag += std::fabs(x * y);
          }
          const double c_in = beta == 0.0f ? 0.0 : c0[static_cast<std::size_t>(r * ldc + j)];
          const double want = alpha * sum + beta * c_in;
          const double bound = 2.0 * static_cast<double>(kc + 2) * std::ldexp(1.0, -24) *
                                   (std::fabs(alpha) * mag + std::fabs(beta * c_in)) + 1e-30;
          const float got = c[static_cast<std::size_t>(r * ldc + j)];
          ASSERT_FALSE(std::isnan(got)) << "C(" << r << ", " << j << ") is NaN";
          ASSERT_LE(std::fabs(got - want), bound) << "C(" << r << ", " << j << ")";
        }
        // Between NR and ldc lies memory that is not the tile.
        for (std::int64_t j = kernel.nr; j < ldc; ++j)
          ASSERT_TRUE(same(c[static_cast<std::size_t>(r * ldc + j)], c0[static_cast<std::size_t>(r * ldc + j)]))
              << "wrote outside the tile at row " << r << " column " << j;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Isas, MicroKernelTest,
                         ::testing::Values(Isa::Avx512, Isa::Avx2, Isa::Portable),
                         [](const ::testing::TestParamInfo<Isa>& param) {
                           return std::string(to_string(param.param));
                         });

// The rules of blocking_for, on this machine's caches and on made-up ones.
TEST(Blocking, FootprintsFitTheCachesTheyAreMeantFor) {
  for (const CacheSizes& caches : {cache_sizes(), CacheSizes{32 << 10, 256 << 10, 8 << 20, "test"},
                                   CacheSizes{48 << 10, 2 << 20, 105 << 20, "test"}})
    for (const Isa isa : {Isa::Avx512, Isa::Avx2, Isa::Portable}) {
      const MicroKernel& k = micro_kernel(isa);
      const Blocking b = blocking_for(k, caches);
      SCOPED_TRACE(std::string(k.name) + " l1d=" + std::to_string(caches.l1d) +
                   " l2=" + std::to_string(caches.l2) + " l3=" + std::to_string(caches.l3));
      EXPECT_EQ(b.mr, k.mr);
      EXPECT_EQ(b.nr, k.nr);
      EXPECT_LE(b.mr, kMaxMr);
      EXPECT_LE(b.nr, kMaxNr);
      EXPECT_EQ(b.kc % 8, 0);
      EXPECT_EQ(b.mc % b.mr, 0);
      EXPECT_EQ(b.nc % b.nr, 0);
      if (k.l1_panel == cpu::L1Panel::B) {
        EXPECT_LE(b.nr * b.kc * 4, caches.l1d);      // B micro-panel in L1
        if (b.kc < 1024) {
          EXPECT_GT(b.nr * (b.kc + 8) * 4, caches.l1d);  // ... nor much smaller
        }
        EXPECT_LE(b.kc * b.nc * 4, caches.l3 / 2);     // B block in half of L3
      } else {
        EXPECT_LE(b.mr * b.kc * 4, caches.l1d * 3 / 8);         // A micro-panel in 3/8 of L1
        EXPECT_GT(b.mr * (b.kc + 8) * 4, caches.l1d * 3 / 8);   // ... nor much smaller
        EXPECT_LE(b.kc * b.nc * 4, caches.l2 * 3 / 4);          // B block in 3/4 of L2
        EXPECT_GT(b.kc * (b.nc + b.nr) * 4, caches.l2 * 3 / 4);
      }
      EXPECT_LE(b.mc * b.kc * 4, caches.l2 / 4);     // A block in a quarter of L2
    }
  // The numbers docs/cpu-ladder.md gives: Zen 3 (AVX2) and Emerald Rapids (AVX-512).
  const Blocking zen3 = blocking_for(micro_kernel(Isa::Avx2), CacheSizes{32 << 10, 512 << 10, 32 << 20, "test"});
  EXPECT_EQ(zen3.kc, 512);
  EXPECT_EQ(zen3.mc, 60);
  EXPECT_EQ(zen3.nc, 8192);
  const Blocking emr = blocking_for(micro_kernel(Isa::Avx512), CacheSizes{48 << 10, 2 << 20, 300 << 20, "test"});
  EXPECT_EQ(emr.kc, 384);
  EXPECT_EQ(emr.mc, 336);
  EXPECT_EQ(emr.nc, 1024);
}

// The grammar of the packed rungs' block-size configurations: any subset of KC, MC, NC;
// everything else is refused with a message, and the block sizes are then left as they were.
TEST(Blocking, OverrideParsesAndRejects) {
  const Blocking base{12, 32, 384, 336, 1024};
  Blocking b = base;
  ASSERT_TRUE(apply_blocking_override("KC=256", b).is_ok());
  EXPECT_EQ(b.kc, 256);
  EXPECT_EQ(b.mc, 336);
  EXPECT_EQ(b.nc, 1024);
  b = base;
  ASSERT_TRUE(apply_blocking_override("NC=960,MC=480,KC=192", b).is_ok());
  EXPECT_EQ(b.kc, 192);
  EXPECT_EQ(b.mc, 480);
  EXPECT_EQ(b.nc, 960);
  for (const char* bad : {"", "KC", "KC=", "KC=0", "KC=99999", "KC=25x", "KC=-5", "MC=100", "NC=100",
                          "XC=8", "KC=256,", ",KC=256", "kc=256", "KC=256;MC=480"}) {
    b = base;
    const Status s = apply_blocking_override(bad, b);
    EXPECT_EQ(s.code(), StatusCode::InvalidValue) << "\"" << bad << "\"";
    EXPECT_FALSE(s.message().empty());
    EXPECT_EQ(b.kc, base.kc) << bad;
    EXPECT_EQ(b.mc, base.mc) << bad;
    EXPECT_EQ(b.nc, base.nc) << bad;
  }
}

TEST(CacheInfo, ParsesSysfsSizesAndFindsAllLevels) {
  EXPECT_EQ(parse_cache_size("48K"), 48 << 10);
  EXPECT_EQ(parse_cache_size("2048K"), 2 << 20);
  EXPECT_EQ(parse_cache_size("32M"), 32 << 20);
  EXPECT_EQ(parse_cache_size("512"), 512);
  EXPECT_EQ(parse_cache_size(""), 0);
  EXPECT_EQ(parse_cache_size("K"), 0);
  const CacheSizes& c = cache_sizes();
  EXPECT_GT(c.l1d, 0);
  EXPECT_GE(c.l2, c.l1d);
  EXPECT_GE(c.l3, 0);
  EXPECT_NE(c.source.find("l1d="), std::string::npos) << c.source;
}

}  // namespace
}  // namespace gemmlab::cpu
