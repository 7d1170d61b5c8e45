// `auto`: which rung runs a problem when the caller names none.
#pragma once

#include "gemmlab/problem.hpp"
#include "gemmlab/variant.hpp"

namespace gemmlab {

// The fastest of gemmlab's own rungs (never an anchor) for `problem` on `backend` and the
// current device, by the measured rules of choose.cpp: the first candidate of the problem's
// precision that runs here and can implement the problem. NotSupported says why none can.
Status choose_auto(Backend backend, const GemmProblem& problem, Variant& out);

}  // namespace gemmlab
