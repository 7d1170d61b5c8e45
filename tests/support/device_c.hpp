// What the device suites of the typed GEMMs (test_c16, test_fp8) share: uploading a host
// buffer, the check that every element of C is the reference rounded once, and the name of a
// (variant, op_a, op_b, layout) case.
#pragma once

#include <gtest/gtest.h>

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cctype>
#include <cstddef>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "core/element.hpp"
#include "core/reference.hpp"
#include "cuda/runtime/buffer.hpp"
#include "gemmlab/problem.hpp"

namespace gemmlab::testing {

inline ::testing::AssertionResult upload(const std::vector<std::byte>& bytes, cuda::DeviceMemory& out) {
  if (const Status s = cuda::DeviceMemory::allocate(bytes.size(), out); !s.is_ok())
    return ::testing::AssertionFailure() << s.describe();
  if (cudaMemcpy(out.data(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice) != cudaSuccess)
    return ::testing::AssertionFailure() << "copy to the device failed";
  return ::testing::AssertionSuccess();
}

// Every element of C (`result`: C's storage decoded to floats) equals the reference rounded
// to C's type (through float32, as an epilogue computing in float32 rounds it): for problems
// whose arithmetic is exact, so that rounding is the only error left.
inline ::testing::AssertionResult rounds_reference_once(const GemmProblem& p, std::span<const float> result,
                                                        const ReferenceResult& reference) {
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      const float got = result[static_cast<std::size_t>(p.c.offset(i, j))];
      const double exact = reference.value[static_cast<std::size_t>(i * p.n + j)];
      const float want = round_to_storage(static_cast<float>(exact), p.c.dtype);
      if (!(got == want))
        return ::testing::AssertionFailure() << "C(" << i << ", " << j << ") = " << got << ", expected " << want
                                             << " (the reference " << exact << " rounded to " << to_string(p.c.dtype)
                                             << ")";
    }
  return ::testing::AssertionSuccess();
}

using TypedCase = std::tuple<const char*, Op, Op, Layout>;

// "wgmma_ws_e4m3_NT_row": test names allow only letters, digits and underscores.
inline std::string typed_case_name(const ::testing::TestParamInfo<TypedCase>& info) {
  const auto [name, op_a, op_b, layout] = info.param;
  std::string text = fmt::format("{}_{}{}_{}", name, to_string(op_a), to_string(op_b), to_string(layout));
  for (char& ch : text)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return text;
}

}  // namespace gemmlab::testing
