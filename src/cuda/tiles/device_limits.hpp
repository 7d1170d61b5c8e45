// The current device's limits a tile configuration must fit, read from the device, never
// from one GPU's constants: dynamic shared memory per block with the opt-in is 64 KiB on
// sm_75, 99 KiB on sm_86 and sm_89, 163 KiB on sm_80 and 227 KiB on sm_90.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "gemmlab/status.hpp"

namespace gemmlab::cuda {

// Bytes of shared memory one block may use on the current device (cudaFuncSetAttribute's
// opt-in limit); 0 when unreadable (no device). Read on each call: it is a cached driver
// attribute, and the current device may change between calls.
inline int smem_per_block_optin() {
  int device = 0, bytes = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess)
    return 0;
  return bytes;
}

// Whether `bytes` of shared memory per block fit the current device (true when unknown: the
// launch then says why).
inline bool smem_fits(int bytes) {
  const int limit = smem_per_block_optin();
  return limit == 0 || bytes <= limit;
}

// NotSupported naming the rung's configuration when its `bytes` of shared memory per block
// do not fit the current device.
inline Status require_smem(int bytes, const std::string& rung, const std::string& config) {
  const int limit = smem_per_block_optin();
  if (limit == 0 || bytes <= limit) return Status::ok();
  return {StatusCode::NotSupported,
          rung + ": configuration " + config + " needs " + std::to_string((bytes + 1023) / 1024) +
              " KiB of shared memory per block; this GPU allows " + std::to_string(limit / 1024) + " KiB"};
}

}  // namespace gemmlab::cuda
