// One way to turn CUDA and cuBLAS failures into a Status naming the call, file and line.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "gemmlab/status.hpp"

namespace gemmlab::cuda {

// Host-only (check.cpp), so that kernels' translation units need no formatting library.
Status cuda_status(cudaError_t err, const char* call, const char* file, int line);
Status cublas_status(cublasStatus_t err, const char* call, const char* file, int line);

}  // namespace gemmlab::cuda

#define CUDA_CHECK(call) \
  GEMMLAB_TRY(::gemmlab::cuda::cuda_status((call), #call, __FILE__, __LINE__))
#define CUBLAS_CHECK(call) \
  GEMMLAB_TRY(::gemmlab::cuda::cublas_status((call), #call, __FILE__, __LINE__))
// After a <<<...>>> launch: configuration errors show here, not at the launch.
#define CUDA_CHECK_LAUNCH(kernel_name) \
  GEMMLAB_TRY(::gemmlab::cuda::cuda_status(cudaGetLastError(), "launch of " kernel_name, __FILE__, __LINE__))
