// Assertions shared by the test suites; each failure says where and what.
//   EXPECT_TRUE(contains(status.message(), "lda"));
//   EXPECT_TRUE(bitwise_equal(before, after));
//   EXPECT_TRUE(equals_reference(hp, result, reference));   // exact, for integer inputs
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "core/reference.hpp"
#include "support/host_problem.hpp"

namespace gemmlab::testing {

inline ::testing::AssertionResult contains(std::string_view text, std::string_view needle) {
  if (text.find(needle) != std::string_view::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << needle << "'";
}

// Same bits everywhere (NaN included): for buffers that must be left alone.
inline ::testing::AssertionResult bitwise_equal(std::span<const float> expected,
                                                std::span<const float> actual) {
  if (expected.size() != actual.size())
    return ::testing::AssertionFailure()
           << "sizes differ: " << expected.size() << " vs " << actual.size();
  for (std::size_t i = 0; i < expected.size(); ++i)
    if (std::memcmp(&expected[i], &actual[i], sizeof(float)) != 0)
      return ::testing::AssertionFailure()
             << "element " << i << " changed from " << expected[i] << " to " << actual[i];
  return ::testing::AssertionSuccess();
}

// Every element of C (as stored in `result`) equals the reference rounded to float32: for
// integer-valued inputs, where every product and partial sum is exact.
inline ::testing::AssertionResult equals_reference(const HostProblem& hp, std::span<const float> result,
                                                   const ReferenceResult& reference) {
  const Matrix& c = hp.problem.c;
  for (std::int64_t i = 0; i < hp.problem.m; ++i)
    for (std::int64_t j = 0; j < hp.problem.n; ++j) {
      const float got = result[static_cast<std::size_t>(c.offset(i, j))];
      const auto want = static_cast<float>(reference.value[static_cast<std::size_t>(i * hp.problem.n + j)]);
      if (!(got == want))
        return ::testing::AssertionFailure()
               << "C(" << i << ", " << j << ") = " << got << ", expected exactly " << want << " ("
               << hp.problem.describe() << ")";
    }
  return ::testing::AssertionSuccess();
}

// No element of C is NaN (padding excluded: it holds canaries).
inline ::testing::AssertionResult no_nan_in_c(const HostProblem& hp, std::span<const float> result) {
  const Matrix& c = hp.problem.c;
  for (std::int64_t i = 0; i < hp.problem.m; ++i)
    for (std::int64_t j = 0; j < hp.problem.n; ++j)
      if (std::isnan(result[static_cast<std::size_t>(c.offset(i, j))]))
        return ::testing::AssertionFailure() << "C(" << i << ", " << j << ") is NaN";
  return ::testing::AssertionSuccess();
}

}  // namespace gemmlab::testing
