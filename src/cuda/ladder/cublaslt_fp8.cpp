// The FP8 anchor: cuBLASLt's FP8 matmul (cublasLtMatmul, e4m3 A and B, CUBLAS_COMPUTE_32F,
// C in f32, bf16 or f16), measured beside the FP8 rungs. As cuBLASLt ships it: its FP8
// sums promoted (CUBLASLT_MATMUL_DESC_FAST_ACCUM off, the default), and split-K partials
// added in f32 as the GemmEx anchors' are (cublas.cpp: the reduction scheme in C's type is
// masked out). The per-tensor scales reach it folded into alpha, as they reach the rungs.
//
// What cuBLASLt takes in FP8 (cuBLAS documentation, cublasLtMatmul): its A transposed and its
// B not, in its column-major terms; here (cuBLAS's A is gemmlab's B, as in cublas.cpp) both
// operands K-major: A stored m x k, B stored n x k, row-major. It has no e5m2 x e5m2 product
// (it multiplies e5m2 only by e4m3), so --dtype e5m2 runs without an anchor.
//
// The descriptors and the algorithm its heuristic picks are made once per problem shape and
// kept in the context (prepare), so a timed call is the matmul alone.
#include <cublasLt.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cuda/ladder/rungs.hpp"
#include "cuda/runtime/buffer.hpp"
#include "cuda/tiles/common.cuh"
#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda {
namespace {

// cuBLAS's guidance for Hopper: a 32 MiB workspace lets every algorithm run.
constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;
constexpr std::size_t kPlansKept = 16;  // problem shapes whose descriptors a context keeps

// A cuBLASLt object, destroyed with its owner.
template <class T, cublasStatus_t (*Destroy)(T)>
struct LtObject {
  T h = nullptr;
  LtObject() = default;
  LtObject(const LtObject&) = delete;
  LtObject& operator=(const LtObject&) = delete;
  ~LtObject() {
    if (h) Destroy(h);
  }
};
using MatmulDesc = LtObject<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using MatrixLayout = LtObject<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
using Preference = LtObject<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

// The largest power of two up to 256 that divides the address: the alignment the heuristic
// may assume.
std::uint32_t alignment_of(const void* p) {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  std::uint32_t a = 256;
  while (a > 1 && address % a != 0) a /= 2;
  return a;
}

// What a plan depends on: the shape, the pitches, the types and the operands' alignment.
struct PlanKey {
  std::int64_t m, n, k, lda, ldb, ldc;
  DType input, output;
  std::uint32_t align_a, align_b, align_c;
  bool operator==(const PlanKey&) const = default;
};

PlanKey key_of(const RowMajorGemm& g, DType input, DType output) {
  return {g.m, g.n, g.k, g.lda, g.ldb, g.ldc, input, output, alignment_of(g.a), alignment_of(g.b), alignment_of(g.c)};
}

struct Plan {
  PlanKey key;
  MatmulDesc desc;
  MatrixLayout a, b, c;  // cuBLAS's A (gemmlab's B), its B (gemmlab's A), C
  cublasLtMatmulAlgo_t algo{};
};

// A context's cuBLASLt state: the handle, the workspace and the recent plans.
struct LtState {
  LtObject<cublasLtHandle_t, cublasLtDestroy> handle;
  DeviceMemory workspace;
  std::vector<std::unique_ptr<Plan>> plans;
};

cudaDataType lt_type(DType type) {
  switch (type) {
    case DType::E4M3: return CUDA_R_8F_E4M3;
    case DType::E5M2: return CUDA_R_8F_E5M2;
    case DType::BF16: return CUDA_R_16BF;
    case DType::F16: return CUDA_R_16F;
    default: return CUDA_R_32F;
  }
}

Status make_plan(LtState& lt, const PlanKey& key, std::unique_ptr<Plan>& out) {
  auto plan = std::make_unique<Plan>();
  plan->key = key;
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan->desc.h, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t transposed = CUBLAS_OP_T, plain = CUBLAS_OP_N;
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->desc.h, CUBLASLT_MATMUL_DESC_TRANSA, &transposed, sizeof transposed));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->desc.h, CUBLASLT_MATMUL_DESC_TRANSB, &plain, sizeof plain));
  const auto u = [](std::int64_t x) { return static_cast<std::uint64_t>(x); };
  // Column-major: cuBLAS's A is k x n (gemmlab's B, n x k row-major), its B k x m, C n x m.
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->a.h, lt_type(key.input), u(key.k), u(key.n), key.ldb));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->b.h, lt_type(key.input), u(key.k), u(key.m), key.lda));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->c.h, lt_type(key.output), u(key.n), u(key.m), key.ldc));
  Preference preference;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference.h));
  const std::uint64_t workspace = kWorkspaceBytes;
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(preference.h, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                    sizeof workspace));
  const std::uint32_t reductions = CUBLASLT_REDUCTION_SCHEME_MASK & ~CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE;
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(preference.h, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                                    &reductions, sizeof reductions));
  // Its A is gemmlab's B: the alignments follow the operands.
  const std::pair<cublasLtMatmulPreferenceAttributes_t, std::uint32_t> alignments[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, key.align_b},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, key.align_a},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, key.align_c},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, key.align_c}};
  for (const auto& [attribute, bytes] : alignments)
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(preference.h, attribute, &bytes, sizeof bytes));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(lt.handle.h, plan->desc.h, plan->a.h, plan->b.h, plan->c.h, plan->c.h,
                                              preference.h, 1, &result, &found));
  if (found < 1)
    return {StatusCode::NotSupported,
            "cublaslt: no FP8 algorithm for " + std::to_string(key.m) + " x " + std::to_string(key.n) + " x " +
                std::to_string(key.k) + " with these pitches and alignments"};
  plan->algo = result.algo;
  out = std::move(plan);
  return Status::ok();
}

// The context's plan for `g`, made on first use (prepare; run only finds it).
Status find_plan(RunContext& context, const RowMajorGemm& g, DType input, DType output, Plan*& out) {
  LtState& lt = context.get<LtState>();
  if (!lt.handle.h) CUBLAS_CHECK(cublasLtCreate(&lt.handle.h));
  if (lt.workspace.bytes() < kWorkspaceBytes) GEMMLAB_TRY(DeviceMemory::allocate(kWorkspaceBytes, lt.workspace));
  const PlanKey key = key_of(g, input, output);
  for (const auto& plan : lt.plans)
    if (plan->key == key) {
      out = plan.get();
      return Status::ok();
    }
  std::unique_ptr<Plan> plan;
  GEMMLAB_TRY(make_plan(lt, key, plan));
  if (lt.plans.size() == kPlansKept) lt.plans.erase(lt.plans.begin());
  lt.plans.push_back(std::move(plan));
  out = lt.plans.back().get();
  return Status::ok();
}

Status run_fp8(const GemmProblem& problem, RunContext& context, const Precision& precision) {
  const RowMajorGemm g = canonicalize(problem);
  Plan* plan = nullptr;
  GEMMLAB_TRY(find_plan(context, g, precision.input, precision.output, plan));
  const LtState& lt = context.get<LtState>();
  const float alpha = static_cast<float>(g.alpha), beta = static_cast<float>(g.beta);
  CUBLAS_CHECK(cublasLtMatmul(lt.handle.h, plan->desc.h, &alpha, g.b, plan->a.h, g.a, plan->b.h, &beta, g.c,
                              plan->c.h, g.c, plan->c.h, &plan->algo, lt.workspace.data(), kWorkspaceBytes,
                              static_cast<cudaStream_t>(context.stream())));
  return Status::ok();
}

}  // namespace

// cublaslt_e4m3 (f32 C), cublaslt_e4m3_bf16, cublaslt_e4m3_f16.
Variant cublaslt_fp8_variant(DType input, DType output) {
  const Precision precision = *precision_for(input, output);
  Variant v;
  v.name = "cublaslt_" + std::string(to_string(input));
  if (output != DType::F32) v.name.append("_").append(to_string(output));
  v.backend = Backend::Cuda;
  v.tensor_cores = true;
  v.input = precision.input;
  v.compute = precision.compute;
  v.output = precision.output;
  v.technique = "cuBLASLt matmul, " + std::string(to_string(input)) + " in, " + std::string(to_string(output)) +
                " out, CUBLAS_COMPUTE_32F, promoted FP8 sums (anchor)";
  v.anchor = true;
  v.min_compute_capability = 89;  // FP8 tensor cores: Ada and Hopper
  v.arch_features = "FP8 tensor-core math";
  const std::string name = v.name;
  v.can_implement = [precision, name](const GemmProblem& p) {
    GEMMLAB_TRY(require_precision(p, precision, name.c_str()));
    const RowMajorGemm g = canonicalize(p);
    if (g.trans_a || !g.trans_b)
      return Status{StatusCode::NotSupported, name + ": cuBLASLt's FP8 matmul takes both operands K-major (row-major "
                                                     "A stored m x k and B stored n x k: --ops NT)"};
    // Every row on 16 bytes: its heuristic refuses other pitches (measured: 1 x 300 x 31 with
    // an f32 C of pitch 301).
    const auto aligned = [](const void* data) { return reinterpret_cast<std::uintptr_t>(data) % 16 == 0; };
    if (g.lda % 16 != 0 || g.ldb % 16 != 0 || (g.ldc * static_cast<std::int64_t>(storage_bytes(p.c.dtype))) % 16 != 0 ||
        !aligned(g.a) || !aligned(g.b) || !aligned(g.c))
      return Status{StatusCode::NotSupported, name + ": cuBLASLt's FP8 matmul takes A, B and C with 16-byte aligned "
                                                     "bases and rows (pitches of A and B multiples of 16 elements)"};
    return Status::ok();
  };
  v.prepare = [precision](const GemmProblem& p, RunContext& context) {
    if (p.m == 0 || p.n == 0 || p.k == 0) return Status::ok();
    Plan* plan = nullptr;
    return find_plan(context, canonicalize(p), precision.input, precision.output, plan);
  };
  v.run = [precision](const GemmProblem& p, RunContext& context) { return run_fp8(p, context, precision); };
  v.model = minimum_traffic;
  return v;
}

}  // namespace gemmlab::cuda
