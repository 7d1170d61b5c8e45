#include "cpu/thread_pool.hpp"

#include <sched.h>

namespace gemmlab::cpu {
namespace {

// Spins about a microsecond or two (a GEMM phase is far longer), then sleeps.
constexpr int kSpins = 4000;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

template <class T>
void wait_while_equal(const std::atomic<T>& value, T old) {
  for (int i = 0; i < kSpins; ++i) {
    if (value.load(std::memory_order_acquire) != old) return;
    cpu_relax();
  }
  while (value.load(std::memory_order_acquire) == old) value.wait(old, std::memory_order_acquire);
}

}  // namespace

void TeamBarrier::arrive_and_wait() {
  if (threads_ <= 1) return;
  const std::uint32_t gen = generation_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) == threads_ - 1) {
    arrived_.store(0, std::memory_order_relaxed);  // before the release below
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
  } else {
    wait_while_equal(generation_, gen);
  }
}

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? static_cast<int>(hw) : 1;
}

ThreadPool::ThreadPool(int threads) {
  for (int tid = 1; tid < threads; ++tid) workers_.emplace_back([this, tid] { worker(tid); });
}

ThreadPool::~ThreadPool() {
  stop_ = true;
  pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::run_erased(int threads, Fn fn, void* context) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  if (threads <= 1 || workers_.empty()) {
    fn(context, 0);
    return;
  }
  fn_ = fn;
  context_ = context;
  active_ = threads;
  pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);  // publishes fn_, context_, active_
  generation_.notify_all();
  fn(context, 0);
  for (int left = pending_.load(std::memory_order_acquire); left != 0;
       left = pending_.load(std::memory_order_acquire))
    wait_while_equal(pending_, left);
}

void ThreadPool::worker(int tid) {
  std::uint64_t seen = 0;
  for (;;) {
    wait_while_equal(generation_, seen);
    seen = generation_.load(std::memory_order_acquire);
    if (stop_) return;
    if (tid < active_) fn_(context_, tid);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

}  // namespace gemmlab::cpu
