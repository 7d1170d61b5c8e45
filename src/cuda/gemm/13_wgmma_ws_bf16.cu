// Rung wgmma_ws_bf16: bf16 A and B, f32 accumulation and C, on Hopper's tensor cores fed
// by the tensor memory accelerator, warps specialised into one producer and two consumer
// warpgroups, persistent over the tiles (the kernel and its reasoning: wgmma_ws.cuh).
// bf16 wgmma reads either operand K-major or MN-major, so every transposition and layout
// runs without a copy. Operands TMA cannot address (a base or row pitch that is not a
// multiple of 16 bytes) take another path, the mma_sync_bf16 rung's kernel with its
// guarded element loads; explain names the kernel that ran.
#include <string>

#include "cuda/gemm/rungs.hpp"
#include "cuda/gemm/wgmma_ws.cuh"

namespace gemmlab::cuda {
namespace {

using Element = wgmma_ws::Bf16Operand;
constexpr const char* kRung = "wgmma_ws_bf16";

// The path for operands TMA cannot address.
const Variant& fallback() {
  static const Variant v = mma_sync_variant(DType::BF16);
  return v;
}

bool tma_path(const GemmProblem& p) {
  return wgmma_ws::tma_addressable<Element>(canonicalize(p), kRung).is_ok();
}

Status can_implement(const GemmProblem& p) {
  GEMMLAB_TRY(require_precision(p, *precision_for(DType::BF16), kRung));
  GEMMLAB_TRY(wgmma_ws::check_kernel<Element>(p, kRung));
  if (p.m == 0 || p.n == 0 || p.k == 0 || tma_path(p)) return Status::ok();
  return fallback().can_implement(p);
}

Status run(const GemmProblem& p, Stream stream) {
  return tma_path(p) ? wgmma_ws::run<Element>(p, stream) : fallback().run(p, stream);
}

Status kernel_info(const GemmProblem& p, KernelInfo& out) {
  if (!tma_path(p)) return fallback().kernel_info(p, out);
  return wgmma_ws::kernel_info<Element>(p, out, "wgmma_ws_kernel<bf16>");
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
  v.run = run;
  v.kernel_info = kernel_info;
  v.model = wgmma_ws::model_of;
  return v;
}

}  // namespace gemmlab::cuda
