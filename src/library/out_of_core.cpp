// The out-of-core GEMM's checks and plan (gemmlab/out_of_core.hpp); the schedule itself runs
// in the CUDA backend (src/cuda/runtime/out_of_core.cpp).
#include "gemmlab/out_of_core.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/out_of_core_plan.hpp"
#include "cuda/backend.hpp"
#include "cuda/runtime/device.hpp"
#include "gemmlab/availability.hpp"
#include "library/workspace.hpp"

namespace gemmlab {
namespace {

// Left free below what the device reports when no limit is given: the CUDA libraries'
// workspaces and module code, as the bench's memory plan allows them.
constexpr std::uint64_t kDeviceMargin = std::uint64_t{512} << 20;
// The tile the in-core rung is chosen for when the model has not cut the problem yet.
constexpr std::int64_t kRepresentativeTile = 8192;

Status check_host_operands(const GemmProblem& p) {
  for (const auto& [name, x] : {std::pair{"A", &p.a}, std::pair{"B", &p.b}, std::pair{"C", &p.c}}) {
    if (x->empty()) continue;
    bool on_device = false;
    GEMMLAB_TRY(cuda::is_device_pointer(x->data, on_device));
    if (on_device)
      return {StatusCode::InvalidValue,
              fmt::format("out-of-core GEMM takes A, B and C in host memory; {} is device memory (gemm() computes "
                          "on device operands)",
                          name)};
  }
  return Status::ok();
}

OutOfCoreShape shape_of(const GemmProblem& p) {
  const RowMajorGemm g = canonicalize(p);
  return {g.m, g.n, g.k, g.trans_a, g.trans_b, storage_bytes(p.a.dtype), storage_bytes(p.c.dtype), g.beta != 0.0};
}

// A block product of the schedule as the rung is asked for it; its pointers are never read.
GemmProblem block_shape(const GemmProblem& p, const OutOfCoreShape& s, std::int64_t tm, std::int64_t tn,
                        std::int64_t tk) {
  void* aligned = reinterpret_cast<void*>(std::uintptr_t{256});  // validate() wants a pointer
  // beta = 1: the later blocks of K add to the tile.
  return block_problem(s, p.a.dtype, p.c.dtype, p.compute, tm, tn, tk, aligned, aligned, aligned, p.alpha, 1.0);
}

// C <- beta * C on the host (k = 0 or alpha = 0): beta = 0 writes zeros without reading C.
Status scale_on_host(const GemmProblem& p) {
  if (p.c.dtype != DType::F32)
    return {StatusCode::NotSupported, fmt::format("out-of-core C of type {}: float32 only", to_string(p.c.dtype))};
  auto* c = static_cast<float*>(p.c.data);
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      float& x = c[p.c.offset(i, j)];
      x = p.beta == 0.0 ? 0.0f : static_cast<float>(p.beta * x);
    }
  return Status::ok();
}

Status plan_with(Context& context, const GemmProblem& problem, const OutOfCoreOptions& options, Variant& variant,
                 OutOfCorePlan& out) {
  if (context.backend() != Backend::Cuda)
    return {StatusCode::NotSupported,
            "out-of-core GEMM streams host operands through a GPU: it needs a CUDA context (the CPU backend computes "
            "in host memory already)"};
  GEMMLAB_TRY(validate(problem));
  if (is_fp8(problem.a.dtype))
    return {StatusCode::NotSupported,
            fmt::format("out-of-core GEMM does not take {} operands: its block products carry no per-tensor scales "
                        "(gemm() computes FP8 on device operands)",
                        to_string(problem.a.dtype))};
  GEMMLAB_TRY(cuda::make_current(context.device()));
  GEMMLAB_TRY(check_host_operands(problem));
  out = OutOfCorePlan{};
  if (problem.m == 0 || problem.n == 0 || is_scale_only(problem)) return Status::ok();
  const OutOfCoreShape s = shape_of(problem);
  for (const auto& [name, size] : {std::pair{"tile_m", options.tile_m}, std::pair{"tile_n", options.tile_n},
                                   std::pair{"tile_k", options.tile_k}})
    if (size < 0) return {StatusCode::InvalidValue, fmt::format("out-of-core {} = {} is negative", name, size)};
  const GemmProblem representative =
      block_shape(problem, s, std::min(s.m, kRepresentativeTile), std::min(s.n, kRepresentativeTile),
                    std::min(s.k, kRepresentativeTile));
  GEMMLAB_TRY(resolve_variant(context, representative, options.in_core, variant));
  if (variant.anchor)
    return {StatusCode::InvalidValue,
            fmt::format("out-of-core block products run on gemmlab's rungs; {} is an anchor", variant.name)};

  cuda::DeviceMemoryState memory;
  GEMMLAB_TRY(cuda::current_device_memory(memory));
  // What this context already holds for earlier calls is reused, so it counts as available.
  const std::uint64_t available = memory.free_bytes + cuda::out_of_core_buffer_bytes(context.resources());
  std::uint64_t budget = available > kDeviceMargin ? available - kDeviceMargin : 0;
  if (options.device_memory_limit > 0) budget = std::min(budget, options.device_memory_limit);

  OutOfCoreRates rates = nominal_rates(variant.input, variant.compute, variant.tensor_cores);
  if (options.rates.flops_per_second > 0) rates.flops_per_second = options.rates.flops_per_second;
  if (options.rates.h2d_bytes_per_second > 0) rates.h2d_bytes_per_second = options.rates.h2d_bytes_per_second;
  if (options.rates.d2h_bytes_per_second > 0) rates.d2h_bytes_per_second = options.rates.d2h_bytes_per_second;
  rates.h2d_both_bytes_per_second = options.rates.h2d_both_bytes_per_second;
  rates.d2h_both_bytes_per_second = options.rates.d2h_both_bytes_per_second;
  rates.h2d_strided_bytes_per_second = options.rates.h2d_strided_bytes_per_second;
  rates.a_strided_beside = options.rates.a_strided_beside;
  rates.b_strided_beside = options.rates.b_strided_beside;
  rates.c_strided_beside = options.rates.c_strided_beside;
  if (options.rates.tile_overhead_k > 0) rates.tile_overhead_k = options.rates.tile_overhead_k;
  rates.multiprocessors = options.rates.multiprocessors > 0 ? options.rates.multiprocessors : cuda::device_sm_count();
  // The rung's workspace for a whole block, which bounds the partial ones at the edges and
  // the ramp's pieces: every block's rows are padded alike (device_ld), so whether an operand
  // is copied depends on its layout, not on the block's size, and the copies grow with it.
  const WorkspaceBound workspace = [&](std::int64_t tm, std::int64_t tn, std::int64_t tk) {
    return workspace_bound(variant, block_shape(problem, s, std::min(tm, s.m), std::min(tn, s.n), std::min(tk, s.k)));
  };
  GEMMLAB_TRY(choose_out_of_core_tiles(s, budget, rates, workspace, options.tile_m, options.tile_n, options.tile_k, out));
  out.variant = variant.name;
  out.config = variant.config_name;
  // Every block the schedule hands the rung: whole tiles and the partial ones at the edges.
  for (const std::int64_t tm : {out.tile_m, s.m - (out.tiles_m - 1) * out.tile_m})
    for (const std::int64_t tn : {out.tile_n, s.n - (out.tiles_n - 1) * out.tile_n})
      for (const std::int64_t tk : {out.tile_k, s.k - (out.blocks_k - 1) * out.tile_k})
        if (const Status why = variant.can_implement(block_shape(problem, s, tm, tn, tk)); !why)
          return {why.code(), fmt::format("out-of-core block {}x{}x{} with {}: {}", tm, tn, tk, variant.name,
                                          why.message())};
  return Status::ok();
}

}  // namespace

Status plan_out_of_core(Context& context, const GemmProblem& problem, const OutOfCoreOptions& options,
                        OutOfCorePlan& out) {
  Variant variant;
  return plan_with(context, problem, options, variant, out);
}

Status gemm_out_of_core(Context& context, const GemmProblem& problem, const OutOfCoreOptions& options,
                        OutOfCorePlan* used) {
  Variant variant;
  OutOfCorePlan plan;
  GEMMLAB_TRY(plan_with(context, problem, options, variant, plan));
  if (used) *used = plan;
  if (problem.m == 0 || problem.n == 0) return Status::ok();
  if (is_scale_only(problem)) return scale_on_host(problem);
  GEMMLAB_TRY(check_runs_here(variant));
  return cuda::run_out_of_core(problem, variant, plan, context.resources());
}

void release_out_of_core_buffers(Context& context) { cuda::release_out_of_core_buffers(context.resources()); }

}  // namespace gemmlab
