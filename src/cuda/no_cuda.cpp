// The CUDA backend of a build without CUDA: no rungs, no device.
#include "cuda/backend.hpp"
#include "cuda/distributed.hpp"
#include "cuda/runtime/device.hpp"
#include "core/executor.hpp"

namespace gemmlab {

namespace cuda {
const std::vector<Variant>& registry() {
  static const std::vector<Variant> none;
  return none;
}
bool device_present() { return false; }
Status current_device_memory(DeviceMemoryState&) {
  return {StatusCode::NotSupported, "this build of gemmlab has no CUDA backend"};
}
int device_sm_count() { return 1; }
Status make_current(int) { return {StatusCode::NotSupported, "this build of gemmlab has no CUDA backend"}; }
Status scale_c(const GemmProblem&, Stream) {
  return {StatusCode::NotSupported, "this build of gemmlab has no CUDA backend"};
}
Status run_out_of_core(const GemmProblem&, const Variant&, const OutOfCorePlan&, RunContext&) {
  return {StatusCode::NotSupported, "this build of gemmlab has no CUDA backend"};
}
Status measure_strided_beside(const std::function<Status()>&, std::size_t, OutOfCoreRates::StridedCurve&) {
  return {StatusCode::NotSupported, "this build of gemmlab has no CUDA backend"};
}
Status cublasxt_sgemm(const GemmProblem&, const std::vector<int>&, int, RunContext&) {
  return {StatusCode::NotSupported, "this build of gemmlab has no CUDA backend"};
}
Status cublasxt_default_block_dim(RunContext&, const std::vector<int>&, int&) {
  return {StatusCode::NotSupported, "this build of gemmlab has no CUDA backend"};
}
Status under_link_traffic(double, const std::function<Status()>&) {
  return {StatusCode::NotSupported, "this build of gemmlab has no CUDA backend"};
}
Status measure_host_link(std::size_t, int, HostLinkRates&) {
  return {StatusCode::NotSupported, "this build of gemmlab has no CUDA backend"};
}
Status can_access_peer(int, int, bool& out) {
  out = false;
  return {StatusCode::NotSupported, "this build of gemmlab has no CUDA backend"};
}
Status measure_peer_link(const std::vector<int>&, std::size_t, int, PeerLinkRates&) {
  return {StatusCode::NotSupported, "this build of gemmlab has no CUDA backend"};
}
std::uint64_t out_of_core_buffer_bytes(RunContext&) { return 0; }
void release_out_of_core_buffers(RunContext&) {}
Status is_device_pointer(const void*, bool& out) {
  out = false;
  return Status::ok();
}
}  // namespace cuda

Status make_cuda_executor(std::unique_ptr<Executor>&, int) {
  return {StatusCode::NotSupported,
          "this build of gemmlab has no CUDA backend (configure with nvcc present or -DGEMMLAB_CUDA=ON)"};
}

}  // namespace gemmlab
