// How a gemmlab Status reaches Python: a bad argument (InvalidValue) or an unknown name
// (NotFound) as ValueError, everything else (NotSupported, ArchMismatch, AllocFailed,
// ExecutionFailed, InternalError) as gemmlab.GemmlabError, a RuntimeError. The message is the
// Status's own ("invalid value: lda (3) must be >= 5 ...").
#pragma once

#include <nanobind/nanobind.h>

#include <stdexcept>

#include "gemmlab/status.hpp"

namespace gemmlab::python {

// Thrown for a failed Status that is not the caller's bad argument; the module registers it
// as gemmlab.GemmlabError (module.cpp). Its message begins with the code ("not supported: ").
class StatusError : public std::runtime_error {
 public:
  explicit StatusError(const Status& status) : std::runtime_error(status.describe()) {}
};

// Raises the Python exception for `status`; returns when it is ok.
inline void raise_if_failed(const Status& status) {
  if (status.is_ok()) return;
  if (status.code() == StatusCode::InvalidValue || status.code() == StatusCode::NotFound)
    throw nanobind::value_error(status.describe().c_str());
  throw StatusError(status);
}

}  // namespace gemmlab::python
