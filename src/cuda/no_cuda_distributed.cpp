// The distributed GEMM's device memory in a build without CUDA: there is no device.
#include "cuda/distributed.hpp"
#include "cuda/runtime/device.hpp"

namespace gemmlab::cuda {
namespace {
Status no_cuda() { return {StatusCode::NotSupported, "this build of gemmlab has no CUDA backend"}; }
}  // namespace

int device_count() { return 0; }

Status allocate_on_device(int, std::uint64_t, void*& out) {
  out = nullptr;
  return no_cuda();
}
void free_on_device(int, void*) {}
Status copy_2d(int, void*, std::size_t, const void*, std::size_t, std::size_t, std::size_t) { return no_cuda(); }
Status synchronize_stream(int, Stream) { return no_cuda(); }
Status free_device_bytes(int, std::uint64_t& out) {
  out = 0;
  return no_cuda();
}

}  // namespace gemmlab::cuda
