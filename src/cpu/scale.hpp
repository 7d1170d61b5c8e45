#pragma once

#include "gemmlab/problem.hpp"

namespace gemmlab::cpu {
Status scale_c(const GemmProblem& problem);
}
