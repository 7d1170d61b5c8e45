// Rung 16 (cuda), wgmma_ws_e4m3 and wgmma_ws_e5m2: FP8 A and B with per-tensor scales
// (GemmProblem::scale_a, scale_b, folded into alpha), f32 sums, C in f32, bf16 or f16
// (wgmma_ws_e4m3_bf16, ...). The warp-specialised TMA + wgmma pipeline of
// src/cuda/hopper/kernel.cuh with 128 FP8 of K per 128-byte row and wgmma m64n128k32: the
// tensor cores' FP8 sums keep about 14 bits, so every stage's 128-deep partial sum is added
// into f32 registers (promoted_stages, consumer.cuh), by halves of the tile's columns, as the
// registers allow. FP8 wgmma reads A and B K-major only: an operand stored otherwise is first
// rewritten K-major (operand_staging.cuh), and one TMA cannot address is copied into a padded
// workspace (hopper/operands.hpp); explain names the copies. Configurations: hopper/forms.hpp.
#include <string>
#include <string_view>

#include "core/verify.hpp"
#include "cuda/hopper/engine.hpp"
#include "cuda/ladder/rungs.hpp"

namespace gemmlab::cuda {
namespace {

template <class Element>
Variant make_variant(const Precision& precision, const std::string& rung, const std::string& kernel,
                     std::string_view config, const hopper::Options& options) {
  constexpr bool kSplit = false;
  Variant v;
  v.rung = 16;
  v.name = rung;
  v.backend = Backend::Cuda;
  v.tensor_cores = true;
  v.input = precision.input;
  v.compute = precision.compute;  // exact FP8 products, f32 sums
  v.output = precision.output;
  // The FP8 bound, with the interval this kernel promotes at.
  Tolerance tolerance = tolerance_for(precision.input, precision.compute, precision.output);
  tolerance.promote_every = hopper::kPromoteK<Element>;
  v.tolerance = tolerance;
  v.technique = "the wgmma_ws pipeline on FP8 (both operands K-major), sums promoted to f32 every " +
                std::to_string(hopper::kPromoteK<Element>) + " of K";
  if (precision.output != DType::F32) v.technique += ", " + std::string(to_string(precision.output)) + " C";
  v.config = hopper::config_of(hopper::kBK<Element>);
  v.can_implement = [precision, rung](const GemmProblem& p) { return require_precision(p, precision, rung.c_str()); };
  hopper::bind<Element, kSplit>(v, config, options, kernel);
  v.configure = hopper::configurer<hopper::kSums<Element, kSplit>>(
      [precision, rung, kernel](std::string_view name, const hopper::Options& o) {
        return make_variant<Element>(precision, rung, kernel, name, o);
      });
  return v;
}

template <arch::Fp8 Format>
Variant of_format(const Precision& precision, const std::string& rung, const std::string& kernel) {
  switch (precision.output) {
    case DType::BF16: return make_variant<hopper::Fp8Operand<Format, __nv_bfloat16>>(precision, rung, kernel, "auto", {});
    case DType::F16: return make_variant<hopper::Fp8Operand<Format, __half>>(precision, rung, kernel, "auto", {});
    default: return make_variant<hopper::Fp8Operand<Format, float>>(precision, rung, kernel, "auto", {});
  }
}

}  // namespace

Variant wgmma_fp8_variant(DType input, DType output) {
  const Precision precision = *precision_for(input, output);  // the registry asks for valid pairs only
  const std::string type(to_string(input));
  const std::string c = output == DType::F32 ? "" : "_" + std::string(to_string(output));
  const std::string rung = "wgmma_ws_" + type + c;
  const std::string kernel = "wgmma_ws_kernel<" + type + (c.empty() ? "" : ", " + std::string(to_string(output)) + " C") + ">";
  return input == DType::E5M2 ? of_format<arch::Fp8::E5M2>(precision, rung, kernel)
                              : of_format<arch::Fp8::E4M3>(precision, rung, kernel);
}

}  // namespace gemmlab::cuda
