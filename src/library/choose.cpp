// The rules of `auto`, one table: for each backend and precision, gemmlab's rungs in order of
// preference, each with the condition under which it was measured fastest (an H100,
// `gemmlab bench --variants auto,...` over squares 256-8192 and the projections of an 8B
// transformer at 1-4096 tokens, results/h100/auto-*.json). The first whose condition holds,
// that runs on this device and takes the problem is chosen, in its own automatic
// configuration (which picks tiles and forms per shape).
#include "library/choose.hpp"

#include <fmt/format.h>

#include <string_view>

#include "cuda/backend.hpp"
#include "gemmlab/availability.hpp"
#include "gemmlab/registry.hpp"

namespace gemmlab {
namespace {

enum class When {
  Always,
  // At least a third of a wave of 128 x 256 tiles: below it, 3xTF32's three passes over
  // too few tiles lose to the SIMT pipeline (measured: 32 tiles lose, 56 tie or win).
  ThirdOfAWaveOfWideTiles,
  // C of at most 64 rows: the product streams B from DRAM once, and mma.sync's short tiles
  // with K split over the GPU keep more of it in flight than the 128-row wgmma tiles.
  FewRows,
};

struct Rule {
  Backend backend;
  DType dtype;   // the --dtype name of the problem's precision
  DType output;  // and how its C is stored (--out-dtype)
  std::string_view rung;
  When when;
};

// f32: 3xTF32 keeps float32 accuracy (its verified error is below SGEMM's) at 2.2x the SIMT
// rate where the grid is full. tf32 has a rung on Hopper only; bf16/f16 fall back to
// mma.sync on sm_80 and later. bf16/f16 with C in the input type: the same ladder's rungs
// that store 16-bit C, in the same order. (wgmma_bf16 is never chosen: with a row of tiles
// cut by K, the warp-specialised rung ran 1.5-2.5x faster at up to 16 rows of C except at
// N = 14336, 4 % slower.) FP8 (e4m3, e5m2) has one rung, on Hopper.
constexpr Rule kRules[] = {
    {Backend::Cpu, DType::F32, DType::F32, "threaded", When::Always},
    {Backend::Cpu, DType::F32, DType::F32, "packed_simd", When::Always},
    {Backend::Cuda, DType::F32, DType::F32, "wgmma_3xtf32", When::ThirdOfAWaveOfWideTiles},
    {Backend::Cuda, DType::F32, DType::F32, "pipelined", When::Always},
    {Backend::Cuda, DType::TF32, DType::F32, "wgmma_ws_tf32", When::Always},
    {Backend::Cuda, DType::BF16, DType::F32, "mma_sync_bf16", When::FewRows},
    {Backend::Cuda, DType::BF16, DType::F32, "wgmma_ws_bf16", When::Always},
    {Backend::Cuda, DType::BF16, DType::F32, "mma_sync_bf16", When::Always},
    {Backend::Cuda, DType::F16, DType::F32, "mma_sync_f16", When::FewRows},
    {Backend::Cuda, DType::F16, DType::F32, "wgmma_ws_f16", When::Always},
    {Backend::Cuda, DType::F16, DType::F32, "mma_sync_f16", When::Always},
    {Backend::Cuda, DType::BF16, DType::BF16, "mma_sync_bf16_bf16", When::FewRows},
    {Backend::Cuda, DType::BF16, DType::BF16, "wgmma_ws_bf16_bf16", When::Always},
    {Backend::Cuda, DType::BF16, DType::BF16, "mma_sync_bf16_bf16", When::Always},
    {Backend::Cuda, DType::F16, DType::F16, "mma_sync_f16_f16", When::FewRows},
    {Backend::Cuda, DType::F16, DType::F16, "wgmma_ws_f16_f16", When::Always},
    {Backend::Cuda, DType::F16, DType::F16, "mma_sync_f16_f16", When::Always},
    {Backend::Cuda, DType::E4M3, DType::F32, "wgmma_ws_e4m3", When::Always},
    {Backend::Cuda, DType::E4M3, DType::BF16, "wgmma_ws_e4m3_bf16", When::Always},
    {Backend::Cuda, DType::E4M3, DType::F16, "wgmma_ws_e4m3_f16", When::Always},
    {Backend::Cuda, DType::E5M2, DType::F32, "wgmma_ws_e5m2", When::Always},
    {Backend::Cuda, DType::E5M2, DType::BF16, "wgmma_ws_e5m2_bf16", When::Always},
    {Backend::Cuda, DType::E5M2, DType::F16, "wgmma_ws_e5m2_f16", When::Always},
};

bool holds(When when, const GemmProblem& problem) {
  const RowMajorGemm g = canonicalize(problem);  // the shape the kernels see
  switch (when) {
    case When::Always: return true;
    case When::FewRows: return g.m <= 64;
    case When::ThirdOfAWaveOfWideTiles: {
      const double tiles = static_cast<double>((g.m + 127) / 128) * static_cast<double>((g.n + 255) / 256);
      return 3 * tiles >= cuda::device_sm_count();
    }
  }
  return false;
}

}  // namespace

Status choose_auto(Backend backend, const GemmProblem& problem, Variant& out) {
  const Precision precision{problem.a.dtype, problem.compute, problem.c.dtype};
  const auto name = dtype_name(precision);
  if (!name)
    return {StatusCode::NotSupported,
            fmt::format("auto: no rung computes {} inputs with {} arithmetic into {} C", to_string(precision.input),
                        to_string(precision.compute), to_string(precision.output))};
  std::string tried;
  for (const Rule& rule : kRules) {
    if (rule.backend != backend || rule.dtype != *name || rule.output != precision.output ||
        !holds(rule.when, problem))
      continue;
    const Variant* v = find_variant(backend, rule.rung);
    if (!v) continue;  // not in this build
    Status why = check_runs_here(*v);
    if (why) why = v->can_implement(problem);
    if (why) {
      out = *v;
      return Status::ok();
    }
    tried += fmt::format("{}{}", tried.empty() ? "" : "; ", why.message());
  }
  const std::string types = precision.output == DType::F32
                                ? std::string(to_string(*name))
                                : fmt::format("{} (C in {})", to_string(*name), to_string(precision.output));
  return {StatusCode::NotSupported, fmt::format("auto: no {} rung of this build takes this {} problem here{}{}",
                                                to_string(backend), types, tried.empty() ? "" : ": ", tried)};
}

}  // namespace gemmlab
