// Rung wgmma_ws_bf16: bf16 A and B, f32 accumulation and C, on Hopper's tensor cores fed
// by the tensor memory accelerator, warps specialised into one producer and two consumer
// warpgroups, persistent over the tiles (the kernel and its reasoning: wgmma_ws.cuh).
// bf16 wgmma reads either operand K-major or MN-major, so every transposition and layout
// runs without a copy.
#include <string>

#include "cuda/gemm/rungs.hpp"
#include "cuda/gemm/wgmma_ws.cuh"

namespace gemmlab::cuda {
namespace {

using Element = wgmma_ws::Bf16Operand;
constexpr const char* kRung = "wgmma_ws_bf16";

Status can_implement(const GemmProblem& p) {
  if (p.a.dtype != DType::BF16 || p.b.dtype != DType::BF16 || p.c.dtype != DType::F32)
    return {StatusCode::NotSupported, std::string(kRung) + " takes bf16 A and B and f32 C (got " +
                                          std::string(to_string(p.a.dtype)) + " inputs, " +
                                          std::string(to_string(p.c.dtype)) + " output)"};
  return wgmma_ws::check_problem<Element>(p, kRung);
}

}  // namespace

Variant wgmma_ws_bf16_variant() {
  Variant v;
  v.name = kRung;
  v.backend = Backend::Cuda;
  v.input = DType::BF16;
  v.compute = DType::F32;  // exact bf16 products, f32 sums (precision_for(bf16))
  v.output = DType::F32;
  v.technique = "TMA + wgmma, producer warp and 2 consumer warpgroups, persistent grouped tiles";
  v.config = wgmma_ws::config_of(wgmma_ws::kBK<Element>);
  v.can_implement = can_implement;
  v.run = wgmma_ws::run<Element>;
  v.kernel_info = [](const GemmProblem& p, KernelInfo& out) {
    return wgmma_ws::kernel_info<Element>(p, out, "wgmma_ws_kernel<bf16>");
  };
  v.model = wgmma_ws::model_of;
  return v;
}

}  // namespace gemmlab::cuda
