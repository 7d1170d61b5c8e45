// The rules of `auto`, one table: for each backend and precision, gemmlab's rungs from the
// fastest measured down (results/h100/*.json: the rung names and their ratios to the anchor).
// The first that runs on this device and takes the problem is chosen, each in its own
// automatic configuration, which picks tiles and forms per shape.
#include "library/choose.hpp"

#include <fmt/format.h>

#include <array>
#include <string_view>

#include "gemmlab/availability.hpp"
#include "gemmlab/registry.hpp"

namespace gemmlab {
namespace {

struct AutoRule {
  Backend backend;
  DType dtype;  // the --dtype name of the problem's precision
  std::array<std::string_view, 3> rungs;  // fastest first; empty entries end the list
};

// f32 on Hopper: 3xTF32 keeps float32 accuracy (its verified error is below SGEMM's) at
// 2.2x the SIMT rate; elsewhere the SIMT ladder's top. bf16/f16: the warp-specialised wgmma
// pipeline on Hopper, mma.sync on sm_80 and later. tf32 has a rung on Hopper only.
constexpr AutoRule kRules[] = {
    {Backend::Cpu, DType::F32, {"threaded", "packed_simd", ""}},
    {Backend::Cuda, DType::F32, {"wgmma_3xtf32", "pipelined", ""}},
    {Backend::Cuda, DType::TF32, {"wgmma_ws_tf32", "", ""}},
    {Backend::Cuda, DType::BF16, {"wgmma_ws_bf16", "mma_sync_bf16", ""}},
    {Backend::Cuda, DType::F16, {"wgmma_ws_f16", "mma_sync_f16", ""}},
};

}  // namespace

Status choose_auto(Backend backend, const GemmProblem& problem, Variant& out) {
  const Precision precision{problem.a.dtype, problem.compute, problem.c.dtype};
  const auto name = dtype_name(precision);
  if (!name)
    return {StatusCode::NotSupported,
            fmt::format("auto: no rung computes {} inputs with {} arithmetic into {} C", to_string(precision.input),
                        to_string(precision.compute), to_string(precision.output))};
  std::string tried;
  for (const AutoRule& rule : kRules) {
    if (rule.backend != backend || rule.dtype != *name) continue;
    for (std::string_view rung : rule.rungs) {
      if (rung.empty()) break;
      const Variant* v = find_variant(backend, rung);
      if (!v) continue;  // not in this build
      Status why = check_runs_here(*v);
      if (why) why = v->can_implement(problem);
      if (why) {
        out = *v;
        return Status::ok();
      }
      tried += fmt::format("{}{}", tried.empty() ? "" : "; ", why.message());
    }
  }
  return {StatusCode::NotSupported,
          fmt::format("auto: no {} rung of this build takes this {} problem here{}{}", to_string(backend),
                      to_string(*name), tried.empty() ? "" : ": ", tried)};
}

}  // namespace gemmlab
