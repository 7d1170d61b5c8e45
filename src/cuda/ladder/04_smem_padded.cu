// Rung 4 (cuda): the tiled kernel with one column of padding in each shared tile.
// Shared memory has 32 banks of 4 bytes; a warp that writes a column of an unpadded
// 32-wide tile hits one bank 32 times. That happens when an operand is stored transposed
// (the loads stay coalesced, the shared-memory store goes down a column). With rows of
// 33 words, consecutive rows start one bank apart and the column spreads over all banks.
// For NN the seeds' kernel has no conflicts, so padding shows its effect on TN/NT/TT.
#include "cuda/tiles/common.cuh"
#include "cuda/ladder/rungs.hpp"
#include "cuda/tiles/smem_tiled.hpp"

namespace gemmlab::cuda {
namespace {
constexpr int kTileWidth = 32;
constexpr int kPadding = 1;  // one word: shifts each row by one bank
}  // namespace

Variant smem_padded_variant() {
  Variant v;
  v.rung = 4;
  v.name = "smem_padded";
  v.backend = Backend::Cuda;
  v.technique = "shared tiles padded by one column: no bank conflicts on transposed stores";
  v.config = {{{"TILE_WIDTH", kTileWidth}, {"padding", kPadding}}};
  v.can_implement = [](const GemmProblem& p) { return require_f32_simt(p, "smem_padded"); };
  v.run = [](const GemmProblem& p, RunContext& context) {
    const RowMajorGemm rm = canonicalize(p);
    return run_smem_tiled<kTileWidth, kPadding>(make_args(rm), rm.trans_a, rm.trans_b,
                                                static_cast<cudaStream_t>(context.stream()));
  };
  v.model = [](const GemmProblem& p) { return smem_tiled_model(p, kTileWidth, kPadding); };
  v.kernel_info = smem_tiled_kernel_info<kTileWidth, kPadding>;
  return v;
}

}  // namespace gemmlab::cuda
