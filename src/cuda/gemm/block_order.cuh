// The order in which blocks walk the tiles of C, shared by the rungs that launch one block
// per tile. Device code only (kernels' translation units).
#pragma once

#include <cuda_runtime.h>

namespace gemmlab::cuda {

// Blocks launched in groups of kGroupM block rows: consecutive blocks share the same
// columns of B and nearby rows of A, so both stay in L2 while the group runs.
template <int kGroupM>
__device__ __forceinline__ void grouped_block(int tiles_m, int tiles_n, int& block_m, int& block_n) {
  const int pid = blockIdx.x;
  const int per_group = kGroupM * tiles_n;
  const int first_m = (pid / per_group) * kGroupM;
  const int rows_in_group = min(tiles_m - first_m, kGroupM);
  block_m = first_m + (pid % per_group) % rows_in_group;
  block_n = (pid % per_group) / rows_in_group;
}

}  // namespace gemmlab::cuda
