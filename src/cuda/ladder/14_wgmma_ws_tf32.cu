// Rung 14 (cuda), wgmma_ws_tf32: float32 A, B and C, multiplied on the tensor cores as TF32 (10-bit
// mantissa, products exact in f32, f32 accumulation): the warp-specialised TMA + wgmma
// pipeline of src/cuda/hopper/kernel.cuh with 32 floats of K per 128-byte row and wgmma
// m64n256k8. tf32 wgmma reads B K-major only, but A from registers in any layout: an A whose
// K is strided goes into registers as it is stored, and where only B's K is strided
// (row-major NN) the kernel computes C^T = B^T A^T instead. Other operands are first
// rewritten K-major through a padded shared-memory tile (operand_staging.cuh, about 2 x their
// bytes of traffic), and one TMA cannot address is copied into a padded workspace
// (hopper/operands.hpp). explain names the copies. Configurations: hopper/forms.hpp.
#include <string>
#include <string_view>

#include "cuda/hopper/engine.hpp"
#include "cuda/ladder/rungs.hpp"

namespace gemmlab::cuda {
namespace {

using Element = hopper::Tf32Operand;
constexpr bool kSplit = false;
constexpr const char* kRung = "wgmma_ws_tf32";

Status can_implement(const GemmProblem& p) {
  return require_precision(p, *precision_for(DType::TF32), kRung);
}

Variant make_variant(std::string_view config, const hopper::Options& options) {
  Variant v;
  v.rung = 14;
  v.name = kRung;
  v.backend = Backend::Cuda;
  v.tensor_cores = true;
  v.input = DType::F32;
  v.compute = DType::TF32;
  v.output = DType::F32;
  v.technique = "the wgmma_ws pipeline on f32 data in TF32 (B K-major, A of any layout read into registers)";
  v.config = hopper::config_of(hopper::kBK<Element>);
  v.can_implement = can_implement;
  hopper::bind<Element, kSplit>(v, config, options, "wgmma_ws_kernel<tf32>");
  v.configure = hopper::configurer<hopper::kSums<Element, kSplit>>(make_variant);
  return v;
}

}  // namespace

Variant wgmma_ws_tf32_variant() { return make_variant("auto", {}); }

}  // namespace gemmlab::cuda
