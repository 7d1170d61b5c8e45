// Rung 13 (cuda), wgmma_ws_bf16 and wgmma_ws_f16: bf16 (or f16) A and B, f32 accumulation and C, on
// Hopper's tensor cores fed by the tensor memory accelerator, warps specialised into one
// producer and two consumer warpgroups, persistent over the tiles (the kernel and its
// reasoning: src/cuda/hopper/kernel.cuh). The step after wgmma_bf16 (12): the same tiles,
// copies and MMAs, organised so that copies, MMAs and the epilogue overlap.
// wgmma_ws_bf16_bf16 and wgmma_ws_f16_f16 are the same kernels storing C in the input type,
// as frameworks keep it: the sums rounded once in the epilogue, half the bytes of C.
// 16-bit wgmma reads either operand K-major or MN-major, so every transposition and layout
// runs without a copy. Operands TMA cannot address (a base or row pitch that is not a
// multiple of 16 bytes) are first copied into a padded workspace (hopper/operands.hpp);
// explain names the copies with the kernel. Configurations: hopper/forms.hpp.
#include <string>
#include <string_view>

#include "cuda/hopper/engine.hpp"
#include "cuda/ladder/rungs.hpp"

namespace gemmlab::cuda {
namespace {

template <class Element>
Variant make_variant(const Precision& precision, const char* rung, const char* kernel, std::string_view config,
                     const hopper::Options& options) {
  Variant v;
  v.rung = 13;
  v.name = rung;
  v.backend = Backend::Cuda;
  v.tensor_cores = true;
  v.input = precision.input;
  v.compute = precision.compute;  // exact 2-byte products, f32 sums
  v.output = precision.output;
  v.technique = "TMA + wgmma, producer warp and 2 consumer warpgroups, persistent grouped tiles";
  if (precision.output != DType::F32) v.technique += ", " + std::string(to_string(precision.output)) + " C";
  v.config = hopper::config_of(hopper::kBK<Element>);
  v.can_implement = [precision, rung](const GemmProblem& p) { return require_precision(p, precision, rung); };
  hopper::bind<Element, /*Split=*/false>(v, config, options, kernel);
  v.configure = hopper::configurer<hopper::Sums::Plain>(
      [precision, rung, kernel](std::string_view name, const hopper::Options& o) {
        return make_variant<Element>(precision, rung, kernel, name, o);
      });
  return v;
}

}  // namespace

Variant wgmma_ws_variant(DType input, DType output) {
  const Precision precision = *precision_for(input, output);  // the registry asks for valid pairs only
  const bool c16 = output != DType::F32;
  if (input == DType::F16)
    return c16 ? make_variant<hopper::F16OperandF16C>(precision, "wgmma_ws_f16_f16", "wgmma_ws_kernel<f16, f16 C>",
                                                      "auto", {})
               : make_variant<hopper::F16Operand>(precision, "wgmma_ws_f16", "wgmma_ws_kernel<f16>", "auto", {});
  return c16 ? make_variant<hopper::Bf16OperandBf16C>(precision, "wgmma_ws_bf16_bf16",
                                                      "wgmma_ws_kernel<bf16, bf16 C>", "auto", {})
             : make_variant<hopper::Bf16Operand>(precision, "wgmma_ws_bf16", "wgmma_ws_kernel<bf16>", "auto", {});
}

}  // namespace gemmlab::cuda
