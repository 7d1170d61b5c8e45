// A pool of worker threads for the threaded rung (one per context), and the barrier its team
// uses.
//
// Threads are created once (on first use), so a timed GEMM never pays for thread creation
// or allocation. Waiting spins briefly and then sleeps on the atomic (a futex on Linux):
// on a machine shared with other work, a waiter must not burn the core that the thread
// it waits for needs.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace gemmlab::cpu {

// A reusable barrier for a fixed team size (sense by generation number).
class TeamBarrier {
 public:
  explicit TeamBarrier(int threads) : threads_(threads) {}
  void arrive_and_wait();

 private:
  const int threads_;
  std::atomic<int> arrived_{0};
  std::atomic<std::uint32_t> generation_{0};
};

class ThreadPool {
 public:
  // `threads` in all: the caller of run() is thread 0, so threads - 1 workers. Each owner
  // (a gemmlab::Context's team, a measurement) has its own pool.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls task(tid) for tid = 0 .. threads-1 (threads <= size()), tid 0 on the calling
  // thread, and returns when every call has returned. Calls from several threads are
  // serialised (one GEMM at a time owns the pool).
  template <class Task>
  void run(int threads, Task& task) {
    run_erased(threads, [](void* t, int tid) { (*static_cast<Task*>(t))(tid); }, &task);
  }

 private:
  using Fn = void (*)(void*, int);
  void run_erased(int threads, Fn fn, void* context);
  void worker(int tid);

  std::vector<std::thread> workers_;
  std::mutex run_mutex_;
  Fn fn_ = nullptr;
  void* context_ = nullptr;
  int active_ = 0;
  bool stop_ = false;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<int> pending_{0};
};

// The number of logical cores this process may run on (affinity mask, else
// hardware_concurrency, else 1).
int usable_cores();

}  // namespace gemmlab::cpu
