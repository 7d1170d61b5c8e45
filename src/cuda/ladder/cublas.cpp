// The CUDA anchors, measured in the same run as every rung of their dtype:
// - cublas_sgemm: cuBLAS SGEMM with CUBLAS_PEDANTIC_MATH (plain float32 arithmetic: no
//   TF32 or other reduced-precision shortcut);
// - cublas_tf32, cublas_bf16, cublas_f16: cublasGemmEx on the tensor cores, float32 C and
//   float32 sums (CUBLAS_COMPUTE_32F_FAST_TF32 for float32 inputs, CUBLAS_COMPUTE_32F for
//   2-byte ones), on a handle in CUBLAS_DEFAULT_MATH so the compute type alone decides;
// - cublas_bf16_bf16, cublas_f16_f16: the same with C (and the beta input) in the input
//   type, as frameworks call it: float32 sums and scalars (CUBLAS_COMPUTE_32F), C rounded
//   when stored. Its split-K partial sums are added in float32 too
//   (CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION): by default cuBLAS may add them in
//   C's type, and at 16 x 600 x 700 with a bf16 C it chose 8 splits added in bf16, which put
//   5-6 % of C's elements outside the error bound of float32 sums rounded once (off by up to
//   0.06 at |C| ~ 1). (PyTorch allows that reduction by default:
//   torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction.)
#include <cublas_v2.h>

#include <limits>
#include <string>

#include "cuda/tiles/common.cuh"
#include "cuda/ladder/rungs.hpp"
#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda {
namespace {

// One handle per math mode in each context (a cuBLAS handle belongs to the device current
// when it was made), created on first use (the harness's untimed verification run), never
// inside a timed region, and destroyed with the context.
template <cublasMath_t Mode>
struct Handle {
  cublasHandle_t h = nullptr;
  Handle() = default;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (h) cublasDestroy(h);
  }
};

template <cublasMath_t Mode>
Status handle(RunContext& context, cublasHandle_t& out) {
  Handle<Mode>& held = context.get<Handle<Mode>>();
  if (!held.h) {
    cublasHandle_t h = nullptr;
    CUBLAS_CHECK(cublasCreate(&h));
    held.h = h;
    CUBLAS_CHECK(cublasSetMathMode(h, Mode));
  }
  out = held.h;
  return Status::ok();
}

// cuBLAS is column-major: the row-major C (m x n) is the column-major C^T (n x m), and
// C^T = op(B)^T op(A)^T, where a row-major operand read column-major is its transpose.
// So B goes first, and each operand keeps its own transposition flag.
cublasOperation_t op(bool trans) { return trans ? CUBLAS_OP_T : CUBLAS_OP_N; }

Status run_sgemm(const GemmProblem& problem, RunContext& context) {
  cublasHandle_t h = nullptr;
  GEMMLAB_TRY(handle<CUBLAS_PEDANTIC_MATH>(context, h));
  const Stream stream = context.stream();
  const RowMajorGemm g = canonicalize(problem);
  const float alpha = static_cast<float>(g.alpha), beta = static_cast<float>(g.beta);
  CUBLAS_CHECK(cublasSetStream(h, static_cast<cudaStream_t>(stream)));
  CUBLAS_CHECK(cublasSgemm(h, op(g.trans_b), op(g.trans_a), static_cast<int>(g.n), static_cast<int>(g.m),
                           static_cast<int>(g.k), &alpha, static_cast<const float*>(g.b), static_cast<int>(g.ldb),
                           static_cast<const float*>(g.a), static_cast<int>(g.lda), &beta,
                           static_cast<float*>(g.c), static_cast<int>(g.ldc)));
  return Status::ok();
}

// What cublasGemmEx is told for each tensor-core dtype and C type.
struct GemmExTypes {
  cudaDataType ab;              // A and B in memory
  cudaDataType c;               // C in memory (and beta's input)
  cublasComputeType_t compute;  // float32 sums; FAST_TF32 lets it reduce float32 operands
};

cudaDataType cuda_type(DType type) {
  switch (type) {
    case DType::BF16: return CUDA_R_16BF;
    case DType::F16: return CUDA_R_16F;
    default: return CUDA_R_32F;
  }
}

GemmExTypes gemm_ex_types(DType dtype, DType output) {
  return {cuda_type(dtype), cuda_type(output),
          dtype == DType::TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F};
}

// The GemmEx anchors' math mode: the compute type decides, and reductions stay in it.
constexpr auto kComputeTypeReductions =
    static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);

Status run_gemm_ex(const GemmProblem& problem, RunContext& context, GemmExTypes types) {
  cublasHandle_t h = nullptr;
  GEMMLAB_TRY(handle<kComputeTypeReductions>(context, h));
  const Stream stream = context.stream();
  const RowMajorGemm g = canonicalize(problem);
  // CUBLAS_COMPUTE_32F and _FAST_TF32 take float scalars.
  const float alpha = static_cast<float>(g.alpha), beta = static_cast<float>(g.beta);
  CUBLAS_CHECK(cublasSetStream(h, static_cast<cudaStream_t>(stream)));
  CUBLAS_CHECK(cublasGemmEx(h, op(g.trans_b), op(g.trans_a), static_cast<int>(g.n), static_cast<int>(g.m),
                            static_cast<int>(g.k), &alpha, g.b, types.ab, static_cast<int>(g.ldb), g.a, types.ab,
                            static_cast<int>(g.lda), &beta, g.c, types.c, static_cast<int>(g.ldc), types.compute,
                            CUBLAS_GEMM_DEFAULT));
  return Status::ok();
}

Status require_int_ld(const GemmProblem& p, const char* name) {
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  if (p.a.ld > kIntMax || p.b.ld > kIntMax || p.c.ld > kIntMax)
    return {StatusCode::NotSupported, std::string(name) + ": leading dimensions must be below 2^31"};
  return Status::ok();
}

}  // namespace

Variant cublas_sgemm_variant() {
  Variant v;
  v.name = "cublas_sgemm";
  v.backend = Backend::Cuda;
  v.technique = "cuBLAS SGEMM, CUBLAS_PEDANTIC_MATH (anchor)";
  v.anchor = true;
  v.can_implement = [](const GemmProblem& p) {
    GEMMLAB_TRY(require_f32_simt(p, "cublas_sgemm"));
    return require_int_ld(p, "cublas_sgemm");
  };
  v.run = run_sgemm;
  v.model = minimum_traffic;
  return v;
}

// C in float32 keeps the anchor's name; C in the input type adds it: cublas_bf16_bf16.
Variant cublas_gemm_ex_variant(DType dtype, DType output) {
  const Precision precision = *precision_for(dtype, output);
  Variant v;
  v.name = "cublas_" + std::string(to_string(dtype));
  if (output != DType::F32) v.name.append("_").append(to_string(output));
  v.backend = Backend::Cuda;
  v.tensor_cores = true;
  v.input = precision.input;
  v.compute = precision.compute;
  v.output = precision.output;
  v.technique = dtype == DType::TF32 ? "cuBLAS GemmEx, CUBLAS_COMPUTE_32F_FAST_TF32 (anchor)"
                                     : "cuBLAS GemmEx, " + std::string(to_string(dtype)) + " in, " +
                                           std::string(to_string(output)) + " out, CUBLAS_COMPUTE_32F" +
                                           (output != DType::F32 ? ", float32 split-K reductions" : "") + " (anchor)";
  v.anchor = true;
  // bf16 and tf32 tensor-core math: sm_80 (cuBLAS has no bf16 GEMM before, and tf32 would not
  // be what the anchor measures).
  if (dtype == DType::BF16 || dtype == DType::TF32) {
    v.min_compute_capability = 80;
    v.arch_features = std::string(to_string(dtype)) + " tensor-core math";
  }
  const std::string name = v.name;
  v.can_implement = [precision, name](const GemmProblem& p) {
    GEMMLAB_TRY(require_precision(p, precision, name.c_str()));
    return require_int_ld(p, name.c_str());
  };
  const GemmExTypes types = gemm_ex_types(dtype, output);
  v.run = [types](const GemmProblem& p, RunContext& context) { return run_gemm_ex(p, context, types); };
  v.model = minimum_traffic;
  return v;
}

}  // namespace gemmlab::cuda
