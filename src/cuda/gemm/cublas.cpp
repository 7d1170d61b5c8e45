// The CUDA anchor: cuBLAS SGEMM with CUBLAS_PEDANTIC_MATH (plain float32 arithmetic:
// no TF32 or other reduced-precision shortcut), measured in the same run as every rung.
#include <cublas_v2.h>

#include <mutex>

#include "cuda/gemm/common.cuh"
#include "cuda/gemm/rungs.hpp"
#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda {
namespace {

struct HandleTraits {
  using Handle = cublasHandle_t;
  static void release(cublasHandle_t h) { cublasDestroy(h); }
};

// One handle for the process, created on first use (the harness's untimed verification
// run), never inside a timed region. Destroyed at exit.
Status handle(cublasHandle_t& out) {
  static cublasHandle_t h = nullptr;
  static Status created = [] {
    CUBLAS_CHECK(cublasCreate(&h));
    CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH));
    static struct Release {
      ~Release() {
        if (h) cublasDestroy(h);
      }
    } release;
    return Status::ok();
  }();
  GEMMLAB_TRY(created);
  out = h;
  return Status::ok();
}

Status run(const GemmProblem& problem, Stream stream) {
  cublasHandle_t h = nullptr;
  GEMMLAB_TRY(handle(h));
  const RowMajorGemm g = canonicalize(problem);
  const float alpha = static_cast<float>(g.alpha), beta = static_cast<float>(g.beta);
  CUBLAS_CHECK(cublasSetStream(h, static_cast<cudaStream_t>(stream)));
  // cuBLAS is column-major: the row-major C (m x n) is the column-major C^T (n x m), and
  // C^T = op(B)^T op(A)^T, where a row-major operand read column-major is its transpose.
  CUBLAS_CHECK(cublasSgemm(h, g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                           static_cast<int>(g.n), static_cast<int>(g.m), static_cast<int>(g.k), &alpha,
                           static_cast<const float*>(g.b), static_cast<int>(g.ldb),
                           static_cast<const float*>(g.a), static_cast<int>(g.lda), &beta,
                           static_cast<float*>(g.c), static_cast<int>(g.ldc)));
  return Status::ok();
}

Status can_implement(const GemmProblem& p) {
  GEMMLAB_TRY(require_f32_simt(p, "cublas_sgemm"));
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  if (p.a.ld > kIntMax || p.b.ld > kIntMax || p.c.ld > kIntMax)
    return {StatusCode::NotSupported, "cublas_sgemm: leading dimensions must be below 2^31"};
  return Status::ok();
}

}  // namespace

Variant cublas_sgemm_variant() {
  Variant v;
  v.name = "cublas_sgemm";
  v.backend = Backend::Cuda;
  v.technique = "cuBLAS SGEMM, CUBLAS_PEDANTIC_MATH (anchor)";
  v.anchor = true;
  v.can_implement = can_implement;
  v.run = run;
  v.model = minimum_traffic;
  return v;
}

}  // namespace gemmlab::cuda
