#include "cuda/nccl/nccl_check.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "cuda/distributed.hpp"

namespace gemmlab::cuda {

Status nccl_status(ncclResult_t result, const char* call, const char* file, int line) {
  if (result == ncclSuccess) return Status::ok();
  const StatusCode code = result == ncclInvalidArgument || result == ncclInvalidUsage ? StatusCode::InvalidValue
                                                                                       : StatusCode::ExecutionFailed;
  return {code, fmt::format("{} failed: {} ({}:{}; NCCL {})", call, ncclGetErrorString(result), file, line,
                            nccl_library_version())};
}

void disable_nvls() {
  static std::once_flag once;
  std::call_once(once, [] { setenv("NCCL_NVLS_ENABLE", "0", 1); });
}

bool nccl_built() { return true; }

std::string nccl_library_version() {
  int code = 0;
  if (ncclGetVersion(&code) != ncclSuccess) return "unknown";
  // NCCL_VERSION(X, Y, Z) = X * 10000 + Y * 100 + Z since 2.9.
  return fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
}

}  // namespace gemmlab::cuda
