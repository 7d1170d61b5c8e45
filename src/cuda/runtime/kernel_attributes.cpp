// What the compiler gave a rung's kernel (cudaFuncGetAttributes) and how many of its
// blocks fit on an SM (the occupancy API), for gemmlab explain.
#include <cuda_runtime.h>

#include "cuda/lab.hpp"
#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda {

Status kernel_attributes(const KernelInfo& kernel, KernelAttributes& out) {
  if (!kernel.function) return {StatusCode::InvalidValue, "kernel_attributes: the rung named no kernel"};
  cudaFuncAttributes a{};
  CUDA_CHECK(cudaFuncGetAttributes(&a, kernel.function));
  out.registers = a.numRegs;
  out.static_smem_bytes = static_cast<long long>(a.sharedSizeBytes);
  out.local_bytes = static_cast<long long>(a.localSizeBytes);
  out.const_bytes = static_cast<long long>(a.constSizeBytes);
  out.max_threads_per_block = a.maxThreadsPerBlock;
  out.ptx_version = a.ptxVersion;
  out.binary_version = a.binaryVersion;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&out.api_blocks_per_sm, kernel.function,
                                                           kernel.threads_per_block,
                                                           static_cast<std::size_t>(kernel.dynamic_smem_bytes)));
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&out.reserved_smem_per_block, cudaDevAttrReservedSharedMemoryPerBlock, device));
  return Status::ok();
}

}  // namespace gemmlab::cuda
