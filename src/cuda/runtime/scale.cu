// C <- beta * C on the device: the whole answer when k = 0 or alpha = 0.
#include <cuda_runtime.h>

#include "cuda/backend.hpp"
#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda {
namespace {

constexpr int kScaleThreads = 256;

__global__ void scale_kernel(float* c, long long rows, long long cols, long long ldc, float beta) {
  const long long total = rows * cols;
  for (long long idx = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long i = idx / cols, j = idx % cols;
    float& x = c[i * ldc + j];
    x = beta == 0.0f ? 0.0f : beta * x;  // beta = 0 never reads C: NaN there must not leak
  }
}

}  // namespace

Status scale_c(const GemmProblem& problem, Stream stream) {
  if (problem.c.dtype != DType::F32) return {StatusCode::NotSupported, "scale_c: C must hold f32"};
  const RowMajorGemm g = canonicalize(problem);
  const long long total = g.m * g.n;
  const long long blocks = (total + kScaleThreads - 1) / kScaleThreads;
  constexpr long long kMaxBlocks = 65535;
  scale_kernel<<<static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks), kScaleThreads, 0,
                 static_cast<cudaStream_t>(stream)>>>(static_cast<float*>(g.c), g.m, g.n, g.ldc,
                                                      static_cast<float>(g.beta));
  CUDA_CHECK_LAUNCH("scale_kernel");
  return Status::ok();
}

}  // namespace gemmlab::cuda
