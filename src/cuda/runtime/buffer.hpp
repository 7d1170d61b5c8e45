// Non-copyable owners of device memory, pinned host memory, streams and events.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda {

template <class Traits>
class Owner {
 public:
  using Handle = typename Traits::Handle;
  Owner() = default;
  explicit Owner(Handle h) : handle_(h) {}
  ~Owner() { reset(); }
  Owner(const Owner&) = delete;
  Owner& operator=(const Owner&) = delete;
  Owner(Owner&& other) noexcept : handle_(std::exchange(other.handle_, Handle{})) {}
  Owner& operator=(Owner&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, Handle{});
    }
    return *this;
  }
  Handle get() const { return handle_; }
  explicit operator bool() const { return handle_ != Handle{}; }
  void reset() {
    if (handle_ != Handle{}) Traits::release(handle_);
    handle_ = Handle{};
  }

 private:
  Handle handle_{};
};

struct DeviceMemoryTraits {
  using Handle = void*;
  static void release(void* p) { cudaFree(p); }
};
struct PinnedMemoryTraits {
  using Handle = void*;
  static void release(void* p) { cudaFreeHost(p); }
};
struct StreamTraits {
  using Handle = cudaStream_t;
  static void release(cudaStream_t s) { cudaStreamDestroy(s); }
};
struct EventTraits {
  using Handle = cudaEvent_t;
  static void release(cudaEvent_t e) { cudaEventDestroy(e); }
};

using StreamOwner = Owner<StreamTraits>;
using EventOwner = Owner<EventTraits>;

// Device or pinned memory with its size.
template <class Traits>
class Memory {
 public:
  Memory() = default;
  void* data() const { return owner_.get(); }
  std::size_t bytes() const { return bytes_; }
  template <class T>
  T* as() const { return static_cast<T*>(owner_.get()); }

  static Status allocate(std::size_t bytes, Memory& out);

 private:
  Owner<Traits> owner_;
  std::size_t bytes_ = 0;
};

using DeviceMemory = Memory<DeviceMemoryTraits>;
using PinnedMemory = Memory<PinnedMemoryTraits>;

template <>
inline Status DeviceMemory::allocate(std::size_t bytes, DeviceMemory& out) {
  void* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, bytes > 0 ? bytes : 1));
  out.owner_ = Owner<DeviceMemoryTraits>(p);
  out.bytes_ = bytes;
  return Status::ok();
}

template <>
inline Status PinnedMemory::allocate(std::size_t bytes, PinnedMemory& out) {
  void* p = nullptr;
  CUDA_CHECK(cudaMallocHost(&p, bytes > 0 ? bytes : 1));
  out.owner_ = Owner<PinnedMemoryTraits>(p);
  out.bytes_ = bytes;
  return Status::ok();
}

inline Status make_stream(StreamOwner& out) {
  cudaStream_t s = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  out = StreamOwner(s);
  return Status::ok();
}

inline Status make_event(EventOwner& out) {
  cudaEvent_t e = nullptr;
  CUDA_CHECK(cudaEventCreate(&e));
  out = EventOwner(e);
  return Status::ok();
}

}  // namespace gemmlab::cuda
