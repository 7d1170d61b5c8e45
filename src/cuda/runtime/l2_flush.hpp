// Reading a device buffer through the L2, for the harness's cache flush (executor.cpp).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "gemmlab/status.hpp"

namespace gemmlab::cuda {

// Reads every 16-byte word of `data` (`bytes` a multiple of 16, `data` 16-byte aligned),
// with a few blocks per SM.
// A thread stores to `sink` only if the XOR of the words it read equals `marker`, which the
// caller picks so that it cannot (zeros XOR to zero): the loads must not be dead code.
Status read_through_l2(const void* data, std::size_t bytes, int sm_count, unsigned marker, unsigned* sink,
                       cudaStream_t stream);

}  // namespace gemmlab::cuda
