// Rung wgmma_ws_bf16: bf16 A and B, f32 accumulation and C, on Hopper's tensor cores fed
// by the tensor memory accelerator, warps specialised into one producer and two consumer
// warpgroups, persistent over the tiles (the kernel and its reasoning: wgmma_ws.cuh).
// bf16 wgmma reads either operand K-major or MN-major, so every transposition and layout
// runs without a copy. Operands TMA cannot address (a base or row pitch that is not a
// multiple of 16 bytes) are first copied into a padded workspace (wgmma_ws.cuh); explain
// names the copies with the kernel.
#include <string>

#include "cuda/gemm/rungs.hpp"
#include "cuda/gemm/wgmma_ws.cuh"

namespace gemmlab::cuda {
namespace {

using Element = wgmma_ws::Bf16Operand;
constexpr const char* kRung = "wgmma_ws_bf16";

wgmma_ws::Workspace& workspace() {
  static wgmma_ws::Workspace w;
  return w;
}

Status can_implement(const GemmProblem& p) {
  GEMMLAB_TRY(require_precision(p, *precision_for(DType::BF16), kRung));
  return wgmma_ws::check_kernel(p, kRung);
}

}  // namespace

Variant wgmma_ws_bf16_variant() {
  Variant v;
  v.name = kRung;
  v.backend = Backend::Cuda;
  v.input = DType::BF16;
  v.compute = DType::F32;  // exact bf16 products, f32 sums: precision_for(bf16)
  v.output = DType::F32;
  v.technique = "TMA + wgmma, producer warp and 2 consumer warpgroups, persistent grouped tiles";
  v.config = wgmma_ws::config_of(wgmma_ws::kBK<Element>);
  v.can_implement = can_implement;
  v.prepare = [](const GemmProblem& p) { return wgmma_ws::prepare<Element>(p, workspace()); };
  v.run = [](const GemmProblem& p, Stream stream) { return wgmma_ws::run<Element>(p, stream, workspace()); };
  v.kernel_info = [](const GemmProblem& p, KernelInfo& out) {
    return wgmma_ws::kernel_info<Element>(p, out, "wgmma_ws_kernel<bf16>");
  };
  v.model = wgmma_ws::model_of;
  return v;
}

}  // namespace gemmlab::cuda
