// C <- beta * C on the device: the whole answer when k = 0 or alpha = 0.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cuda/backend.hpp"
#include "cuda/runtime/check.hpp"
#include "cuda/arch/c_element.cuh"

namespace gemmlab::cuda {
namespace {

constexpr int kScaleThreads = 256;

// C stored as T (float, bf16 or f16); beta * C computed in float and rounded once (c_element.cuh).
template <class T>
__global__ void scale_kernel(T* c, long long rows, long long cols, long long ldc, float beta) {
  const long long total = rows * cols;
  for (long long idx = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long i = idx / cols, j = idx % cols;
    T& x = c[i * ldc + j];
    // beta = 0 never reads C: NaN there must not leak.
    x = arch::CElement<T>::narrow(beta == 0.0f ? 0.0f : beta * arch::CElement<T>::widen(x));
  }
}

template <class T>
Status launch_scale(const RowMajorGemm& g, Stream stream) {
  const long long total = g.m * g.n;
  const long long blocks = (total + kScaleThreads - 1) / kScaleThreads;
  constexpr long long kMaxBlocks = 65535;
  scale_kernel<T><<<static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks), kScaleThreads, 0,
                    static_cast<cudaStream_t>(stream)>>>(static_cast<T*>(g.c), g.m, g.n, g.ldc,
                                                         static_cast<float>(g.beta));
  CUDA_CHECK_LAUNCH("scale_kernel");
  return Status::ok();
}

}  // namespace

Status scale_c(const GemmProblem& problem, Stream stream) {
  const RowMajorGemm g = canonicalize(problem);
  switch (problem.c.dtype) {
    case DType::F32: return launch_scale<float>(g, stream);
    case DType::BF16: return launch_scale<__nv_bfloat16>(g, stream);
    case DType::F16: return launch_scale<__half>(g, stream);
    default: return {StatusCode::NotSupported, "scale_c: C must hold f32, bf16 or f16"};
  }
}

}  // namespace gemmlab::cuda
