// The Hopper rungs (12-16) address C and the operands in 32-bit coordinates and do not split
// problems into sub-grids: a problem within two tiles of 2^31 in m, n or k is refused by
// name in can_implement, before anything is allocated or launched. No GPU is needed: the
// data is never touched.
#include <gtest/gtest.h>

#include <string>

#include "gemmlab/registry.hpp"
#include "support/assertions.hpp"

namespace gemmlab {
namespace {

GemmProblem shaped(const Variant& v, std::int64_t m, std::int64_t n, std::int64_t k) {
  static float never_read;  // can_implement only looks at the shape and the types
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.compute = v.compute;
  p.a = Matrix{&never_read, m, k, k, Layout::RowMajor, v.input};
  p.b = Matrix{&never_read, k, n, n, Layout::RowMajor, v.input};
  p.c = Matrix{&never_read, m, n, n, Layout::RowMajor, v.output};
  return p;
}

TEST(HopperExtents, ProblemsPastThirtyTwoBitCoordinatesAreRefusedByName) {
  int checked = 0;
  for (const Variant& v : variants(Backend::Cuda)) {
    if (v.arch_specific != "90a") continue;
    ++checked;
    constexpr std::int64_t kHuge = (std::int64_t{1} << 31) - 1;
    for (const GemmProblem& p : {shaped(v, kHuge, 8, 8), shaped(v, 8, kHuge, 8)}) {
      const Status s = v.can_implement(p);
      EXPECT_EQ(s.code(), StatusCode::NotSupported) << v.name << ": " << s.describe();
      EXPECT_TRUE(testing::contains(s.message(), v.name)) << s.message();
      EXPECT_TRUE(testing::contains(s.message(), "32-bit")) << s.message();
    }
    EXPECT_TRUE(v.can_implement(shaped(v, 1 << 20, 64, 64)).is_ok()) << v.name;
  }
  if (checked == 0) GTEST_SKIP() << "SKIPPED: this build has no Hopper rungs";
}

}  // namespace
}  // namespace gemmlab
