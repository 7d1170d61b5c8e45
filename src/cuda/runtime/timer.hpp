// CUDA-event timing shared by the memory lab and the measured ceilings: warm-up runs,
// then repetitions each between two events on one stream, summarised by their median.
// Events are created before the first repetition; nothing is allocated in between.
#pragma once

#include <cuda_runtime.h>

#include <functional>

#include "cuda/lab.hpp"
#include "cuda/runtime/buffer.hpp"

namespace gemmlab::cuda {

class EventTimer {
 public:
  // Creates the two events.
  Status init();
  // `work` enqueues one repetition on `stream` (it may fork to other streams and join
  // back); it must not synchronise. Runs options.warmup untimed repetitions first.
  Status measure(cudaStream_t stream, const TimingOptions& options, const std::function<Status()>& work,
                 Timing& out);

 private:
  EventOwner start_, stop_;
};

}  // namespace gemmlab::cuda
