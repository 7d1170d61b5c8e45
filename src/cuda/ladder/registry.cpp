// The CUDA ladder, in order. Adding a rung: one file and one line here.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "cuda/backend.hpp"
#include "cuda/tiles/common.cuh"
#include "cuda/ladder/rungs.hpp"

namespace gemmlab::cuda {

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
      wgmma_3xtf32_variant(),  // f32 accuracy from the tf32 tensor cores
      cublas_sgemm_variant(),
      // Tensor cores: each --dtype runs its own rungs against its own anchor.
      mma_sync_variant(DType::BF16),
      wgmma_bf16_variant(),
      wgmma_ws_variant(DType::BF16),
      cublas_gemm_ex_variant(DType::BF16),
      mma_sync_variant(DType::F16),
      wgmma_ws_variant(DType::F16),
      cublas_gemm_ex_variant(DType::F16),
      wgmma_ws_tf32_variant(),
      cublas_gemm_ex_variant(DType::TF32),
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
