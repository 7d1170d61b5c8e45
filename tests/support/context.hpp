// A library context for tests: the CPU's, or a CUDA device's on a stream.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "gemmlab/context.hpp"

namespace gemmlab::testing {

inline std::unique_ptr<Context> make_context(Backend backend = Backend::Cpu, int device = 0,
                                             Stream stream = nullptr) {
  std::unique_ptr<Context> context;
  ContextOptions options;
  options.backend = backend;
  options.device = device;
  options.stream = stream;
  const Status s = Context::create(options, context);
  EXPECT_TRUE(s.is_ok()) << s.describe();
  return context;
}

// One CPU context for a test program (the library keeps none of its own).
inline Context& cpu_context() {
  static const std::unique_ptr<Context> context = make_context();
  return *context;
}

// One context on CUDA device 0's default stream for a test program (call only with a device).
inline Context& cuda_context() {
  static const std::unique_ptr<Context> context = make_context(Backend::Cuda);
  return *context;
}

}  // namespace gemmlab::testing
