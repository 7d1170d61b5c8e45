// gemmlab::Context: a backend, for CUDA a device and stream, and the objects the rungs keep.
#include "gemmlab/context.hpp"

#include <fmt/format.h>

#include "cuda/backend.hpp"

namespace gemmlab {

Status Context::create(const ContextOptions& options, std::unique_ptr<Context>& out) {
  if (options.threads < 0)
    return {StatusCode::InvalidValue, fmt::format("threads ({}) must be 0 (every core) or more", options.threads)};
  int device = -1;
  if (options.backend == Backend::Cuda) {
    if (options.device < 0)
      return {StatusCode::InvalidValue, fmt::format("device ({}) must be a CUDA ordinal, 0 or more", options.device)};
    GEMMLAB_TRY(cuda::make_current(options.device));
    device = options.device;
  }
  out.reset(new Context(std::make_unique<RunContext>(options.backend, device, options.stream, options.threads)));
  return Status::ok();
}

Context::~Context() {
  // Device workspaces are freed on their own device, whichever is current on this thread.
  if (resources_->backend() == Backend::Cuda) (void)cuda::make_current(resources_->device());
  resources_.reset();
}

}  // namespace gemmlab
