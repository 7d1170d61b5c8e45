// The library entry point.
#pragma once

#include <string>
#include <string_view>

#include "gemmlab/context.hpp"
#include "gemmlab/problem.hpp"
#include "gemmlab/registry.hpp"
#include "gemmlab/status.hpp"
#include "gemmlab/variant.hpp"

namespace gemmlab {

// The variant name that asks the library to choose.
inline constexpr std::string_view kAutoVariant = "auto";

struct GemmOptions {
  // A rung of the context's backend ("pipelined", "wgmma_ws_bf16"), or "auto": the rung and
  // configuration measured fastest for this dtype, shape and device
  // (src/library/choose.cpp keeps the rules).
  std::string variant{kAutoVariant};
  // One of the rung's named configurations ("gemmlab list --configs"); empty: its default.
  std::string config{};
};

// C <- alpha * op(A) * op(B) + beta * C in `context`: on its device and stream (CUDA, data
// in device memory) or on the calling thread and the context's team (CPU, host memory).
// Validates the problem, checks the rung runs here and can implement it, then runs it.
// m = 0 or n = 0 does nothing; k = 0 or alpha = 0 computes beta * C without reading A or B;
// beta = 0 never reads C. problem.compute chooses the arithmetic (F32, TF32 for float32
// data; BF16, F16 for 2-byte data). Errors come back as a Status naming the problem.
Status gemm(Context& context, const GemmProblem& problem, const GemmOptions& options = {});

// The same with a variant already chosen (and configured): the harness's way, so that
// timing measures the rung alone. InvalidValue when it is of another backend.
Status gemm(Context& context, const GemmProblem& problem, const Variant& variant);

// The variant `options` names for `problem` in `context`, bound to its configuration: the
// named rung, or auto's choice. NotFound names an unknown rung; NotSupported says why no
// rung of the context's backend takes the problem.
Status resolve_variant(const Context& context, const GemmProblem& problem, const GemmOptions& options,
                       Variant& out);

}  // namespace gemmlab
