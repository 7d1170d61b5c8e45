#include "cuda/runtime/launch_gate.hpp"

#include <cuda/atomic>

#include <atomic>
#include <string>

#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda {
namespace {

constexpr int kReleased = 0, kTimedOut = 1;
// How long the gate sleeps between looks at the host's word: short against a launch.
constexpr unsigned kPollNanoseconds = 200;

__device__ __forceinline__ unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One thread waits until the host has released `generation` (pinned memory, read with
// system-scope acquire loads), or gives up after `limit_ns` and says so.
__global__ void gate_kernel(unsigned* words, unsigned generation, unsigned long long limit_ns) {
  ::cuda::atomic_ref<unsigned, ::cuda::thread_scope_system> released(words[kReleased]);
  const unsigned long long start = globaltimer_ns();
  // Generations wrap; the difference does not.
  while (static_cast<int>(released.load(::cuda::memory_order_acquire) - generation) < 0) {
    if (globaltimer_ns() - start > limit_ns) {
      ::cuda::atomic_ref<unsigned, ::cuda::thread_scope_system>(words[kTimedOut]).store(1u, ::cuda::memory_order_relaxed);
      return;
    }
    __nanosleep(kPollNanoseconds);
  }
}

}  // namespace

Status LaunchGate::init() {
  GEMMLAB_TRY(PinnedMemory::allocate(2 * sizeof(unsigned), words_));
  words_.as<unsigned>()[kReleased] = 0;
  words_.as<unsigned>()[kTimedOut] = 0;
  generation_ = 0;
  return Status::ok();
}

Status LaunchGate::hold(cudaStream_t stream) {
  if (words_.data() == nullptr) return {StatusCode::InternalError, "LaunchGate::hold before init"};
  ++generation_;
  gate_kernel<<<1, 1, 0, stream>>>(words_.as<unsigned>(), generation_,
                                    static_cast<unsigned long long>(kGateTimeoutSeconds * 1e9));
  const Status launched = cuda_status(cudaGetLastError(), "launch of gate_kernel", __FILE__, __LINE__);
  if (!launched) release();  // nothing waits for it; keep the generations in step
  return launched;
}

void LaunchGate::release() {
  if (words_.data() == nullptr) return;
  std::atomic_ref<unsigned>(words_.as<unsigned>()[kReleased]).store(generation_, std::memory_order_release);
}

Status LaunchGate::check() {
  std::atomic_ref<unsigned> timed_out(words_.as<unsigned>()[kTimedOut]);
  if (timed_out.exchange(0u, std::memory_order_acq_rel) == 0u) return Status::ok();
  return {StatusCode::ExecutionFailed, "the launch gate timed out: the host took more than " +
                                           std::to_string(static_cast<int>(kGateTimeoutSeconds)) +
                                           " s to enqueue one timed repetition, so its events timed the host"};
}

}  // namespace gemmlab::cuda
