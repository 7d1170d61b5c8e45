// Every CPU rung (the anchors aside) on problems past 65,535 rows and past 65,535 columns
// (issue 28: where the CUDA rungs' grids need a second level of blocking), k small, against
// the float64 reference through the harness: C poisoned with NaN (beta = 0) or read
// (beta != 0), every element checked, every transposition in each storage order.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "bench/harness.hpp"
#include "core/executor.hpp"
#include "gemmlab/registry.hpp"
#include "support/seeds.hpp"

namespace gemmlab::bench {
namespace {

std::vector<std::string> cpu_rungs() {
  std::vector<std::string> names;
  for (const Variant& v : variants(Backend::Cpu))
    if (!v.anchor) names.push_back(v.name);
  return names;
}

TEST(CpuGridLimits, TallAndWideProblems) {
  gemmlab::testing::Seeds seeds;
  const auto executor = make_cpu_executor();
  for (Layout layout : {Layout::RowMajor, Layout::ColMajor})
    for (Op op_a : {Op::N, Op::T})
      for (Op op_b : {Op::N, Op::T}) {
        Options o;
        o.variants = cpu_rungs();
        o.shapes = {{65536 + 37, 3, 5}, {3, 65536 + 37, 5}};
        o.op_a = op_a;
        o.op_b = op_b;
        o.layout = layout;
        const bool nn = op_a == Op::N && op_b == Op::N;
        o.alpha = nn ? 1.0 : -1.5;
        o.beta = nn ? 0.0 : 0.75;  // 0: C holds NaN, every element must be written
        o.ld_padding = nn ? 0 : 3;
        o.seed = seeds.next();
        o.time = false;
        const std::string context = fmt::format("{}{} {} ({})", to_string(op_a), to_string(op_b), to_string(layout),
                                                seeds.describe(o.seed));
        std::vector<Record> records;
        const Status status = run(o, *executor, records);
        ASSERT_TRUE(status.is_ok()) << context << ": " << status.describe();
        ASSERT_EQ(records.size(), o.shapes.size() * o.variants.size()) << context;
        for (const Record& r : records) {
          SCOPED_TRACE(fmt::format("{} {} {}x{}x{}", context, r.variant, r.m, r.n, r.k));
          EXPECT_EQ(r.status, "ok") << r.message;
          EXPECT_TRUE(r.verified);
          EXPECT_TRUE(r.verification.passed) << r.verification.summary();
          EXPECT_EQ(r.verification.checked, r.m * r.n);
        }
      }
}

}  // namespace
}  // namespace gemmlab::bench
