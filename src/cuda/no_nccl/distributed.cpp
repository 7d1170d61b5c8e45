// The distributed GEMM in a build without NCCL: a group holds nothing, and every call on
// device operands says what is missing. (Also compiled in a build without CUDA.)
#include "cuda/distributed.hpp"

namespace gemmlab {

struct DeviceGroupState {};

namespace cuda {

bool nccl_built() { return false; }
bool nccl_copy_engines() { return false; }
std::string nccl_library_version() { return {}; }

Status make_group_state(const std::vector<int>&, double, DeviceGroupState*& out) {
  out = new DeviceGroupState;
  return Status::ok();
}

void destroy_group_state(DeviceGroupState* state) { delete state; }

Status run_distributed(DeviceGroup&, const DistributedGemmProblem&, const Variant&, const DistributedPlan&,
                       const DistributedOptions&, DistributedRun&) {
  return {StatusCode::NotSupported,
          "this build of gemmlab has no NCCL, so no distributed GEMM on device operands (configure with NCCL "
          "installed: the system's libnccl or pip's nvidia-nccl-cu13; gemm_distributed_host needs none)"};
}

}  // namespace cuda
}  // namespace gemmlab
