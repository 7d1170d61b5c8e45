// cublasXt, cuBLAS's own layer for host operands (and several GPUs): the out-of-core GEMM's
// anchor. It tiles C into blockDim x blockDim blocks and streams them itself; its block size is
// the one knob that matters (measured on an H100: 6.1 TFLOP/s SGEMM at n = 32768 with the
// default, 51.8 with 8192), so the anchor takes it per call.
#include <cublasXt.h>

#include <vector>

#include "cuda/backend.hpp"
#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda {
namespace {

// One handle per context, for one set of devices; made on first use, destroyed with the context.
struct XtHandle {
  cublasXtHandle_t h = nullptr;
  std::vector<int> devices;
  XtHandle() = default;
  XtHandle(const XtHandle&) = delete;
  XtHandle& operator=(const XtHandle&) = delete;
  ~XtHandle() {
    if (h) cublasXtDestroy(h);
  }
};

Status handle_for(RunContext& context, const std::vector<int>& devices, cublasXtHandle_t& out) {
  XtHandle& held = context.get<XtHandle>();
  if (held.h && held.devices != devices) {
    cublasXtDestroy(held.h);
    held.h = nullptr;
  }
  if (!held.h) {
    cublasXtHandle_t h = nullptr;
    CUBLAS_CHECK(cublasXtCreate(&h));
    held.h = h;
    held.devices = devices;
    std::vector<int> ids = devices;
    CUBLAS_CHECK(cublasXtDeviceSelect(h, static_cast<int>(ids.size()), ids.data()));
  }
  out = held.h;
  return Status::ok();
}

cublasOperation_t op(bool trans) { return trans ? CUBLAS_OP_T : CUBLAS_OP_N; }

}  // namespace

Status cublasxt_default_block_dim(RunContext& context, const std::vector<int>& devices, int& out) {
  cublasXtHandle_t h = nullptr;
  GEMMLAB_TRY(handle_for(context, devices, h));
  XtHandle fresh;  // the default is a fresh handle's: this context's may have been set
  CUBLAS_CHECK(cublasXtCreate(&fresh.h));
  CUBLAS_CHECK(cublasXtGetBlockDim(fresh.h, &out));
  return Status::ok();
}

Status cublasxt_sgemm(const GemmProblem& problem, const std::vector<int>& devices, int block_dim,
                      RunContext& context) {
  if (problem.a.dtype != DType::F32 || problem.b.dtype != DType::F32 || problem.c.dtype != DType::F32)
    return {StatusCode::NotSupported, "cublasXt has float32 (SGEMM) but no bf16 or f16 GEMM"};
  cublasXtHandle_t h = nullptr;
  GEMMLAB_TRY(handle_for(context, devices, h));
  int dim = block_dim;
  if (dim <= 0) GEMMLAB_TRY(cublasxt_default_block_dim(context, devices, dim));
  CUBLAS_CHECK(cublasXtSetBlockDim(h, dim));
  // Column-major, as cuBLAS: the row-major C^T = op(B)^T op(A)^T, B first (cublas.cpp).
  const RowMajorGemm g = canonicalize(problem);
  const float alpha = static_cast<float>(g.alpha), beta = static_cast<float>(g.beta);
  CUBLAS_CHECK(cublasXtSgemm(h, op(g.trans_b), op(g.trans_a), static_cast<std::size_t>(g.n),
                             static_cast<std::size_t>(g.m), static_cast<std::size_t>(g.k), &alpha,
                             static_cast<const float*>(g.b), static_cast<std::size_t>(g.ldb),
                             static_cast<const float*>(g.a), static_cast<std::size_t>(g.lda), &beta,
                             static_cast<float*>(g.c), static_cast<std::size_t>(g.ldc)));
  return Status::ok();
}

}  // namespace gemmlab::cuda
