// OpenBLAS, loaded at run time so that OPENBLAS_CORETYPE can be chosen from the CPU's
// features before the library initialises (its own detection misses recent CPUs).
#pragma once

#include <string>

#include "gemmlab/status.hpp"

namespace gemmlab::cpu {

struct OpenBlasInfo {
  bool loaded = false;
  std::string library;   // the file dlopen found
  std::string coretype;  // OPENBLAS_CORETYPE as set before loading (ours or the user's)
  std::string corename;  // the kernel family OpenBLAS reports it runs
  std::string config;    // openblas_get_config()
  std::string error;     // why loading failed
};

const OpenBlasInfo& openblas_info();  // loads on first call
// What openblas_info() found, or null while nothing has asked for OpenBLAS: describing a run
// loads nothing, so a process that ran no OpenBLAS rung (a Python program beside NumPy's
// OpenBLAS) never gets this one's threads.
const OpenBlasInfo* openblas_info_if_loaded();

}  // namespace gemmlab::cpu
