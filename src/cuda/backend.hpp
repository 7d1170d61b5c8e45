// What the backend-neutral library needs from the CUDA backend. Defined in src/cuda/
// (or src/cuda/no_cuda.cpp in a build without CUDA), so nothing above includes CUDA headers.
#pragma once

#include <vector>

#include "gemmlab/variant.hpp"

namespace gemmlab::cuda {

const std::vector<Variant>& registry();
bool device_present();
// Makes CUDA device `ordinal` the calling thread's current one (nothing when it already is).
// An ordinal out of range is InvalidValue naming how many devices there are; NotSupported
// without a device or in a build without CUDA.
Status make_current(int ordinal);
// The current device's SM count (1 if unreadable or without CUDA), for wave-aware choices.
int device_sm_count();
// C <- beta * C on the device, on `stream`, without reading A or B (k = 0 or alpha = 0).
Status scale_c(const GemmProblem& problem, Stream stream);

}  // namespace gemmlab::cuda
