// gemmlab::Context: everything a GEMM needs besides its operands, owned in one place. A
// context is bound to a backend, and for CUDA to one device and a stream; it owns the
// workspaces, library handles and thread team the rungs reuse between calls, and frees them
// when it is destroyed. The library keeps no state of its own: two contexts (on two
// threads, on two devices) never share anything. One context serves one thread at a time.
#pragma once

#include <memory>
#include <string>

#include "gemmlab/run_context.hpp"
#include "gemmlab/status.hpp"
#include "gemmlab/types.hpp"

namespace gemmlab {

struct ContextOptions {
  Backend backend = Backend::Cpu;
  // CUDA: the device, an ordinal among those CUDA_VISIBLE_DEVICES leaves visible.
  int device = 0;
  // CUDA: the stream every call runs on, not owned (nullptr: the legacy default stream).
  Stream stream = nullptr;
  // CPU: threads for the rungs that use several (0: every core this process may use).
  int threads = 0;
};

class Context {
 public:
  // InvalidValue for a device ordinal out of range (naming how many there are) or a
  // negative thread count; NotSupported for CUDA in a build without it or with no device.
  static Status create(const ContextOptions& options, std::unique_ptr<Context>& out);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  Backend backend() const { return resources_->backend(); }
  int device() const { return resources_->device(); }
  Stream stream() const { return resources_->stream(); }
  // Later calls run on `stream` (same device). Workspaces stay: a caller that switches
  // streams orders the two itself, as with cuBLAS's cublasSetStream.
  void set_stream(Stream stream) { resources_->set_stream(stream); }

  // CUDA: the persistent rungs size their grids for at most `sms` SMs (0: every SM), leaving
  // the others to kernels that run beside them (cuBLAS's cublasSetSmCountTarget).
  void set_sm_count_target(int sms) { resources_->set_sm_count_target(sms); }
  int sm_count_target() const { return resources_->sm_count_target(); }

  // What the rungs keep in this context (see run_context.hpp).
  RunContext& resources() { return *resources_; }

 private:
  explicit Context(std::unique_ptr<RunContext> resources) : resources_(std::move(resources)) {}
  std::unique_ptr<RunContext> resources_;
};

}  // namespace gemmlab
