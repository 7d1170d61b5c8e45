// The CUDA ladder, in rung order: each rung's factory is declared here, beside its line
// in the table, and defined in its numbered file. Adding a rung: its file and its line
// here. `gemmlab list` shows the table in this order; `--dtype` takes the rungs and the
// anchor of one precision (Variant::precision()), wherever they stand in it.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "cuda/backend.hpp"
#include "cuda/tiles/common.cuh"

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
Variant mma_sync_variant(DType input, DType output);  // 11_mma_sync.cu: BF16 or F16 inputs, f32 sums, f32 or input-type C
Variant wgmma_bf16_variant();                 // 12_wgmma_bf16.cu
Variant wgmma_ws_variant(DType input, DType output);  // 13_wgmma_ws.cu: BF16 or F16 inputs, f32 sums, f32 or input-type C
Variant wgmma_ws_tf32_variant();              // 14_wgmma_ws_tf32.cu
Variant wgmma_3xtf32_variant();               // 15_wgmma_3xtf32.cu: f32 accuracy, in the f32 ladder
Variant wgmma_fp8_variant(DType input, DType output);  // 16_wgmma_fp8.cu: E4M3 or E5M2 inputs, f32 sums, f32, bf16 or f16 C
Variant cublas_sgemm_variant();               // cublas.cpp: the f32 anchor
// The anchor of a tensor-core dtype: cublasGemmEx for DType::BF16, F16 (2-byte inputs,
// f32 sums, C in `output`: F32 or the input type) or TF32 (f32 inputs and C,
// CUBLAS_COMPUTE_32F_FAST_TF32).
Variant cublas_gemm_ex_variant(DType dtype, DType output);  // cublas.cpp
// The FP8 anchor: cuBLASLt's FP8 matmul, e4m3 only (it has no e5m2 x e5m2 product).
Variant cublaslt_fp8_variant(DType input, DType output);  // cublaslt_fp8.cpp

const std::vector<Variant>& registry() {
  static const std::vector<Variant> table = {
      naive_variant(),
      coalesced_variant(),
      smem_tiled_variant(/*tile_width=*/16),
      smem_tiled_variant(/*tile_width=*/32),
      smem_padded_variant(),
      pitched_variant(),
      reg_1d_variant(),
      reg_2d_variant(),
      vectorized_variant(),
      warptile_variant(),
      pipelined_variant(),
      mma_sync_variant(DType::BF16, DType::F32),
      mma_sync_variant(DType::F16, DType::F32),
      mma_sync_variant(DType::BF16, DType::BF16),
      mma_sync_variant(DType::F16, DType::F16),
      wgmma_bf16_variant(),
      wgmma_ws_variant(DType::BF16, DType::F32),
      wgmma_ws_variant(DType::F16, DType::F32),
      wgmma_ws_variant(DType::BF16, DType::BF16),
      wgmma_ws_variant(DType::F16, DType::F16),
      wgmma_ws_tf32_variant(),
      wgmma_3xtf32_variant(),
      wgmma_fp8_variant(DType::E4M3, DType::F32),
      wgmma_fp8_variant(DType::E4M3, DType::BF16),
      wgmma_fp8_variant(DType::E4M3, DType::F16),
      wgmma_fp8_variant(DType::E5M2, DType::F32),
      wgmma_fp8_variant(DType::E5M2, DType::BF16),
      wgmma_fp8_variant(DType::E5M2, DType::F16),
      // The anchors, one per --dtype, each measured beside the rungs of its precision.
      cublas_sgemm_variant(),
      cublas_gemm_ex_variant(DType::TF32, DType::F32),
      cublas_gemm_ex_variant(DType::BF16, DType::F32),
      cublas_gemm_ex_variant(DType::F16, DType::F32),
      cublas_gemm_ex_variant(DType::BF16, DType::BF16),
      cublas_gemm_ex_variant(DType::F16, DType::F16),
      cublaslt_fp8_variant(DType::E4M3, DType::F32),
      cublaslt_fp8_variant(DType::E4M3, DType::BF16),
      cublaslt_fp8_variant(DType::E4M3, DType::F16),
  };
  return table;
}

Status require_precision(const GemmProblem& p, const Precision& want, const char* rung) {
  if (p.a.dtype != want.input || p.c.dtype != want.output || p.compute != want.compute)
    return {StatusCode::NotSupported,
            fmt::format("{} takes {} A and B, {} C and {} math (got {} inputs, {} output, {} math)", rung,
                        to_string(want.input), to_string(want.output), to_string(want.compute),
                        to_string(p.a.dtype), to_string(p.c.dtype), to_string(p.compute))};
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  if (p.m > kIntMax || p.n > kIntMax || p.k > kIntMax)
    return {StatusCode::NotSupported, fmt::format("{}: m, n and k must each be below 2^31", rung)};
  return Status::ok();
}

Status require_f32_simt(const GemmProblem& p, const char* rung) {
  return require_precision(p, *precision_for(DType::F32), rung);
}

}  // namespace gemmlab::cuda
