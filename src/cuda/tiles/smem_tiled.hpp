// The seeds' tiled kernel, shared by smem_tiled_16/32, smem_padded and pitched.
#pragma once

#include <cuda_runtime.h>

#include "cuda/tiles/common.cuh"

namespace gemmlab::cuda {

// Padding = 1 adds a column to each shared tile (the smem_padded rung).
template <int TileWidth, int Padding>
Status run_smem_tiled(const GemmArgs& g, bool trans_a, bool trans_b, cudaStream_t stream);

// The kernel run_smem_tiled<TileWidth, Padding> launches for a problem (for explain).
template <int TileWidth, int Padding>
Status smem_tiled_kernel_info(const GemmProblem& problem, KernelInfo& out);

Traffic smem_tiled_model(const GemmProblem& problem, int tile_width, int padding);

}  // namespace gemmlab::cuda
