// Global loads and stores with cache hints, for data touched exactly once (the memory
// lab's streaming kernels). PTX ISA 8.x, section 9.7.9.8 "ld" (.nc, .L1::no_allocate,
// .L2::256B prefetch size) and 9.7.9.10 "st" (.cs, cache streaming: likely accessed once).
#pragma once

#include <cuda_runtime.h>

namespace gemmlab::cuda::arch {

// ld.global.nc.L1::no_allocate.v4.u32: read-only path, no L1 line kept for a word that
// is never read again.
__device__ __forceinline__ uint4 ld_stream_16(const uint4* p) {
  uint4 r;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(p));
  return r;
}

// st.global.cs.v4.u32: a streaming store, evicted first from the caches.
__device__ __forceinline__ void st_stream_16(uint4* p, uint4 v) {
  asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

}  // namespace gemmlab::cuda::arch
