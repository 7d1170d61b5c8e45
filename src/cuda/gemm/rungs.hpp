// The CUDA rungs, one per file, collected by registry.cu in ladder order.
#pragma once

#include "gemmlab/variant.hpp"

namespace gemmlab::cuda {

Variant naive_variant();                      // 01_naive.cu
Variant coalesced_variant();                  // 02_coalesced.cu
Variant smem_tiled_variant(int tile_width);   // 03_smem_tiled.cu
Variant cublas_sgemm_variant();               // cublas.cu: the anchor

}  // namespace gemmlab::cuda
