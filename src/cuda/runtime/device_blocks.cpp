// Device memory and 2-D copies on a given device, for the distributed GEMM's blocks
// (DistributedBuffers) and its memory budget.
#include <cuda_runtime.h>

#include "cuda/backend.hpp"
#include "cuda/distributed.hpp"
#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda {

Status allocate_on_device(int device, std::uint64_t bytes, void*& out) {
  GEMMLAB_TRY(make_current(device));
  out = nullptr;
  CUDA_CHECK(cudaMalloc(&out, bytes > 0 ? bytes : 1));
  return Status::ok();
}

void free_on_device(int device, void* data) {
  if (data == nullptr) return;
  (void)make_current(device);
  cudaFree(data);
}

Status copy_2d(int device, void* to, std::size_t to_pitch, const void* from, std::size_t from_pitch, std::size_t width,
               std::size_t height) {
  if (width == 0 || height == 0) return Status::ok();
  GEMMLAB_TRY(make_current(device));
  CUDA_CHECK(cudaMemcpy2D(to, to_pitch, from, from_pitch, width, height, cudaMemcpyDefault));
  return Status::ok();
}

Status synchronize_stream(int device, Stream stream) {
  GEMMLAB_TRY(make_current(device));
  CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
  return Status::ok();
}

Status free_device_bytes(int device, std::uint64_t& out) {
  GEMMLAB_TRY(make_current(device));
  std::size_t free = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  out = free;
  return Status::ok();
}

}  // namespace gemmlab::cuda
