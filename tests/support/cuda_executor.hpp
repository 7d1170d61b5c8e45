// The CUDA executor for a GPU test, or a visible skip without a device (or without CUDA in
// this build):
//   TEST(Suite, Name) {
//     REQUIRE_CUDA(ex);   // std::unique_ptr<Executor> ex, or GTEST_SKIP
//     bench::run(options, *ex, records);
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "core/executor.hpp"
#include "gemmlab/registry.hpp"

namespace gemmlab::testing {

// Null without a device; a failure to make the executor where there is one is a test failure.
inline std::unique_ptr<Executor> cuda_or_skip() {
  std::unique_ptr<Executor> ex;
  if (!cuda_device_present()) return ex;
  if (Status s = make_cuda_executor(ex); !s) ADD_FAILURE() << s.describe();
  return ex;
}

}  // namespace gemmlab::testing

#define REQUIRE_CUDA(ex)                                     \
  auto ex = ::gemmlab::testing::cuda_or_skip();              \
  if (!ex) GTEST_SKIP() << "no CUDA device on this machine (or no CUDA in this build)"
