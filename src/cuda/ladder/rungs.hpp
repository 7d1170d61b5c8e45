// The factories of the Hopper rungs that tests/gpu/test_wgmma.cpp builds directly. The
// registry (registry.cpp) declares every rung's factory beside its line in the table; a
// new rung needs nothing here.
#pragma once

#include <functional>

#include "gemmlab/variant.hpp"

namespace gemmlab::cuda {

// Variant::run for a rung that needs nothing of its context but the stream.
using StreamRun = Status (*)(const GemmProblem&, Stream);
inline std::function<Status(const GemmProblem&, RunContext&)> on_stream(StreamRun run) {
  return [run](const GemmProblem& p, RunContext& context) { return run(p, context.stream()); };
}

Variant wgmma_bf16_variant();                 // 12_wgmma_bf16.cu
// The warp-specialised wgmma rung for DType::BF16 or F16 inputs (f32 sums), C in `output`:
// F32, or the input type itself.
Variant wgmma_ws_variant(DType input, DType output = DType::F32);  // 13_wgmma_ws.cu
Variant wgmma_ws_tf32_variant();              // 14_wgmma_ws_tf32.cu
Variant wgmma_3xtf32_variant();               // 15_wgmma_3xtf32.cu: f32 accuracy, in the f32 ladder

}  // namespace gemmlab::cuda
