// The float64 reference on the device: cuBLAS DGEMM on upcast inputs, for problems too
// large for the host reference to be quick. Checked against host float64 dot products.
#pragma once

#include <cuda_runtime.h>

#include "core/reference.hpp"

namespace gemmlab::cuda {

// Problems with at least kDeviceReferenceMinFmas multiply-adds (core/reference.hpp, where
// the harness's memory plan reads it too) go to the device; smaller ones stay on the host.

// Same contract as reference_gemm(): `problem` lives in host memory.
Status reference_on_device(const GemmProblem& problem, cudaStream_t stream, ReferenceResult& out);

}  // namespace gemmlab::cuda
