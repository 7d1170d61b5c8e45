// Shared-memory addresses as the PTX instructions that take them want them.
#pragma once

#include <cuda_runtime.h>

namespace gemmlab::cuda::arch {

// cvta.to.shared: a generic pointer into shared memory as a 32-bit .shared address
// (PTX ISA, "Data Movement and Conversion Instructions: cvta").
__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

}  // namespace gemmlab::cuda::arch
