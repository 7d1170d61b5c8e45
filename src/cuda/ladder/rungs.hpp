// The CUDA rungs, one per file, collected by registry.cu in ladder order.
#pragma once

#include "gemmlab/variant.hpp"

namespace gemmlab::cuda {

Variant naive_variant();                      // 01_naive.cu
Variant coalesced_variant();                  // 02_coalesced.cu
Variant smem_tiled_variant(int tile_width);   // 03_smem_tiled.cu
Variant smem_padded_variant();                // 04_smem_padded.cu
Variant pitched_variant();                    // 05_pitched.cu
Variant reg_1d_variant();                     // 06_reg_1d.cu
Variant reg_2d_variant();                     // 07_reg_2d.cu
Variant vectorized_variant();                 // 08_vectorized.cu
Variant warptile_variant();                   // 09_warptile.cu
Variant pipelined_variant();                  // 10_pipelined.cu
Variant wgmma_bf16_variant();                 // 12_wgmma_bf16.cu
// The warp-specialised wgmma rung for DType::BF16 or F16 inputs (f32 sums and C).
Variant wgmma_ws_variant(DType input);        // 13_wgmma_ws.cu
Variant wgmma_ws_tf32_variant();              // 14_wgmma_ws_tf32.cu
Variant wgmma_3xtf32_variant();               // 15_wgmma_3xtf32.cu: f32 accuracy, in the f32 ladder
Variant cublas_sgemm_variant();               // cublas.cpp: the f32 anchor
// Tensor-core rungs; `input` is DType::BF16 or DType::F16 (2-byte A and B, f32 C and sums).
Variant mma_sync_variant(DType input);        // 11_mma_sync.cu
// The anchor of a tensor-core dtype: cublasGemmEx for DType::BF16, F16 (2-byte inputs,
// f32 sums and C) or TF32 (f32 inputs and C, CUBLAS_COMPUTE_32F_FAST_TF32).
Variant cublas_gemm_ex_variant(DType dtype);  // cublas.cpp

}  // namespace gemmlab::cuda
