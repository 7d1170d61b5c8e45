#include "cuda/runtime/check.hpp"

#include <fmt/format.h>

namespace gemmlab::cuda {

Status cuda_status(cudaError_t err, const char* call, const char* file, int line) {
  if (err == cudaSuccess) return Status::ok();
  // The runtime also keeps a failed call's error as the thread's last error (unless it is
  // sticky); left there, the next launch check (CUDA_CHECK_LAUNCH) would report it again and
  // blame a kernel that ran fine. It is reported here, so it is cleared here.
  (void)cudaGetLastError();
  const StatusCode code = err == cudaErrorMemoryAllocation ? StatusCode::AllocFailed
                          : err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver
                              ? StatusCode::NotSupported
                          : err == cudaErrorNoKernelImageForDevice ? StatusCode::ArchMismatch
                                                                   : StatusCode::ExecutionFailed;
  return {code, fmt::format("{} ({}) in {} at {}:{}", cudaGetErrorString(err), cudaGetErrorName(err),
                            call, file, line)};
}

Status cublas_status(cublasStatus_t err, const char* call, const char* file, int line) {
  if (err == CUBLAS_STATUS_SUCCESS) return Status::ok();
  const StatusCode code = err == CUBLAS_STATUS_ALLOC_FAILED    ? StatusCode::AllocFailed
                          : err == CUBLAS_STATUS_NOT_SUPPORTED ? StatusCode::NotSupported
                          : err == CUBLAS_STATUS_ARCH_MISMATCH ? StatusCode::ArchMismatch
                          : err == CUBLAS_STATUS_INVALID_VALUE ? StatusCode::InvalidValue
                                                               : StatusCode::ExecutionFailed;
  return {code, fmt::format("{} in {} at {}:{}", cublasGetStatusString(err), call, file, line)};
}

}  // namespace gemmlab::cuda
