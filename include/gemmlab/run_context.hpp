// What a rung may use besides its operands: where it runs (backend, device, stream, threads)
// and the objects it reuses from call to call (device workspaces, library handles, kernel
// attributes already raised), kept by the gemmlab::Context it runs in. A rung keeps nothing
// of its own between calls, so two contexts never share or race on anything.
#pragma once

#include <memory>
#include <typeindex>
#include <typeinfo>
#include <utility>
#include <vector>

#include "gemmlab/types.hpp"

namespace gemmlab {

// A stream for CUDA variants (a cudaStream_t), ignored by CPU variants. Kept opaque
// so the public headers compile without CUDA.
using Stream = void*;

class RunContext {
 public:
  // threads: for the CPU rungs that use several (0: every core the process may use).
  RunContext(Backend backend, int device, Stream stream, int threads)
      : backend_(backend), device_(device), stream_(stream), threads_(threads) {}
  // Destroys what get() created, newest first (a handle may use a workspace made before it).
  ~RunContext() {
    while (!objects_.empty()) objects_.pop_back();
  }
  RunContext(const RunContext&) = delete;
  RunContext& operator=(const RunContext&) = delete;

  Backend backend() const { return backend_; }
  int device() const { return device_; }  // CUDA ordinal; -1 for the CPU
  Stream stream() const { return stream_; }
  void set_stream(Stream stream) { stream_ = stream; }
  int threads() const { return threads_; }
  // CUDA: the most SMs the persistent rungs size their grids for (0: all of them), leaving the
  // rest to work beside them (the distributed GEMM's broadcasts), as cublasSetSmCountTarget does.
  int sm_count_target() const { return sm_count_target_; }
  void set_sm_count_target(int sms) { sm_count_target_ = sms > 0 ? sms : 0; }

  // This context's object of type T, value-initialised on first use and kept until the
  // context is destroyed. A rung names its own type for each thing it keeps (its workspace
  // struct, a handle wrapper, a tag template per kernel), so the type is the key. Linear
  // search: a context holds a few dozen objects at most.
  template <class T>
  T& get() {
    const std::type_index key(typeid(T));
    for (auto& [k, object] : objects_)
      if (k == key) return static_cast<Held<T>&>(*object).value;
    objects_.emplace_back(key, std::make_unique<Held<T>>());
    return static_cast<Held<T>&>(*objects_.back().second).value;
  }

 private:
  struct Object {
    virtual ~Object() = default;
  };
  template <class T>
  struct Held final : Object {
    T value{};
  };

  Backend backend_;
  int device_;
  Stream stream_;
  int threads_;
  int sm_count_target_ = 0;
  std::vector<std::pair<std::type_index, std::unique_ptr<Object>>> objects_;
};

}  // namespace gemmlab
