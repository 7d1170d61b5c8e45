// The library entry point.
#pragma once

#include "gemmlab/problem.hpp"
#include "gemmlab/registry.hpp"
#include "gemmlab/status.hpp"
#include "gemmlab/variant.hpp"

namespace gemmlab {

// C <- alpha * op(A) * op(B) + beta * C with the given variant. Validates the problem,
// asks the variant's can_implement, then runs it on `stream` (CUDA) or the calling thread
// (CPU). Data must live where the variant's backend computes: host memory for cpu, device
// memory for cuda. m = 0 or n = 0 does nothing; k = 0 or alpha = 0 computes beta * C
// without reading A or B; beta = 0 never reads C.
Status gemm(const GemmProblem& problem, const Variant& variant, Stream stream = nullptr);

// The same, by backend and name; NotFound names the variant.
Status gemm(const GemmProblem& problem, Backend backend, std::string_view variant_name,
            Stream stream = nullptr);

}  // namespace gemmlab
