// Rungs wgmma_ws_bf16 and wgmma_ws_f16: bf16 (or f16) A and B, f32 accumulation and C, on
// Hopper's tensor cores fed by the tensor memory accelerator, warps specialised into one producer and two consumer
// warpgroups, persistent over the tiles (the kernel and its reasoning: wgmma_ws.cuh).
// 16-bit wgmma reads either operand K-major or MN-major, so every transposition and layout
// runs without a copy. Operands TMA cannot address (a base or row pitch that is not a
// multiple of 16 bytes) are first copied into a padded workspace (wgmma_ws.cuh); explain
// names the copies with the kernel.
#include <string>

#include "cuda/ladder/rungs.hpp"
#include "cuda/hopper/wgmma_ws.cuh"

namespace gemmlab::cuda {
namespace {

// One rung per 2-byte type: its own workspace (kernel instantiations share nothing else).
template <class Element>
wgmma_ws::Workspace& workspace() {
  static wgmma_ws::Workspace w;
  return w;
}

template <class Element>
Variant make_variant(DType input, const char* rung, const char* kernel) {
  Variant v;
  v.name = rung;
  v.backend = Backend::Cuda;
  v.tensor_cores = true;
  v.input = input;
  v.compute = DType::F32;  // exact 2-byte products, f32 sums: precision_for(input)
  v.output = DType::F32;
  v.technique = "TMA + wgmma, producer warp and 2 consumer warpgroups, persistent grouped tiles";
  v.config = wgmma_ws::config_of(wgmma_ws::kBK<Element>);
  v.can_implement = [input, rung](const GemmProblem& p) -> Status {
    GEMMLAB_TRY(require_precision(p, *precision_for(input), rung));
    return wgmma_ws::check_kernel(p, rung);
  };
  v.prepare = [](const GemmProblem& p) { return wgmma_ws::prepare<Element>(p, workspace<Element>()); };
  v.run = [](const GemmProblem& p, Stream stream) {
    return wgmma_ws::run<Element>(p, stream, workspace<Element>());
  };
  v.kernel_info = [kernel](const GemmProblem& p, KernelInfo& out) {
    return wgmma_ws::kernel_info<Element>(p, out, kernel);
  };
  v.model = wgmma_ws::model_of;
  return v;
}

}  // namespace

Variant wgmma_ws_variant(DType input) {
  return input == DType::F16
             ? make_variant<wgmma_ws::F16Operand>(DType::F16, "wgmma_ws_f16", "wgmma_ws_kernel<f16>")
             : make_variant<wgmma_ws::Bf16Operand>(DType::BF16, "wgmma_ws_bf16", "wgmma_ws_kernel<bf16>");
}

}  // namespace gemmlab::cuda
