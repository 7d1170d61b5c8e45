// C's element type as the epilogues see it: float in registers, Out in memory (float, or
// bf16 / f16, into which alpha * acc + beta * C, computed in float, is rounded to nearest
// once, as frameworks store it), one at a time and in pairs (Pair: one 8- or 4-byte access):
// the conversions cvt.rn.{bf16,f16}{,x2}.f32 and back.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace gemmlab::cuda::arch {

template <class Out>
struct CElement;
template <>
struct CElement<float> {
  using Pair = float2;
  __device__ static float widen(float x) { return x; }
  __device__ static float2 widen2(float2 x) { return x; }
  __device__ static float narrow(float x) { return x; }
  __device__ static float2 narrow2(float2 x) { return x; }
};
template <>
struct CElement<__nv_bfloat16> {
  using Pair = __nv_bfloat162;
  __device__ static float widen(__nv_bfloat16 x) { return __bfloat162float(x); }
  __device__ static float2 widen2(__nv_bfloat162 x) { return __bfloat1622float2(x); }
  __device__ static __nv_bfloat16 narrow(float x) { return __float2bfloat16_rn(x); }
  __device__ static __nv_bfloat162 narrow2(float2 x) { return __float22bfloat162_rn(x); }
};
template <>
struct CElement<__half> {
  using Pair = __half2;
  __device__ static float widen(__half x) { return __half2float(x); }
  __device__ static float2 widen2(__half2 x) { return __half22float2(x); }
  __device__ static __half narrow(float x) { return __float2half_rn(x); }
  __device__ static __half2 narrow2(float2 x) { return __float22half2_rn(x); }
};

}  // namespace gemmlab::cuda::arch
