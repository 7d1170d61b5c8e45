// Status: what every library call returns. The library never throws, exits or prints.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace gemmlab {

// Codes in the spirit of cublasStatus_t.
enum class StatusCode {
  Success,
  InvalidValue,     // a bad argument; the message names it
  NotSupported,     // a valid problem this variant or build cannot run (see can_implement)
  ArchMismatch,     // the device lacks a feature the variant needs
  AllocFailed,      // device or host memory could not be allocated
  ExecutionFailed,  // a kernel or library call failed at run time
  NotFound,         // an unknown variant, device or file
  InternalError,
};

std::string_view to_string(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }

  bool is_ok() const { return code_ == StatusCode::Success; }
  explicit operator bool() const { return is_ok(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "invalid value: lda (3) must be >= 5 ..." for people.
  std::string describe() const;

 private:
  StatusCode code_ = StatusCode::Success;
  std::string message_;
};

}  // namespace gemmlab

// Propagate a failed Status to the caller.
#define GEMMLAB_TRY(expr)                                  \
  do {                                                     \
    ::gemmlab::Status gemmlab_try_status_ = (expr);        \
    if (!gemmlab_try_status_.is_ok()) return gemmlab_try_status_; \
  } while (0)
