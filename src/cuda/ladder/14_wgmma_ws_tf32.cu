// Rung wgmma_ws_tf32: float32 A, B and C, multiplied on the tensor cores as TF32 (10-bit
// mantissa, products exact in f32, f32 accumulation): the warp-specialised TMA + wgmma
// pipeline of wgmma_ws.cuh with 32 floats of K per 128-byte row and wgmma m64n256k8.
// tf32 wgmma reads both operands K-major only: op(A) with K contiguous (row-major A, or
// column-major A^T) and op(B) with K contiguous (row-major B^T, column-major B) go
// straight in; an operand of another layout is first rewritten K-major through a padded
// shared-memory tile (operand_staging.cuh, about 2 x its bytes of traffic), and one TMA
// cannot address is copied into a padded workspace. explain names the copies.
#include <string>

#include "cuda/ladder/rungs.hpp"
#include "cuda/hopper/wgmma_ws.cuh"

namespace gemmlab::cuda {
namespace {

using Element = wgmma_ws::Tf32Operand;
constexpr const char* kRung = "wgmma_ws_tf32";

wgmma_ws::Workspace& workspace() {
  static wgmma_ws::Workspace w;
  return w;
}

Status can_implement(const GemmProblem& p) {
  GEMMLAB_TRY(require_precision(p, *precision_for(DType::TF32), kRung));
  return wgmma_ws::check_kernel(p, kRung);
}

}  // namespace

Variant wgmma_ws_tf32_variant() {
  Variant v;
  v.name = kRung;
  v.backend = Backend::Cuda;
  v.tensor_cores = true;
  v.input = DType::F32;
  v.compute = DType::TF32;
  v.output = DType::F32;
  v.technique = "the wgmma_ws pipeline on f32 data in TF32 (B K-major, A of any layout read into registers)";
  v.config = wgmma_ws::config_of(wgmma_ws::kBK<Element>);
  v.can_implement = can_implement;
  v.prepare = [](const GemmProblem& p) { return wgmma_ws::prepare<Element>(p, workspace()); };
  v.run = [](const GemmProblem& p, Stream stream) { return wgmma_ws::run<Element>(p, stream, workspace()); };
  v.kernel_info = [](const GemmProblem& p, KernelInfo& out) {
    return wgmma_ws::kernel_info<Element>(p, out, "wgmma_ws_kernel<tf32>");
  };
  v.model = wgmma_ws::model_of;
  return v;
}

}  // namespace gemmlab::cuda
