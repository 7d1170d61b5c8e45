// A kernel that holds a stream until the host has enqueued the work behind it, so that the
// events around that work time the GPU and not the host's launch path (nvbench's "blocking
// kernel" method). Without it, a repetition whose host side (tensor maps, launch
// attributes, operand staging) takes longer than the GPU work still queued ahead of it
// starts late, and the wait lands between the events: at the smallest sizes that is a
// visible share of a 10-20 us kernel.
#pragma once

#include <cuda_runtime.h>

#include "cuda/runtime/buffer.hpp"
#include "gemmlab/status.hpp"

namespace gemmlab::cuda {

class LaunchGate {
 public:
  // Pinned host words the gate kernel reads and writes.
  Status init();
  // Enqueues the gate on `stream`: the stream waits there until release(), or until the
  // gate gives up after kGateTimeoutSeconds (check() then reports it).
  Status hold(cudaStream_t stream);
  // Lets the held gate pass. Safe to call when nothing is held.
  void release();
  // After the stream has run past the gate: an error if it passed by timing out, since the
  // events behind it then measured the host after all.
  Status check();

  static constexpr double kGateTimeoutSeconds = 10.0;

 private:
  PinnedMemory words_;  // [0] the generation released by the host, [1] set by a gate that timed out
  unsigned generation_ = 0;
};

}  // namespace gemmlab::cuda
