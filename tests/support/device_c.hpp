// What the device suites of the typed GEMMs (test_c16, test_fp8) share: C stored in a
// variant's output type, the run of a host problem on device copies of its storage, the check
// that every element of C is the reference rounded once, and the name of a (variant, op_a,
// op_b, layout) case.
#pragma once

#include <gtest/gtest.h>

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cctype>
#include <cstddef>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/element.hpp"
#include "core/reference.hpp"
#include "cuda/runtime/buffer.hpp"
#include "gemmlab/context.hpp"
#include "gemmlab/gemm.hpp"
#include "gemmlab/problem.hpp"
#include "gemmlab/variant.hpp"
#include "support/context.hpp"
#include "support/host_problem.hpp"

namespace gemmlab::testing {

inline ::testing::AssertionResult upload(const std::vector<std::byte>& bytes, cuda::DeviceMemory& out) {
  if (const Status s = cuda::DeviceMemory::allocate(bytes.size(), out); !s.is_ok())
    return ::testing::AssertionFailure() << s.describe();
  if (cudaMemcpy(out.data(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice) != cudaSuccess)
    return ::testing::AssertionFailure() << "copy to the device failed";
  return ::testing::AssertionSuccess();
}

// C stored in v.output: hp.c's values rounded to it (hp.c_before keeps them), `out` their
// bytes, and the problem pointing at them, with v's output and compute types.
inline void store_c_as(HostProblem& hp, const Variant& v, std::vector<std::byte>& out) {
  for (float& x : hp.c.storage) x = round_to_storage(x, v.output);
  hp.c_before = hp.c.storage;
  out = encode(hp.c.storage, v.output);
  hp.problem.c.dtype = v.output;
  hp.problem.c.data = out.data();
  hp.problem.compute = v.compute;
}

// Runs `v` through the library on device copies of `host`'s storage (A, B and C as stored:
// `a`, `b`, `c`) and, where it ran, decodes C's storage back into `result` (one float per
// stored element). Returns the library's status, or the failed copy's.
inline Status run_on_device(const Variant& v, const GemmProblem& host, const std::vector<std::byte>& a,
                            const std::vector<std::byte>& b, const std::vector<std::byte>& c,
                            std::vector<float>& result) {
  cuda::DeviceMemory da, db, dc;
  for (const auto& [bytes, memory] : {std::pair{&a, &da}, std::pair{&b, &db}, std::pair{&c, &dc}})
    if (!upload(*bytes, *memory)) return {StatusCode::InternalError, "a copy to the device failed"};
  GemmProblem dev = host;
  dev.a.data = da.data();
  dev.b.data = db.data();
  dev.c.data = dc.data();
  const Status ran = gemm(cuda_context(), dev, v);
  if (!ran.is_ok()) return ran;
  std::vector<std::byte> c_after(c.size());
  if (cudaDeviceSynchronize() != cudaSuccess ||
      cudaMemcpy(c_after.data(), dc.data(), c_after.size(), cudaMemcpyDeviceToHost) != cudaSuccess)
    return {StatusCode::InternalError, "the run or the copy of C back failed"};
  result.resize(c.size() / storage_bytes(v.output));
  decode(c_after, v.output, result);
  return Status::ok();
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
