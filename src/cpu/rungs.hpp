// The CPU rungs, one function per file, collected by registry.cpp in ladder order.
#pragma once

#include "gemmlab/variant.hpp"

namespace gemmlab::cpu {

Variant naive_variant();           // 01_naive.cpp
Variant openblas_variant(int threads);  // openblas.cpp: the anchor (0 = all cores)

// What every f32 CPU rung requires of a problem.
Status require_f32_host(const GemmProblem& problem, std::string_view rung);

}  // namespace gemmlab::cpu
