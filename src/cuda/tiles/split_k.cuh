// Split-K for a rung that launches one block per tile of C. Where a problem has too few
// tiles to fill the GPU (an LLM's projections at a few tokens: 16 x 4096 x 4096 is 64 tiles
// of 16 x 64 for 132 SMs), each tile's K loop is cut into `splits` ranges, one block each
// (grid.y). A block leaves its partial sums in global memory, where they stay in L2, and
// counts itself on its tile's counter; the block that arrives last adds every range's
// partials in range order, so C does not depend on which block came last, and stores C.
#pragma once

#include <cuda_runtime.h>

#include "cuda/arch/grid_sync.cuh"
#include "cuda/tiles/split_k_plan.hpp"

namespace gemmlab::cuda {

// What the kernel writes and counts in: `tile_floats` partial sums per (tile, range), and one
// counter per tile, 0 between launches (the last block resets it). The rung owns the memory.
struct SplitK {
  float* partials = nullptr;
  int* arrived = nullptr;
};

#ifdef __CUDACC__
// K tiles [begin, end) of range `split` of `splits` over `k_tiles`: near-equal ranges.
__device__ __forceinline__ void split_k_range(int k_tiles, int split, int splits, int& begin, int& end) {
  begin = static_cast<int>(static_cast<long long>(split) * k_tiles / splits);
  end = static_cast<int>(static_cast<long long>(split + 1) * k_tiles / splits);
}

// After every thread of the block has written its partial: counts the block on `counter` and
// returns, to every thread, whether it came last (then the others' partials are visible to
// its later reads). `flag`: one int of shared memory.
__device__ __forceinline__ bool split_k_arrive(int* counter, int splits, int* flag) {
  __syncthreads();
  if (threadIdx.x == 0) {
    const bool last = arch::acq_rel_add_gpu(counter, 1) == splits - 1;
    if (last) arch::store_relaxed_gpu(counter, 0);  // for the next launch
    *flag = last;
  }
  __syncthreads();
  return *flag != 0;
}
#endif

}  // namespace gemmlab::cuda
