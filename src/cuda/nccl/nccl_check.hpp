// NCCL failures as a Status naming the call, and the process-wide setting gemmlab makes before
// its first communicator. Included by src/cuda/nccl/ only (nccl.h stays below the library).
#pragma once

#include <nccl.h>

#include "gemmlab/status.hpp"

namespace gemmlab::cuda {

Status nccl_status(ncclResult_t result, const char* call, const char* file, int line);

// NVLink SHARP (multicast) stays off for every communicator this process makes: on shared
// machines multicast objects can take GPUs out of service. NCCL reads the variable once, at
// its first initialisation, so this runs before every communicator is made (cheaply after
// the first time) and overrides a caller's setting.
void disable_nvls();

}  // namespace gemmlab::cuda

#define NCCL_CHECK(call) GEMMLAB_TRY(::gemmlab::cuda::nccl_status((call), #call, __FILE__, __LINE__))
