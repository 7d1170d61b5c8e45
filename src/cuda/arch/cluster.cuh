// Thread-block clusters (sm_90): blocks of one cluster run on one GPC at the same time and
// can reach each other's shared memory, so one TMA load can land in several blocks
// (multicast) and a block can arrive on a peer's mbarrier. Also the warpgroup-local named
// barrier the epilogues use. Device code only, used only by the Hopper engine's kernels,
// whose bodies compile only for sm_90a (target.cuh).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace gemmlab::cuda::arch {

// This block's rank in its cluster (0 when the launch has no cluster).
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

// Every thread of every block of the cluster: arrive (release) and wait (acquire). What the
// blocks wrote to shared memory before it, and their mbarrier inits, are visible after it.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
  asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
}

// Arrives on the mbarrier at the same shared-memory offset as `barrier` in block `rank` of
// the cluster (this block's own when rank is its own). Release at CTA scope, the default:
// what the arrival publishes is that this block's reads of a stage are done (wgmma.wait),
// not memory writes. Release at cluster scope made the wgmma_ws pipeline 2.3x slower (H100).
__device__ __forceinline__ void mbarrier_arrive_cluster(std::uint64_t* barrier, unsigned rank) {
  const auto local = static_cast<std::uint32_t>(__cvta_generic_to_shared(barrier));
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(local), "r"(rank));
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(remote) : "memory");
}

// bar.sync on named barrier `id` (1..15; 0 is __syncthreads) for `threads` threads, a
// multiple of 32: synchronises one warpgroup without stopping the others.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace gemmlab::cuda::arch
