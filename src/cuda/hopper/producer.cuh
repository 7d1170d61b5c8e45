// The TMA producer's pieces: one stage's copies of A and B (one thread issues them, each
// completing on the stage's `full` mbarrier with its byte count), multicast to both blocks of
// a cluster where they share B, and the order in which clusters walk the tiles.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cuda/ptx>

#include <cstdint>

#include "cuda/hopper/config.cuh"
#include "cuda/tiles/block_order.cuh"
#include "cuda/tiles/common.cuh"

namespace gemmlab::cuda::hopper {

namespace ptx = ::cuda::ptx;

// One TMA copy of a box into this block's shared memory or, in a cluster of `Blocks`, into
// the blocks of `mask` (multicast: the same offset in each, each block's `full` barrier
// counting the bytes that land in it).
template <int Blocks>
__device__ __forceinline__ void copy_box(const CUtensorMap* map, unsigned char* dst, const std::int32_t (&at)[2],
                                         std::uint64_t* full, std::uint16_t mask = 0) {
  if constexpr (Blocks == 1) {
    ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, dst, map, at, full);
  } else {
    ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, dst, map, at, full, mask);
  }
}

// One stage's copies: A (128 rows) and B (256 rows), as one box each or as 64-wide chunks.
// The blocks of a cluster (ClusterM of them, neighbours along M) multiply the same B tile:
// each loads its share of the B rows or chunks and multicasts it to all, so B crosses from
// L2 once per cluster.
template <class E, bool TransA, bool TransB, int ClusterM = 1>
__device__ __forceinline__ void load_stage(const CUtensorMap* map_a, const CUtensorMap* map_b, unsigned char* stage,
                                           std::uint64_t* full, int m0, int n0, int ka, int kb, unsigned rank = 0) {
  ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, full, kStageBytes);
  unsigned char* a = stage;                 // (BM, BK)
  unsigned char* b = stage + kABytes;       // (BN, BK)
  const unsigned rm = rank % ClusterM;
  if constexpr (!TransA) {
    const std::int32_t at[2] = {ka, m0};  // A is m x k: (column k, row m)
    ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, a, map_a, at, full);
  } else if constexpr (!E::kMnMajor) {  // tf32 A stored k x m: four blocks of 32 rows of A
#pragma unroll
    for (int h = 0; h < kBM / kMnBlock; ++h) {
      const std::int32_t at[2] = {m0 + h * kMnBlock, ka};
      ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, a + h * kMnBlockBytes, map_a, at, full);
    }
  } else {
#pragma unroll
    for (int h = 0; h < kBM / kChunk; ++h) {
      const std::int32_t at[2] = {m0 + h * kChunk, ka};  // A stored k x m
      ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, a + h * kChunkBytes, map_a, at, full);
    }
  }
  // B: shared by every block of the cluster.
  constexpr auto kMask = static_cast<std::uint16_t>((1u << ClusterM) - 1);
  if constexpr (TransB) {
    constexpr int kRows = kBN / ClusterM;  // the tensor map's box (tma_b)
    const std::int32_t at[2] = {kb, n0 + static_cast<int>(rm) * kRows};  // B stored n x k
    copy_box<ClusterM>(map_b, b + rm * kRows * kRowBytes, at, full, kMask);
  } else {
    constexpr int kChunks = kBN / kChunk / ClusterM;
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
      const int q = static_cast<int>(rm) * kChunks + i;
      const std::int32_t at[2] = {n0 + q * kChunk, kb};  // B stored k x n
      copy_box<ClusterM>(map_b, b + q * kChunkBytes, at, full, kMask);
    }
  }
}

// An L2 prefetch of one box of a tensor map (cp.async.bulk.prefetch.tensor, PTX ISA 8.0): no
// shared memory, no barrier, and nothing to wait for; the memory system may drop it.
__device__ __forceinline__ void prefetch_box_l2(const CUtensorMap* map, const std::int32_t (&at)[2]) {
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];" ::"l"(map), "r"(at[0]), "r"(at[1])
               : "memory");
}

// An epilogue that adds beta * C reads each chunk of C just before it stores it, a DRAM
// latency per chunk while the tensor cores wait. So the producer asks for the tile's C in L2
// this many K steps before the tile's last: with the ring kStages ahead of the consumers, the
// lines have 8-12 stages to arrive.
constexpr int kCPrefetchLead = 8;
// The tile at (row0, col0) of C into L2, in the epilogue's 64-row by 128-byte boxes (tma_c).
// (Not unrolled: the producer has 40 registers, and unrolled the tf32 kernels spilled.)
template <class Out>
__device__ __forceinline__ void prefetch_c_tile(const CUtensorMap* map_c, int row0, int col0) {
  constexpr int kBoxes = kBN / kEpilogueCols<Out>;
#pragma unroll 1
  for (int box = 0; box < kConsumers * kBoxes; ++box) {
    const std::int32_t at[2] = {col0 + (box % kBoxes) * kEpilogueCols<Out>, row0 + (box / kBoxes) * kEpilogueRows};
    prefetch_box_l2(map_c, at);
  }
}

// The tile a cluster (or a lone block) works on: clusters walk units of ClusterM tile rows
// by one tile column in grouped order, and block `rank` takes row `rank` of the unit.
template <int ClusterM>
__device__ __forceinline__ void cluster_tile(int unit, int tiles_m, int tiles_n, unsigned rank, int& tm, int& tn) {
  int um;
  grouped_tile<kGroupM / ClusterM>(unit, ceil_div(tiles_m, ClusterM), tiles_n, um, tn);
  tm = um * ClusterM + static_cast<int>(rank % ClusterM);
}

}  // namespace gemmlab::cuda::hopper
