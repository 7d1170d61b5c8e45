// Whole rounds kept in step. The persistent kernel's blocks take their units round-robin, so
// the 132 units of one round share rows of A and columns of B (grouped order), and L2 serves
// each K step's tiles to 8-16 SMs only while those SMs sit at the same K step. Nothing held
// them there: a block that runs a little faster starts every later round a little earlier,
// and over many rounds the blocks of one round drift whole tiles apart. Measured on an H200
// (bf16 NT, Nsight Compute): 8192^3 read 1.3 GB from DRAM, but 32768 x 32768 x 8192 read
// 69 GB and 32768^3 277 GB, four times what the same rounds read in step (a hit rate of
// 44-51 % in L2); the extra DRAM traffic spends power that the 700 W cap takes from the clock.
//
// So before a block's producer issues the first copy of a round, it counts itself on a
// counter in global memory and waits until every producer of the grid has issued the last
// copy of the round before. The consumers follow their producer a few stages behind; the
// faster blocks idle for what the slowest one lags, once a round. The wait is bounded
// (kLockstepWaitNs): a block that is not resident yet (another kernel on the SMs) delays
// the others by at most that much a round and never deadlocks them; nothing but speed
// depends on the counter.
#pragma once

#include <cuda_runtime.h>

#include <cuda/atomic>

#include "cuda/hopper/stream_k.hpp"

namespace gemmlab::cuda::hopper {

// Two counters in global memory, zero between runs: the producers' arrivals at round
// boundaries, and the producers that have finished.
struct Lockstep {
  int* counters = nullptr;  // nullptr: rounds run free
};

inline constexpr unsigned long long kLockstepWaitNs = 20000;  // a round takes 20-800 us
inline constexpr unsigned kLockstepPollNs = 64;

__device__ __forceinline__ unsigned long long lockstep_clock_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One thread of a producer: it has issued every copy of its rounds before `round` (>= 1);
// returns once all `producers` have, or after kLockstepWaitNs.
__device__ __forceinline__ void lockstep_round(const Lockstep& l, int round, int producers) {
  ::cuda::atomic_ref<int, ::cuda::thread_scope_device> arrived(l.counters[0]);
  arrived.fetch_add(1, ::cuda::memory_order_relaxed);
  const int all = round * producers;
  const unsigned long long start = lockstep_clock_ns();
  while (arrived.load(::cuda::memory_order_relaxed) < all && lockstep_clock_ns() - start < kLockstepWaitNs)
    __nanosleep(kLockstepPollNs);
}

// One thread of a producer whose whole units end after `began` rounds, where the fullest
// clusters have `rounds`: it counts itself at the round boundaries it has no round for
// (stream_k::lockstep_counts_at_end), so that no one waits for it there.
__device__ __forceinline__ void lockstep_end_rounds(const Lockstep& l, int began, int rounds) {
  const int missing = stream_k::lockstep_counts_at_end(began, rounds);
  if (missing > 0)
    ::cuda::atomic_ref<int, ::cuda::thread_scope_device>(l.counters[0]).fetch_add(missing, ::cuda::memory_order_relaxed);
}

// One thread of a producer, once it has issued its last copy: the last of the grid's
// producers to finish sets both counters back to zero for the next run. (Every producer's
// arrivals precede its release here; the last one's acquire sees them all.)
__device__ __forceinline__ void lockstep_leave(const Lockstep& l, int producers) {
  ::cuda::atomic_ref<int, ::cuda::thread_scope_device> arrived(l.counters[0]), left(l.counters[1]);
  if (left.fetch_add(1, ::cuda::memory_order_acq_rel) == producers - 1) {
    arrived.store(0, ::cuda::memory_order_relaxed);
    left.store(0, ::cuda::memory_order_relaxed);
  }
}

}  // namespace gemmlab::cuda::hopper
