// The order in which blocks walk the tiles of C, shared by the rungs that launch one block
// per tile and the persistent ones. Device code only (kernels' translation units).
#pragma once

#include <cuda_runtime.h>

namespace gemmlab::cuda {

// Tiles visited in groups of kGroupM tile rows: consecutive tiles share the same columns
// of B and nearby rows of A, so both stay in L2 while the group runs.
template <int kGroupM>
__device__ __forceinline__ void grouped_tile(int tile, int tiles_m, int tiles_n, int& tile_m, int& tile_n) {
  const int per_group = kGroupM * tiles_n;
  const int first_m = (tile / per_group) * kGroupM;
  const int rows_in_group = min(tiles_m - first_m, kGroupM);
  tile_m = first_m + (tile % per_group) % rows_in_group;
  tile_n = (tile % per_group) / rows_in_group;
}

// One block per tile, blocks launched in that grouped order.
template <int kGroupM>
__device__ __forceinline__ void grouped_block(int tiles_m, int tiles_n, int& block_m, int& block_n) {
  grouped_tile<kGroupM>(static_cast<int>(blockIdx.x), tiles_m, tiles_n, block_m, block_n);
}

}  // namespace gemmlab::cuda
