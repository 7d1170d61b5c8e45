// Rung 15 (cuda), wgmma_3xtf32: float32 A, B and C at float32 accuracy on the TF32 tensor cores.
// Each operand is split once into a tf32 part and the remainder, big = rna(x) and
// small = x - big (operand_staging.cuh, written K-major as [big | small] rows), and the
// warp-specialised wgmma_ws pipeline runs three passes over K into the same accumulators:
// big·small + small·big + big·big. The dropped small·small term is below 2^-22 of each
// product. The tensor cores' truncating adders would still lose about four bits over a long
// K, so the last pass is promoted: each 64-deep partial sum is added into f32 registers
// with round-to-nearest (src/cuda/hopper/consumer.cuh, promoted_stages). The result carries
// about as many bits as an f32 FMA chain, at three times the tensor-core work of plain TF32
// plus one pass over A and B. Configurations (clusters of 2, or single blocks):
// hopper/forms.hpp.
#include <limits>
#include <string>
#include <string_view>

#include "cuda/hopper/engine.hpp"
#include "cuda/ladder/rungs.hpp"

namespace gemmlab::cuda {
namespace {

using Element = hopper::Tf32Operand;
constexpr bool kSplit = true;
constexpr const char* kRung = "wgmma_3xtf32";

Status can_implement(const GemmProblem& p) {
  GEMMLAB_TRY(require_f32_simt(p, kRung));
  // The small parts start one K extent into each row: TMA coordinates are 32-bit.
  if (p.k > std::numeric_limits<int>::max() / 2 - hopper::kBK<Element>)
    return {StatusCode::NotSupported, std::string(kRung) + ": k must be below 2^30 (both split parts in one row)"};
  return Status::ok();
}

// The bound it is verified against. Each operand x = big + small exactly, |small| <= 2^-11
// |x|; the hardware reads small as tf32 (up to one tf32 ulp lost: 2^-10 |small| <= 2^-21 |x|)
// and the small·small term is dropped (<= 2^-22 |ab|): a product errs by at most
// 2 x 2^-21 + 2^-22 = 5 x 2^-22 of |ab|, as if each operand erred by 2.5 x 2^-22 (rounded up
// here to 3 x 2^-22). The tensor cores' truncating adders (2 x 2^-24) sum 3k products.
constexpr Tolerance kTolerance{.input_u = 0x3p-22, .accumulate_u = 0x2p-24, .output_u = 0x1p-24, .terms_per_k = 3};

Variant make_variant(std::string_view config, const hopper::Options& options) {
  Variant v;
  v.rung = 15;
  v.name = kRung;
  v.backend = Backend::Cuda;
  v.tensor_cores = true;
  v.input = DType::F32;
  v.compute = DType::F32;
  v.output = DType::F32;
  v.tolerance = kTolerance;
  v.technique = "3xTF32: operands split into tf32 big + small parts, three wgmma_ws passes (f32 accuracy)";
  v.config = hopper::config_of(hopper::kBK<Element>);
  v.can_implement = can_implement;
  hopper::bind<Element, kSplit>(v, config, options, "wgmma_ws_kernel<3xtf32>");
  v.configure = hopper::configurer<hopper::kSums<Element, kSplit>>(make_variant);
  return v;
}

}  // namespace

Variant wgmma_3xtf32_variant() { return make_variant("auto", {}); }

}  // namespace gemmlab::cuda
