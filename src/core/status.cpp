#include "gemmlab/status.hpp"

#include <string>

namespace gemmlab {

std::string_view to_string(StatusCode code) {
  switch (code) {
    case StatusCode::Success: return "success";
    case StatusCode::InvalidValue: return "invalid value";
    case StatusCode::NotSupported: return "not supported";
    case StatusCode::ArchMismatch: return "architecture mismatch";
    case StatusCode::AllocFailed: return "allocation failed";
    case StatusCode::ExecutionFailed: return "execution failed";
    case StatusCode::NotFound: return "not found";
    case StatusCode::InternalError: return "internal error";
  }
  return "unknown status";
}

std::string Status::describe() const {
  if (is_ok()) return "success";
  std::string text(to_string(code_));
  if (!message_.empty()) text += ": " + message_;
  return text;
}

}  // namespace gemmlab
