#include <gtest/gtest.h>

#include "gemmlab/registry.hpp"

TEST(Registry, CpuLadderHasNaiveAndAnchor) {
  EXPECT_NE(gemmlab::find_variant(gemmlab::Backend::Cpu, "naive"), nullptr);
  EXPECT_NE(gemmlab::find_variant(gemmlab::Backend::Cpu, "openblas_sgemm"), nullptr);
}
