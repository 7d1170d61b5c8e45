// Shared-memory addresses as the PTX instructions that take them want them.
#pragma once

#include <cuda_runtime.h>

namespace gemmlab::cuda::arch {

// cvta.to.shared: a generic pointer into shared memory as a 32-bit .shared address
// (PTX ISA, "Data Movement and Conversion Instructions: cvta").
__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// st.shared.f32 (and .v2.f32) / ld.shared.f32 at a 32-bit .shared address (PTX ISA, "Data Movement and
// Conversion Instructions: st, ld"): a generic pointer would cost two registers per address.
__device__ __forceinline__ void st_shared_f32(unsigned address, float value) {
  asm volatile("st.shared.f32 [%0], %1;" ::"r"(address), "f"(value) : "memory");
}
__device__ __forceinline__ void st_shared_v2_f32(unsigned address, float x, float y) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(address), "f"(x), "f"(y) : "memory");
}
__device__ __forceinline__ float ld_shared_f32(unsigned address) {
  float value;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(value) : "r"(address) : "memory");
  return value;
}

}  // namespace gemmlab::cuda::arch
