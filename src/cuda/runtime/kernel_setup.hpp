// Per-kernel set-up done once per context: raising a kernel's dynamic shared-memory limit,
// counting its resident clusters. The driver keeps such attributes per device, so a
// process-wide "done" flag would skip the second device; the context, bound to one device,
// remembers instead.
#pragma once

#include <cuda_runtime.h>

#include <utility>
#include <vector>

#include "cuda/runtime/check.hpp"
#include "gemmlab/run_context.hpp"

namespace gemmlab::cuda {

// The kernels (by host-side symbol) whose set-up is done in a context, with one number kept
// for each (resident clusters, say).
struct KernelSetups {
  std::vector<std::pair<const void*, int>> done;
  const int* find(const void* kernel) const {
    for (const auto& [k, value] : done)
      if (k == kernel) return &value;
    return nullptr;
  }
};

// Lets `kernel` use `bytes` of dynamic shared memory on the context's device (once).
template <class Kernel>
Status allow_dynamic_smem(RunContext& context, Kernel* kernel, int bytes) {
  KernelSetups& setups = context.get<KernelSetups>();
  const void* key = reinterpret_cast<const void*>(kernel);
  if (setups.find(key)) return Status::ok();
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  setups.done.emplace_back(key, bytes);
  return Status::ok();
}

}  // namespace gemmlab::cuda
