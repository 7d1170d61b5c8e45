// The memory lab and the measured ceilings in a build without CUDA: every call says so.
#include "cuda/lab.hpp"

namespace gemmlab::cuda {
namespace {
Status no_cuda() {
  return {StatusCode::NotSupported,
          "this build of gemmlab has no CUDA backend (configure with nvcc present or -DGEMMLAB_CUDA=ON)"};
}
}  // namespace

Status measure_ceilings(const CeilingOptions&, DeviceFacts&, Ceilings&) { return no_cuda(); }
Status kernel_attributes(const KernelInfo&, KernelAttributes&) { return no_cuda(); }
Status query_all_devices(std::vector<DeviceFacts>&) { return no_cuda(); }
std::vector<MemExperimentInfo> mem_experiments() { return {}; }
Status run_mem(const MemOptions&, MemReport&) { return no_cuda(); }

}  // namespace gemmlab::cuda
