#include "cuda/runtime/timer.hpp"

#include <algorithm>
#include <vector>

namespace gemmlab::cuda {

Status EventTimer::init() {
  GEMMLAB_TRY(make_event(start_));
  GEMMLAB_TRY(make_event(stop_));
  return Status::ok();
}

Status EventTimer::measure(cudaStream_t stream, const TimingOptions& options,
                           const std::function<Status()>& work, Timing& out) {
  if (!start_ || !stop_) GEMMLAB_TRY(init());
  for (int i = 0; i < options.warmup; ++i) GEMMLAB_TRY(work());
  CUDA_CHECK(cudaStreamSynchronize(stream));
  const int reps = std::max(1, options.reps);
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(reps));
  for (int i = 0; i < reps; ++i) {
    CUDA_CHECK(cudaEventRecord(start_.get(), stream));
    GEMMLAB_TRY(work());
    CUDA_CHECK(cudaEventRecord(stop_.get(), stream));
    CUDA_CHECK(cudaEventSynchronize(stop_.get()));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    samples.push_back(ms);
  }
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  out.reps = static_cast<int>(n);
  out.median_ms = n % 2 == 1 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  out.min_ms = samples.front();
  out.max_ms = samples.back();
  return Status::ok();
}

}  // namespace gemmlab::cuda
