// The warp-specialised TMA + wgmma kernel shared by the wgmma_ws_* rungs (13_wgmma_ws.cu,
// 14_wgmma_ws_tf32.cu), templated on the element type of A and B.
//
// The seeds' lesson — move each tile once into fast memory, reuse it many times — at the
// scale the tensor cores need. A block owns a 128 x 256 tile of C (CGMA 2·128·256/(128+256)
// = 171 flops per element loaded) and is persistent: one block per SM walks the tiles in
// grouped order (kGroupM tile rows at a time, so the A rows and B columns in flight stay
// in L2). Inside it, one producer thread only issues TMA copies (cp.async.bulk.tensor) of
// 128-row A and 256-row B tiles, 128 bytes of K deep, into a ring of kStages shared-memory
// stages, each completing on a "full" mbarrier with its byte count; two consumer
// warpgroups each multiply their 64 rows by the whole B tile with wgmma m64n256 straight
// from shared memory (128-byte swizzled, conflict-free) and hand the stage back on an
// "empty" mbarrier as soon as the tensor cores are done with it. setmaxnreg moves
// registers from the producer (which needs few) to the consumers (128 f32 accumulators
// each). Blocks can run in clusters of two neighbours along M that multiply the same B tile:
// each loads half of it and multicasts it to both, so B crosses from L2 once per cluster.
// By default they do where the stream-K tail runs, for 3xTF32 and for a C that TMA cannot
// address; elsewhere single blocks, which the stages' coupling across a cluster makes
// faster (form_of).
// (GEMMLAB_WGMMA_CLUSTER=4: clusters of 2 x 2 whose tile rows share A the same way: 7-8 %
// more clock at the power cap at 8192^3, but only about 29 such clusters fit on an H100
// against 64 of two, so it runs more rounds and is slower; results/h100/tuning.md.)
// The epilogue applies alpha and beta and stages C through shared memory for TMA stores,
// while the producer already loads the next tile. Measured on an H100 (bf16 NN, 4096^3 /
// 8192^3, ratio to cuBLAS in the same run, results/h100/probes/wgmma-forms): epilogue from
// registers, no clusters 0.94 / 0.97; TMA epilogue 0.96 / 1.00; and clusters 0.99 / 1.02.
//
// The same kernel runs 3xTF32 (15_wgmma_3xtf32.cu): three K passes over split operands
// (KSchedule), the last one promoted to f32 sums (promoted_stages).
//
// Whole rounds leave SMs idle where the units do not divide evenly (128 of 132 blocks at
// 4096^3 and 8192^3). Where that idle share of the last round outweighs its cost
// (stream_k::tail_pays: at 8192^3, not at 4096^3), the units left over after the whole rounds
// are cut by K over all clusters instead, and partial sums meet in global memory
// (stream_k.hpp, "the stream-K tail"; GEMMLAB_WGMMA_TAIL=rounds | stream_k forces either).
//
// Any shape: TMA zero-fills what lies outside A and B (ragged M, N and K cost nothing
// extra), stores are predicated. An operand whose K is contiguous is read K-major; for
// 16-bit types, other operands are loaded as 64-wide MN chunks and read MN-major (the
// transposition bits of wgmma). tf32 wgmma reads shared memory K-major only, but takes A
// from registers in any layout: a tf32 A whose K is strided is loaded as it is stored and
// read into registers (load_a_fragments), and where B is the operand whose K is strided
// (row-major NN) the kernel computes C^T = B^T A^T instead (kernel_problem), storing C^T
// through shared memory as C (store_tile_tma_transposed). Measured on an H100 (tf32 NN,
// same run, results/h100/probes/session7): 0.99x cuBLAS at 4096^3 and 8192^3, against
// 0.89x / 0.93x with B copied K-major first. TMA needs 16-byte aligned bases and row
// pitches: other operands are copied first ("what run() does before the kernel"), or, for
// tf32 with GEMMLAB_WGMMA_OPERANDS=cp_async, loaded by the whole producer warpgroup with
// cp.async straight into the swizzled K-major layout ("operands the producer loads itself";
// measured at half the rate, so not the default).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cuda/ptx>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>

#include "cuda/arch/cluster.cuh"
#include "cuda/arch/cp_async.cuh"
#include "cuda/arch/grid_sync.cuh"
#include "cuda/arch/smem.cuh"
#include "cuda/arch/wgmma.cuh"
#include "cuda/hopper/bulk_rows.hpp"
#include "cuda/tiles/common.cuh"
#include "cuda/tiles/operand_staging.cuh"
#include "cuda/tiles/kernel_info.hpp"
#include "cuda/hopper/stream_k.hpp"
#include "cuda/hopper/sw128_tile.hpp"
#include "cuda/tiles/warp_tile.cuh"
#include "cuda/runtime/buffer.hpp"
#include "cuda/runtime/check.hpp"
#include "cuda/runtime/tensor_map.hpp"

namespace gemmlab::cuda::wgmma_ws {

namespace ptx = ::cuda::ptx;

// The element types: storage bytes, the k of one wgmma, the tensor-map element, whether
// wgmma can read the operand MN-major (16-bit types only), and the MMA itself.
struct Bf16Operand {
  static constexpr int kBytes = 2, kMmaK = 16;
  static constexpr TmaElement kTma = TmaElement::BF16;
  static constexpr bool kMnMajor = true;
  template <int MnMajorA, int MnMajorB>
  __device__ static void mma(float (&d)[128], std::uint64_t a, std::uint64_t b, int scale_d) {
    arch::wgmma_m64n256k16_bf16<MnMajorA, MnMajorB>(d, a, b, scale_d);
  }
};
struct F16Operand {
  static constexpr int kBytes = 2, kMmaK = 16;
  static constexpr TmaElement kTma = TmaElement::F16;
  static constexpr bool kMnMajor = true;
  template <int MnMajorA, int MnMajorB>
  __device__ static void mma(float (&d)[128], std::uint64_t a, std::uint64_t b, int scale_d) {
    arch::wgmma_m64n256k16_f16<MnMajorA, MnMajorB>(d, a, b, scale_d);
  }
};
struct Tf32Operand {  // float32 in memory; the tensor cores use its top 19 bits
  static constexpr int kBytes = 4, kMmaK = 8;
  static constexpr TmaElement kTma = TmaElement::F32;
  static constexpr bool kMnMajor = false;
  template <int MnMajorA, int MnMajorB>
  __device__ static void mma(float (&d)[128], std::uint64_t a, std::uint64_t b, int scale_d) {
    static_assert(MnMajorA == 0 && MnMajorB == 0, "tf32 wgmma reads K-major operands only");
    arch::wgmma_m64n256k8_tf32(d, a, b, scale_d);
  }
};

constexpr int kBM = 128, kBN = 256;  // block tile
constexpr int kRowBytes = 128;       // one swizzled row of a tile: 128 bytes of K (or of MN)
constexpr int kStages = 4;
constexpr int kConsumers = 2;        // warpgroups of 64 rows each
constexpr int kWarpgroup = 128;
constexpr int kWarpgroupWarps = kWarpgroup / 32;
constexpr int kThreads = kWarpgroup * (kConsumers + 1);
constexpr int kABytes = kBM * kRowBytes;  // 16 KiB
constexpr int kBBytes = kBN * kRowBytes;  // 32 KiB
constexpr int kStageBytes = kABytes + kBBytes;
constexpr int kAtomBytes = 1024;          // 8 rows x 128 bytes: the swizzle atom
// The epilogue through shared memory: each consumer warpgroup stages its 64 rows of C 32
// columns (128 bytes) at a time, in two swizzled buffers it alternates between.
constexpr int kEpilogueCols = kRowBytes / static_cast<int>(sizeof(float));
constexpr int kEpilogueRows = kBM / kConsumers;
constexpr int kEpilogueBufferBytes = kEpilogueRows * kRowBytes;  // 8 KiB
constexpr int kEpilogueBuffers = 2;
constexpr int kEpilogueBytes = kConsumers * kEpilogueBuffers * kEpilogueBufferBytes;
constexpr int kSmemBytes = kStages * kStageBytes + kEpilogueBytes + kAtomBytes;  // + slack to align the ring
static_assert(kSmemBytes <= 227 * 1024, "shared memory of one sm_90 block (opt-in)");
constexpr int kGroupM = 16;
// setmaxnreg moves registers within the block's allocation (168 per thread at 384 threads):
// what the producer gives up, the consumers can take.
constexpr int kLaunchRegisters = 168;
constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;
static_assert((kLaunchRegisters - kProducerRegisters) * kWarpgroup >=
                  (kConsumerRegisters - kLaunchRegisters) * kWarpgroup * kConsumers,
              "the consumers would wait for registers the producer does not free");
// A producer that loads operands itself keeps addresses and a cp.async lag (with 40, the
// stream-K form with both operands loaded kept 8 bytes on the stack), so its consumers get less.
constexpr int kLoadingProducerRegisters = 48, kLoadingConsumerRegisters = 224;
static_assert((kLaunchRegisters - kLoadingProducerRegisters) * kWarpgroup >=
                  (kLoadingConsumerRegisters - kLaunchRegisters) * kWarpgroup * kConsumers,
              "the consumers would wait for registers the producer does not free");

template <class E>
constexpr int kBK = kRowBytes / E::kBytes;  // K per stage: 64 bf16, 32 tf32
template <class E>
constexpr int kKSteps = kBK<E> / E::kMmaK;  // wgmma per stage and warpgroup: 4
// An MN-major operand (16-bit types) arrives as chunks of kBK rows of k by 64 MN elements.
constexpr int kChunk = 64;
constexpr int kChunkBytes = kChunk * kRowBytes;  // 8 KiB
constexpr int kKStepBytes = 32;                  // one wgmma's K in a K-major row (16 bf16, 8 tf32)
// A tf32 A stored k x m (M-major) is read into registers (wgmma takes tf32 A from registers,
// in any layout, and has no MN-major form from shared memory). It arrives as it is stored,
// in blocks of 32 rows of A (128 bytes) by the stage's 32 k, 128-byte swizzled (load_stage,
// permuted_row, load_a_fragments).
constexpr int kMnBlock = kRowBytes / 4;                  // rows of A per block: 32
constexpr int kMnBlockBytes = kBK<Tf32Operand> * kRowBytes;  // 4 KiB
static_assert(kBM / kMnBlock * kMnBlockBytes == kABytes, "the blocks fill the A tile");
constexpr int kFragmentRegs = 4 * kKSteps<Tf32Operand>;  // a stage's A fragments: 4 per wgmma step

struct Epilogue {
  float* c;
  long long ldc;
  int m, n;
  float alpha, beta;
  bool tma_store;     // C through shared memory and TMA (needs a TMA-addressable C)
  bool c_transposed;  // the kernel computes C^T: its (row, col) is C's (col, row)
  bool warp_store;    // C through shared memory and stores by the consumers' warps (any C)
  bool bulk_store;    // C through shared memory and bulk copies by the consumers' warps (any C, beta = 0)
  // (none: C from registers)
};

// The K loop: `segments` passes of `k_tiles` tiles each. One pass is the plain product.
// Three are 3xTF32 (operand_staging.cuh): A and B rows hold [big | small] with the small
// part `split` columns in, and the passes multiply big·small, small·big, big·big (the
// small terms first, while the sum is small).
struct KSchedule {
  int k_tiles, segments, split;
  __device__ int a_column(int segment, int tile) const { return (segment == 1 ? split : 0) + tile; }
  __device__ int b_column(int segment, int tile) const { return (segment == 0 && segments > 1 ? split : 0) + tile; }
};

// Shared-memory descriptor of the A rows this warpgroup multiplies, wgmma step `kk`.
template <bool TransA>
__device__ __forceinline__ std::uint64_t a_descriptor(const unsigned char* a_stage, int warpgroup, int kk) {
  if constexpr (!TransA)  // K-major: rows of 128 bytes, 8-row groups one atom apart
    return arch::smem_descriptor_sw128(a_stage + warpgroup * 64 * kRowBytes + kk * kKStepBytes, 16, kAtomBytes);
  else  // M-major: chunk `warpgroup` holds these 64 rows; 8 k-rows per atom, 2 per wgmma
    return arch::smem_descriptor_sw128(a_stage + warpgroup * kChunkBytes + kk * 2 * kAtomBytes, kChunkBytes,
                                       kAtomBytes);
}

template <bool TransB>
__device__ __forceinline__ std::uint64_t b_descriptor(const unsigned char* b_stage, int kk) {
  if constexpr (TransB)  // B stored n x k: K-major, 256 rows
    return arch::smem_descriptor_sw128(b_stage + kk * kKStepBytes, 16, kAtomBytes);
  else  // B stored k x n: N-major, four 64-wide chunks
    return arch::smem_descriptor_sw128(b_stage + kk * 2 * kAtomBytes, kChunkBytes, kAtomBytes);
}

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
// With ClusterN = 2 (clusters of 2 x 2, rank = rm + 2 rn), the two blocks of a tile row
// (same rm) also share A: each loads half its rows and multicasts them to both.
template <class E, bool TransA, bool TransB, int ClusterM = 1, int ClusterN = 1>
__device__ __forceinline__ void load_stage(const CUtensorMap* map_a, const CUtensorMap* map_b, unsigned char* stage,
                                           std::uint64_t* full, int m0, int n0, int ka, int kb, unsigned rank = 0) {
  ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, full, kStageBytes);
  unsigned char* a = stage;
  unsigned char* b = stage + kABytes;
  const unsigned rm = rank % ClusterM, rn = rank / ClusterM;
  if constexpr (!TransA && ClusterN > 1) {
    constexpr int kRows = kBM / ClusterN;  // the tensor map's box (tma_a)
    const std::int32_t at[2] = {ka, m0 + static_cast<int>(rn) * kRows};
    std::uint16_t mask = 0;
#pragma unroll
    for (int j = 0; j < ClusterN; ++j) mask |= static_cast<std::uint16_t>(1u << (rm + ClusterM * j));
    copy_box<ClusterM * ClusterN>(map_a, a + rn * kRows * kRowBytes, at, full, mask);
  } else if constexpr (!TransA) {
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
  // B: shared by the blocks of a tile column (same rn).
  const auto b_mask = static_cast<std::uint16_t>(((1u << ClusterM) - 1) << (ClusterM * rn));
  if constexpr (TransB) {
    constexpr int kRows = kBN / ClusterM;  // the tensor map's box (tma_b)
    const std::int32_t at[2] = {kb, n0 + static_cast<int>(rm) * kRows};  // B stored n x k
    copy_box<ClusterM * ClusterN>(map_b, b + rm * kRows * kRowBytes, at, full, b_mask);
  } else {
    constexpr int kChunks = kBN / kChunk / ClusterM;
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
      const int q = static_cast<int>(rm) * kChunks + i;
      const std::int32_t at[2] = {n0 + q * kChunk, kb};  // B stored k x n
      copy_box<ClusterM * ClusterN>(map_b, b + q * kChunkBytes, at, full, b_mask);
    }
  }
}

// C(row, col..col+1) <- alpha * acc + beta * C, predicated; a float2 store where aligned.
__device__ __forceinline__ void store_pair(const Epilogue& e, int row, int col, float v0, float v1) {
  if (row >= e.m || col >= e.n) return;
  float* p = e.c + static_cast<long long>(row) * e.ldc + col;
  const bool both = col + 1 < e.n;
  if (both && (reinterpret_cast<std::uintptr_t>(p) % 8 == 0)) {
    float2 r = make_float2(e.alpha * v0, e.alpha * v1);
    if (e.beta != 0.0f) {
      const float2 old = *reinterpret_cast<const float2*>(p);
      r.x = fmaf(e.beta, old.x, r.x);
      r.y = fmaf(e.beta, old.y, r.y);
    }
    *reinterpret_cast<float2*>(p) = r;
    return;
  }
  p[0] = e.beta != 0.0f ? fmaf(e.beta, p[0], e.alpha * v0) : e.alpha * v0;
  if (both) p[1] = e.beta != 0.0f ? fmaf(e.beta, p[1], e.alpha * v1) : e.alpha * v1;
}

// The same for a kernel that computes C^T (e.c_transposed): C(col, row) and C(col + 1, row),
// a row of C apart. A warp's store covers 8 consecutive columns of 4 rows: 4 whole sectors.
__device__ __forceinline__ void store_pair_transposed(const Epilogue& e, int row, int col, float v0, float v1) {
  if (row >= e.m || col >= e.n) return;
  float* p = e.c + static_cast<long long>(col) * e.ldc + row;
  p[0] = e.beta != 0.0f ? fmaf(e.beta, p[0], e.alpha * v0) : e.alpha * v0;
  if (col + 1 < e.n) p[e.ldc] = e.beta != 0.0f ? fmaf(e.beta, p[e.ldc], e.alpha * v1) : e.alpha * v1;
}

// Which rows of its warpgroup's 64 the registers of this thread hold, for A fragments and
// accumulators alike: row(h) for a_0 / a_2 (h = 0) and a_1 / a_3 (h = 1), and for
// accumulator registers 4j + 2h + {0, 1}. wgmma's own order is 16 warp + lane/4 + 8h. With A
// read from a 128-byte swizzled block (load_a_fragments) that order would put lanes 4 k
// apart on the same banks (the swizzle XORs a row's 16-byte chunk with k % 8, and
// neighbouring chunks pair up under XOR 1). So the rows are permuted: warp w takes the
// chunks {2(w%2) + h, 2(w%2) + h + 4} of block w/2, lane/16 picks one of the two and
// (lane/4)%4 the word in it; XOR with k%8 in 0..3 (or 4..7) then maps the four k of a warp's
// load to four disjoint chunk pairs: 32 banks, one wavefront. The MMA does not care which
// row is which; the epilogue stores each accumulator row where this says it belongs.
__device__ __forceinline__ int permuted_row(int warp, int lane, int h) {
  return (warp / 2) * kMnBlock + 4 * (2 * (warp % 2) + h + 4 * ((lane % 32) / 16)) + (lane / 4) % 4;
}

// This thread's A fragments of one stage (tf32 A stored k x m, read into registers):
// register 4 kk + i is a_i of wgmma step kk (arch::wgmma_m64n256k8_tf32_rs): rows
// permuted_row(warp, lane, i % 2) of the warpgroup's 64, k 8 kk + lane%4 + 4 (i / 2).
__device__ __forceinline__ void load_a_fragments(const unsigned char* a_stage, int warpgroup,
                                                 std::uint32_t (&f)[kFragmentRegs]) {
  const int lane = threadIdx.x % 32, warp = (threadIdx.x % kWarpgroup) / 32;
  const unsigned block = arch::smem_address(a_stage) + static_cast<unsigned>((warpgroup * 2 + warp / 2) * kMnBlockBytes);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = permuted_row(warp, lane, h) % kMnBlock;  // within the block
#pragma unroll
    for (int kk = 0; kk < kKSteps<Tf32Operand>; ++kk)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int k = 8 * kk + lane % 4 + 4 * half;
        const unsigned offset = static_cast<unsigned>(k * kRowBytes + (((row / 4) ^ (k % 8)) * 16) + (row % 4) * 4);
        asm volatile("ld.shared.b32 %0, [%1];" : "=r"(f[4 * kk + 2 * half + h]) : "r"(block + offset) : "memory");
      }
  }
}

// The row of its warpgroup's 64 that this thread's accumulator registers 4j + 2h + {0, 1}
// hold: wgmma's order, or permuted_row's where A came from registers.
template <bool PermutedRows>
__device__ __forceinline__ int accumulator_row(int warp, int lane, int h) {
  if constexpr (PermutedRows) return permuted_row(warp, lane, h);
  return warp * 16 + lane / 4 + 8 * h;
}

// The staging buffer of chunk q, once the TMA store that last read it (kEpilogueBuffers
// chunks ago) is done reading it: the issuing thread waits, the warpgroup meets it. At a
// tile's first chunk every store must be done reading: the tile before may have ended on
// either buffer (a chunk straddling C's last column goes from registers, not by TMA). That
// wait is free: its stores were issued a whole K loop ago.
__device__ __forceinline__ unsigned char* free_epilogue_buffer(unsigned char* buffers, int q, bool issuer, int barrier) {
  if (issuer) {
    if (q == 0) ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
    else ptx::cp_async_bulk_wait_group_read(ptx::n32_t<kEpilogueBuffers - 1>{});
  }
  arch::named_barrier_sync(barrier, kWarpgroup);
  return buffers + (q % kEpilogueBuffers) * kEpilogueBufferBytes;
}

// Chunk q (32 columns from `col`) of a consumer warpgroup's 64 x 256 tile (registers as
// wgmma leaves them) into a 64 x 32 staging buffer in the 128-byte swizzle: alpha * acc, plus
// beta * C where `add_c` (read here with float2 loads: a TMA-addressable C). float2 writes
// are served a half-warp at a time, and a half-warp's lanes hold rows 0-3 of an 8-row atom,
// whose swizzle flips only the two low bits of the chunk index: 16 of the 32 banks, four
// wavefronts per warp instead of two (Nsight Compute, session 11: 4.4 per request, about
// 1.5 % of a bf16 4096^3 run; results/h100/tuning.md). (With permuted rows, lanes 16 apart
// write rows 16 apart: two-way conflicts on top.)
// With SharedStores the writes are st.shared at 32-bit addresses; without, generic stores
// with 64-bit ones (the compiler cannot tell that `buffer` is shared memory). The
// warp-stored epilogue takes st.shared (with its reads, bf16 4095^3 about 2 us faster,
// session 14, results/h100/tuning.md); the TMA epilogue keeps the generic stores: with
// shared ones bf16 4096^3 did not move, and a tf32 stream-K kernel spilled 48 bytes.
template <bool PermutedRows, bool SharedStores = false>
__device__ __forceinline__ void stage_chunk(const float (&r)[128], const Epilogue& e, unsigned char* buffer, int q,
                                            int row0, int col, bool add_c) {
  const int lane = threadIdx.x % 32, warp = (threadIdx.x % kWarpgroup) / 32;
#pragma unroll
  for (int jj = 0; jj < kEpilogueCols / 8; ++jj) {
    const int j = q * (kEpilogueCols / 8) + jj;  // accumulator group: 8 columns
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = accumulator_row<PermutedRows>(warp, lane, h);
      float2 v = make_float2(e.alpha * r[4 * j + 2 * h], e.alpha * r[4 * j + 2 * h + 1]);
      if (add_c) {
        const int grow = row0 + row, gcol = col + 8 * jj + 2 * (lane % 4);
        if (grow < e.m) {  // gcol + 1 < n: this chunk lies inside C
          const float2 old = *reinterpret_cast<const float2*>(e.c + static_cast<long long>(grow) * e.ldc + gcol);
          v.x = fmaf(e.beta, old.x, v.x);
          v.y = fmaf(e.beta, old.y, v.y);
        }
      }
      // Byte 4 * (8jj + 2(lane%4)) of the row: 16-byte chunk 2jj + (lane%4)/2, swizzled
      // by the row's place in its 8-row atom.
      const int chunk = (2 * jj + (lane % 4) / 2) ^ (row % 8);
      if constexpr (SharedStores)
        arch::st_shared_v2_f32(arch::smem_address(buffer) + row * kRowBytes + chunk * 16 + (lane % 2) * 8, v.x, v.y);
      else
        *reinterpret_cast<float2*>(buffer + row * kRowBytes + chunk * 16 + (lane % 2) * 8) = v;
    }
  }
}

// Chunk q (Cols columns from `col`) from registers, predicated element by element: for a
// chunk that straddles C's last column, where a TMA store or bulk copy would write past it.
template <bool PermutedRows, int Cols>
__device__ __forceinline__ void store_chunk_from_registers(const float (&r)[128], const Epilogue& e, int q, int row0,
                                                           int col) {
  const int lane = threadIdx.x % 32, warp = (threadIdx.x % kWarpgroup) / 32;
#pragma unroll
  for (int jj = 0; jj < Cols / 8; ++jj) {
    const int j = q * (Cols / 8) + jj;
    const int c = col + 8 * jj + 2 * (lane % 4);
    store_pair(e, row0 + accumulator_row<PermutedRows>(warp, lane, 0), c, r[4 * j], r[4 * j + 1]);
    store_pair(e, row0 + accumulator_row<PermutedRows>(warp, lane, 1), c, r[4 * j + 2], r[4 * j + 3]);
  }
}

// The chunk of a tile that straddles C's last column (q, known only at run time), from
// registers: one case per chunk, since registers can only be named by constants.
template <bool PermutedRows>
__device__ __forceinline__ void store_straddling_chunk(const float (&r)[128], const Epilogue& e, int q, int row0,
                                                       int col) {
  static_assert(kBN / kEpilogueCols == 8, "one case per chunk");
  switch (q) {
    case 0: store_chunk_from_registers<PermutedRows, kEpilogueCols>(r, e, 0, row0, col); break;
    case 1: store_chunk_from_registers<PermutedRows, kEpilogueCols>(r, e, 1, row0, col); break;
    case 2: store_chunk_from_registers<PermutedRows, kEpilogueCols>(r, e, 2, row0, col); break;
    case 3: store_chunk_from_registers<PermutedRows, kEpilogueCols>(r, e, 3, row0, col); break;
    case 4: store_chunk_from_registers<PermutedRows, kEpilogueCols>(r, e, 4, row0, col); break;
    case 5: store_chunk_from_registers<PermutedRows, kEpilogueCols>(r, e, 5, row0, col); break;
    case 6: store_chunk_from_registers<PermutedRows, kEpilogueCols>(r, e, 6, row0, col); break;
    default: store_chunk_from_registers<PermutedRows, kEpilogueCols>(r, e, 7, row0, col); break;
  }
}

// The TMA-store epilogue of one consumer warpgroup: its 64 x 256 tile of C goes out 32
// columns at a time. The warpgroup stages a chunk (stage_chunk), and one thread stores it
// with TMA, which clips what lies below C, while the warpgroup fills the other buffer. The
// stores are full 128-byte lines, and the thread moves on once shared memory is read, not
// when C is written.
// A chunk that straddles C's last column goes out from registers (a TMA store wrote past
// column n where n is not a multiple of 4: the GPU tests caught it on an H100; rows are
// clipped exactly).
// The code runs once per tile, so it is fetched cold each time: the chunks that run are
// kept together. Beta is chosen once per tile (AddC), not per chunk, and with
// StraddleAfter the straddling chunk goes out after the loop. Inline, that rare code sat
// between the chunks and the warps stalled on instruction fetch for 43 % of the bf16
// epilogue's samples; with both, bf16 4096^3 ran 0.977x cuBLAS against 0.962x (Nsight
// Compute and three interleaved rounds, session 13, results/h100/tuning.md). StraddleAfter
// keeps every accumulator live to the end of the loop, which spilled in the 3xTF32 kernels:
// the 16-bit types only.
template <bool PermutedRows, bool AddC, bool StraddleAfter>
__device__ __forceinline__ void store_chunks_tma(const float (&r)[128], const Epilogue& e, const CUtensorMap* map_c,
                                                 unsigned char* buffers, int row0, int col0, int warpgroup) {
  const bool issuer = threadIdx.x % kWarpgroup == 0;
  const int barrier = 1 + warpgroup;  // named barrier 0 is __syncthreads
#pragma unroll
  for (int q = 0; q < kBN / kEpilogueCols; ++q) {
    const int col = col0 + q * kEpilogueCols;
    if (col + kEpilogueCols > e.n) {
      // (No `break`: with one, ptxas put the accumulators on the stack.)
      if (!StraddleAfter && col < e.n) store_chunk_from_registers<PermutedRows, kEpilogueCols>(r, e, q, row0, col);
      continue;
    }
    unsigned char* buffer = free_epilogue_buffer(buffers, q, issuer, barrier);
    stage_chunk<PermutedRows>(r, e, buffer, q, row0, col, AddC);
    ptx::fence_proxy_async(ptx::space_shared);  // the writes, visible to the TMA engine
    arch::named_barrier_sync(barrier, kWarpgroup);
    if (issuer) {
      const std::int32_t at[2] = {col, row0};
      ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, map_c, at, buffer);
      ptx::cp_async_bulk_commit_group();
    }
  }
  if constexpr (StraddleAfter) {
    const int cols_left = e.n - col0;  // > 0: the tile starts inside C
    if (cols_left < kBN && cols_left % kEpilogueCols != 0) {
      const int q = cols_left / kEpilogueCols;
      store_straddling_chunk<PermutedRows>(r, e, q, row0, col0 + q * kEpilogueCols);
    }
  }
}

template <bool PermutedRows, bool StraddleAfter>
__device__ __forceinline__ void store_tile_tma(const float (&r)[128], const Epilogue& e, const CUtensorMap* map_c,
                                               unsigned char* buffers, int row0, int col0, int warpgroup) {
  if (row0 >= e.m) return;  // the whole warpgroup's rows lie below C
  if (e.beta != 0.0f) store_chunks_tma<PermutedRows, true, StraddleAfter>(r, e, map_c, buffers, row0, col0, warpgroup);
  else store_chunks_tma<PermutedRows, false, StraddleAfter>(r, e, map_c, buffers, row0, col0, warpgroup);
}

// The warp-stored epilogue, for a C that TMA cannot address (row pitch or base not a
// multiple of 16 bytes, as at 4095^3; TMA boxes must also start on 16 bytes, so no view of
// such rows works: session 8's probe). From registers, such a C cost the bf16 kernel 19 % at
// 4096^3 with pitch 4097 (Nsight Compute, session 8): half the rows are not 8-byte aligned,
// so their pairs go out as scalar stores divergent within each warp. Here the warpgroup
// stages each chunk as for TMA, meets, and each warp stores a quarter of its rows, one
// 128-byte store per row at any alignment (lane l: column col + l; conflict-free reads of
// the swizzled buffer), adding beta * C. The buffers alternate, so one meeting per chunk
// suffices within a tile: a warp that reached it has read the chunk before. As in
// store_chunks_tma, beta is chosen once per tile (AddC): the code runs once per tile and is
// fetched cold, so the path that does not run should not lie between the chunks.
template <bool PermutedRows, bool AddC>
__device__ __forceinline__ void store_chunks_warps(const float (&r)[128], const Epilogue& e, unsigned char* buffers,
                                                   int row0, int col0, int warpgroup) {
  const int lane = threadIdx.x % 32, warp = (threadIdx.x % kWarpgroup) / 32;
  const int barrier = 1 + warpgroup;
  const int rows = min(kEpilogueRows, e.m - row0);  // > 0: store_tile_warps
  const long long step = static_cast<long long>(kWarpgroupWarps) * e.ldc;  // a warp's rows
#pragma unroll
  for (int q = 0; q < kBN / kEpilogueCols; ++q) {
    const int col = col0 + q * kEpilogueCols;
    if (col >= e.n) continue;  // (no `break`: store_tile_tma)
    unsigned char* buffer = buffers + (q % kEpilogueBuffers) * kEpilogueBufferBytes;
    stage_chunk<PermutedRows, true>(r, e, buffer, q, row0, col, false);
    arch::named_barrier_sync(barrier, kWarpgroup);
    if (col + lane < e.n) {
      const unsigned words = arch::smem_address(buffer) + (lane % 4) * 4;
      float* c = e.c + static_cast<long long>(row0 + warp) * e.ldc + col + lane;
#pragma unroll 4
      for (int row = warp; row < rows; row += kWarpgroupWarps, c += step) {
        float v = arch::ld_shared_f32(words + row * kRowBytes + (((lane / 4) ^ (row % 8)) * 16));
        if constexpr (AddC) v = fmaf(e.beta, *c, v);
        *c = v;
      }
    }
  }
  // The next tile may start in either buffer: every warp is done reading.
  arch::named_barrier_sync(barrier, kWarpgroup);
}

template <bool PermutedRows>
__device__ __forceinline__ void store_tile_warps(const float (&r)[128], const Epilogue& e, unsigned char* buffers,
                                                 int row0, int col0, int warpgroup) {
  if (row0 >= e.m) return;
  if (e.beta != 0.0f) store_chunks_warps<PermutedRows, true>(r, e, buffers, row0, col0, warpgroup);
  else store_chunks_warps<PermutedRows, false>(r, e, buffers, row0, col0, warpgroup);
}

// The bulk-copied epilogue (GEMMLAB_WGMMA_EPILOGUE=bulk), for a C that TMA cannot address,
// with beta = 0 (form_of: the copies cannot add beta * C). store_tile_warps' global stores
// hold the consumers up while the next tile's operands wait (bf16 4095^3: about 15 us over
// the TMA epilogue, session 8); here, as with TMA, the copy engine writes C while the warps
// move on. Each warp stages only its own 16 accumulator rows (wgmma's order), 8 rows by 64
// columns at a time, in its own slice of the warpgroup's buffers, so it meets no other warp:
// __syncwarp only. The slice holds each row's 16-byte aligned interior contiguous
// (bulk_rows.hpp): lane 0 copies it with one cp.async.bulk per row, and each lane stores one
// of the rows' edge floats itself. A 64-column chunk that straddles C's last column goes out
// from registers (store_tile_tma).
__device__ __forceinline__ void store_tile_bulk(const float (&r)[128], const Epilogue& e, unsigned char* buffers,
                                                int row0, int col0) {
  namespace rows = bulk_rows;
  constexpr int kHalves = 2;  // of a warp's 16 accumulator rows: lane/4 + 8h
  constexpr int kGroups = rows::kCols / 8;  // accumulator groups of 8 columns per chunk
  static_assert(kEpilogueRows == 4 * kHalves * rows::kRows && kBN % rows::kCols == 0 &&
                    kEpilogueBufferBytes == 4 * rows::kSliceFloats * static_cast<int>(sizeof(float)) &&
                    kEpilogueBuffers == kHalves,
                "a warp's slice of each buffer holds one half of its rows by one chunk; the halves alternate");
  const int lane = threadIdx.x % 32, warp = (threadIdx.x % kWarpgroup) / 32;
  // Warp-uniform to the compiler (a warp reduction lands in a uniform register): what lane 0
  // derives from these for the copies stays in uniform registers, where cp.async.bulk takes
  // its operands, with no loop over the active lanes around each copy.
  const int warp_row0 = __reduce_min_sync(0xffffffffu, row0 + warp * kHalves * rows::kRows);  // of C
  col0 = __reduce_min_sync(0xffffffffu, col0);
  const unsigned slice0 = __reduce_min_sync(
      0xffffffffu, arch::smem_address(buffers) + static_cast<unsigned>(warp * rows::kSliceFloats * sizeof(float)));
  if (warp_row0 >= e.m) return;  // all the warp's rows lie below C
  const bool issuer = lane == 0;  // bulk groups belong to the thread that commits them
  const unsigned long long pitch = static_cast<unsigned long long>(e.ldc) * sizeof(float);
  // The byte address of row i's (of the warp's 16) first column in chunk 0 (chunk q:
  // 256 q bytes on), and how many floats past 16 bytes it lies, the same in every chunk.
  const std::uintptr_t start0 = reinterpret_cast<std::uintptr_t>(e.c + col0) + warp_row0 * pitch;
  const auto misalignment = [&](int i) { return static_cast<int>((start0 + i * pitch) / sizeof(float) % rows::kAlign); };
  // Per half h, this thread's row lane/4 of the slice: the staging addresses of its columns
  // 8jj + 2(lane%4) + i (in buffer 0), at row_at[h] + 4 (8jj + i) where interior for every s,
  // else chosen here once per tile; and where its edge float lane%4 goes (chunk 0).
  const int r_slice = lane / 4;
  unsigned row_at[kHalves], edge_group_at[kHalves][2][2];  // [h][first or last group][i]
  float* edge_dst[kHalves];
  bool inside[kHalves];  // the row lies inside C
#pragma unroll
  for (int h = 0; h < kHalves; ++h) {
    const int i_row = accumulator_row<false>(warp, lane, h) - warp * kHalves * rows::kRows;  // of 16
    const int s = misalignment(i_row);
    row_at[h] = slice0 + 4 * (rows::interior_start(r_slice) - rows::head(s) + 2 * (lane % 4));
#pragma unroll
    for (int last = 0; last < 2; ++last)
#pragma unroll
      for (int i = 0; i < 2; ++i)
        edge_group_at[h][last][i] =
            slice0 + 4 * rows::slot(r_slice, s, (last ? rows::kCols - 8 : 0) + 2 * (lane % 4) + i);
    edge_dst[h] = e.c + col0 + (warp_row0 + i_row) * static_cast<long long>(e.ldc) - s +
                  rows::edge_offset(s, lane % rows::kAlign) / static_cast<int>(sizeof(float));
    inside[h] = warp_row0 + i_row < e.m;
  }
#pragma unroll
  for (int q = 0; q < kBN / rows::kCols; ++q) {
    const int col = col0 + q * rows::kCols;
    if (!rows::staged(col, e.n)) {  // (no `break`: store_tile_tma)
      if (col < e.n) store_chunk_from_registers<false, rows::kCols>(r, e, q, row0, col);
      continue;
    }
#pragma unroll
    for (int h = 0; h < kHalves; ++h) {
      const unsigned buffer = h * kEpilogueBufferBytes;  // from buffer 0
      // The copies that last read this buffer are done reading it: within a tile, all but the
      // other half's; at its first chunk, all (the last tile may have ended on either half;
      // its copies were issued a whole K loop ago).
      if (issuer) {
        if (q == 0 && h == 0) ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
        else ptx::cp_async_bulk_wait_group_read(ptx::n32_t<kEpilogueBuffers - 1>{});
      }
      __syncwarp();
#pragma unroll
      for (int jj = 0; jj < kGroups; ++jj) {
        const int j = q * kGroups + jj;
        const bool interior = 8 * jj >= rows::kAlwaysInteriorBegin && 8 * jj + 8 <= rows::kAlwaysInteriorEnd;
#pragma unroll
        for (int i = 0; i < 2; ++i)
          arch::st_shared_f32(buffer + (interior ? row_at[h] + 4 * (8 * jj + i) : edge_group_at[h][jj != 0][i]),
                              e.alpha * r[4 * j + 2 * h + i]);
      }
      ptx::fence_proxy_async(ptx::space_shared);  // the writes, visible to the copy engine
      __syncwarp();
      if (issuer) {
        const int first = h * rows::kRows;  // of the warp's 16
        // Row first + i's interior starts at the first 16-byte boundary past its segment.
        std::uintptr_t past = start0 + first * pitch + q * rows::kCols * sizeof(float) + 16;
        const auto copy_rows = [&](int rows_inside) {
#pragma unroll
          for (int i = 0; i < rows::kRows; ++i, past += pitch)
            if (i < rows_inside)
              ptx::cp_async_bulk(ptx::space_global, ptx::space_shared,
                                 reinterpret_cast<void*>(rows::aligned_below(past)),
                                 __cvta_shared_to_generic(slice0 + buffer + 4 * rows::interior_start(i)),
                                 rows::kInteriorBytes);
        };
        // All rows inside C (all but the last tile row): no test per copy.
        if (warp_row0 + first + rows::kRows <= e.m) copy_rows(rows::kRows);
        else copy_rows(e.m - warp_row0 - first);
        ptx::cp_async_bulk_commit_group();
      }
      const float edge = arch::ld_shared_f32(slice0 + buffer + 4 * (rows::kEdgeBase + lane));
      if (inside[h]) edge_dst[h][q * rows::kCols] = edge;
    }
  }
}

// The same for a kernel that computes C^T (e.c_transposed, A from registers: rows permuted):
// its 64 rows are 64 columns of C, its 256 columns 256 rows of C. Each 32-column chunk is a
// 32 x 64 block of C, staged as two 32 x 32 boxes (128-byte rows, swizzled; map_c is C's own
// map, tma_c_transposed) in the same 8 KiB buffer. A warp writes 4 rows of C by 8 columns
// per store: with the swizzle, rows 4 apart share banks, so two wavefronts (the row-major
// epilogue's float2 stores take two as well). Where the warpgroup's 64 columns run past C's
// last column and that is not a multiple of 4 (the clipping of a TMA store is exact only
// then: store_tile_tma), the tile goes out from registers.
__device__ __forceinline__ void store_tile_tma_transposed(const float (&r)[128], const Epilogue& e,
                                                          const CUtensorMap* map_c, unsigned char* buffers, int row0,
                                                          int col0, int warpgroup) {
  if (row0 >= e.m) return;  // the whole warpgroup's columns of C lie right of C
  const int lane = threadIdx.x % 32, warp = (threadIdx.x % kWarpgroup) / 32;
  const int rows[2] = {permuted_row(warp, lane, 0), permuted_row(warp, lane, 1)};  // C's columns row0 + rows[h]
  if (row0 + kEpilogueRows > e.m && e.m % 4 != 0) {
#pragma unroll
    for (int j = 0; j < kBN / 8; ++j) {
      const int c = col0 + 8 * j + 2 * (lane % 4);
      store_pair_transposed(e, row0 + rows[0], c, r[4 * j], r[4 * j + 1]);
      store_pair_transposed(e, row0 + rows[1], c, r[4 * j + 2], r[4 * j + 3]);
    }
    return;
  }
  const bool issuer = threadIdx.x % kWarpgroup == 0;
  const int barrier = 1 + warpgroup;
  constexpr int kBoxBytes = kEpilogueCols * kRowBytes;  // 32 rows of C by 32 columns: 4 KiB
  static_assert(kEpilogueRows / kEpilogueCols * kBoxBytes == kEpilogueBufferBytes, "two boxes fill a buffer");
#pragma unroll
  for (int q = 0; q < kBN / kEpilogueCols; ++q) {
    const int col = col0 + q * kEpilogueCols;  // C's first row of this chunk
    if (col + kEpilogueCols > e.n) {  // rows below C, clipped one by one (no `break`: store_tile_tma)
      if (col < e.n) {
#pragma unroll
        for (int jj = 0; jj < kEpilogueCols / 8; ++jj) {
          const int j = q * (kEpilogueCols / 8) + jj;
          const int c = col + 8 * jj + 2 * (lane % 4);
          store_pair_transposed(e, row0 + rows[0], c, r[4 * j], r[4 * j + 1]);
          store_pair_transposed(e, row0 + rows[1], c, r[4 * j + 2], r[4 * j + 3]);
        }
      }
      continue;
    }
    unsigned char* buffer = free_epilogue_buffer(buffers, q, issuer, barrier);
#pragma unroll
    for (int jj = 0; jj < kEpilogueCols / 8; ++jj) {
      const int j = q * (kEpilogueCols / 8) + jj;
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          const int c_row = 8 * jj + 2 * (lane % 4) + i;  // of the chunk's 32 rows of C
          const int c_col = rows[h];                      // of the warpgroup's 64 columns of C
          float v = e.alpha * r[4 * j + 2 * h + i];
          if (e.beta != 0.0f && row0 + c_col < e.m)
            v = fmaf(e.beta, e.c[static_cast<long long>(col + c_row) * e.ldc + row0 + c_col], v);
          const int chunk = ((c_col % kEpilogueCols) / 4) ^ (c_row % 8);
          *reinterpret_cast<float*>(buffer + (c_col / kEpilogueCols) * kBoxBytes + c_row * kRowBytes + chunk * 16 +
                                    (c_col % 4) * 4) = v;
        }
    }
    ptx::fence_proxy_async(ptx::space_shared);
    arch::named_barrier_sync(barrier, kWarpgroup);
    if (issuer) {
#pragma unroll
      for (int box = 0; box < kEpilogueRows / kEpilogueCols; ++box) {
        const std::int32_t at[2] = {row0 + box * kEpilogueCols, col};
        ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, map_c, at, buffer + box * kBoxBytes);
      }
      ptx::cp_async_bulk_commit_group();
    }
  }
}

// The consumers of a 3xTF32 run, Promote: the tensor cores' adders truncate, which over a
// long K costs f32 sums about four bits (measured at 8192^3: 1.9e-5 relative error against
// cuBLAS SGEMM's 1.6e-6). So in the big·big pass every two stages' products are summed by
// the tensor cores into a short partial sum, 64 of K deep, that the threads then add into
// separate registers, `sums`, with round-to-nearest (measured: 2.8e-7). Registers allow a
// partial of half the tile's columns, so the stages run as two m64n128 halves, each waited
// for; the other consumer warpgroup's MMAs fill the tensor cores meanwhile, not fully.
// `sums` takes over from the wgmma accumulators after the small passes: adds into registers
// a wgmma accumulates into make ptxas serialise every wgmma of the kernel (C7515). Measured
// at 8192^3 on an H100 (TFLOP/s): 133.6 unpromoted; 97.7 promoting every pass stage by
// stage; 102.7 every pass two stages at a time; 114.5 the last pass only, adding into the
// accumulators (serialised); 113.5 the same with the small passes' groups waited for (not
// serialised); 119.7 the last pass only into `sums` (this kernel).
// Stages per promoted partial sum. Three (fewer waits) measured 12 % slower than two on an
// H200 (results/h200/3xtf32-promote-stages): the producer is left one free stage of four.
constexpr int kPromoteStages = 2;
// The kernel's Promote parameter: 0 (no promotion), or the parts of the tile's columns a
// promoted partial sum covers at a time (promoted_stages).
constexpr int kPromoteHalves = 2, kPromoteQuarters = 4;
static_assert(kPromoteStages < kStages, "the producer needs a free stage");

// Parts = 2: the partial is one m64n128 half of the tile's columns at a time, each waited
// for before its adds, so the tensor cores idle for the wait and the adds (the other
// consumer warpgroup fills them, not fully). Parts = 4 (GEMMLAB_3XTF32_PROMOTE=quarters):
// m64n64 quarters in two 32-register partials, ping-pong: quarter q + 1 is in flight while
// quarter q's partial is added. The same 64 registers, but the A tile is read from shared
// memory once per part: quarters measured 6 % slower at 8192^3 on an H100
// (results/h100/probes/session6/3xtf32-promote-2656ec1).
template <class E, bool TransA, bool TransB, int Parts>
__device__ __forceinline__ void promoted_stages(float (&sums)[128], const unsigned char* const (&stages)[kPromoteStages],
                                                int count, int warpgroup) {
  static_assert(!TransA && TransB && E::kMmaK == 8, "promoted sums: tf32, both operands K-major");
  static_assert(Parts == 2 || Parts == 4, "halves or quarters of the tile's columns");
  constexpr int kPartBBytes = kBN / Parts * kRowBytes;  // K-major rows of B per part
  constexpr int kPartRegs = 128 / Parts;                // m64nN register i is m64n256 register part * kPartRegs + i
  const auto issue = [&](float(&part)[kPartRegs], int q) {
#pragma unroll
    for (int i = 0; i < kPartRegs; ++i) arch::fence_accumulator(part[i]);
    arch::wgmma_fence();
#pragma unroll
    for (int g = 0; g < kPromoteStages; ++g) {
      if (g < count) {
#pragma unroll
        for (int kk = 0; kk < kKSteps<E>; ++kk) {
          const std::uint64_t a = a_descriptor<false>(stages[g], warpgroup, kk);
          const std::uint64_t b = b_descriptor<true>(stages[g] + kABytes + q * kPartBBytes, kk);
          if constexpr (Parts == 2) arch::wgmma_m64n128k8_tf32(part, a, b, g > 0 || kk > 0);
          else arch::wgmma_m64n64k8_tf32(part, a, b, g > 0 || kk > 0);
        }
      }
    }
    arch::wgmma_commit();
  };
  const auto add = [&](float(&part)[kPartRegs], int q) {
#pragma unroll
    for (int i = 0; i < kPartRegs; ++i) {
      arch::fence_accumulator(part[i]);
      sums[q * kPartRegs + i] += part[i];
    }
  };
  if constexpr (Parts == 2) {
    float part[kPartRegs];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      issue(part, h);
      arch::wgmma_wait<0>();
      add(part, h);
    }
  } else {
    float part[2][kPartRegs];
    issue(part[0], 0);
#pragma unroll
    for (int q = 1; q < Parts; ++q) {
      issue(part[q % 2], q);
      arch::wgmma_wait<1>();  // quarter q - 1 is done; q is in flight
      add(part[(q - 1) % 2], q - 1);
    }
    arch::wgmma_wait<0>();
    add(part[(Parts - 1) % 2], Parts - 1);
  }
}

// The tile a cluster (or a lone block) works on: clusters walk units of ClusterM tile rows
// by one tile column in grouped order, and block `rank` takes row `rank` of the unit.
template <int ClusterM, int ClusterN = 1>
__device__ __forceinline__ void cluster_tile(int unit, int tiles_m, int tiles_n, unsigned rank, int& tm, int& tn) {
  int um, un;
  grouped_tile<kGroupM / ClusterM>(unit, ceil_div(tiles_m, ClusterM), ceil_div(tiles_n, ClusterN), um, un);
  tm = um * ClusterM + static_cast<int>(rank % ClusterM);
  tn = un * ClusterN + static_cast<int>(rank / ClusterM);
}

// ---- operands the producer loads itself ----------------------------------------------
// A tf32 operand TMA cannot take as it is stored (K strided: the tf32 tensor cores read
// K-major only; or a row pitch that is not a multiple of 16 bytes) can be loaded by the
// whole producer warpgroup, word by word with cp.async, straight into the K-major swizzled
// layout wgmma reads, transposed on the way where K is strided: no copy of the operand
// before the kernel (about 2 x its bytes of traffic). `Loads` (kernel template) says which
// operands come this way; the other one still comes by TMA.
struct LoadedOperand {
  const float* data = nullptr;
  long long ld = 0;
  int rows = 0, k = 0;           // rows: m for A, n for B
  bool rows_contiguous = false;  // element (r, k) at data[k * ld + r], else data[r * ld + k]
};
struct LoadedOperands {
  LoadedOperand a, b;
};
constexpr int kLoadA = 1, kLoadB = 2;  // bits of `Loads`
static_assert(sw128::kLoaderThreads == kWarpgroup && sw128::kRowBytes == kRowBytes, "sw128_tile.hpp's tile");
// A thread's loads complete kLoadLag stages after it issued them (cp.async.wait_group): it
// keeps kLoadLag + 1 stages of copies in flight. The consumers need stage s before the
// producer may refill stage s - kStages + 1, so the lag must stay below kStages - 1.
constexpr int kLoadLag = 2;
static_assert(kLoadLag < kStages - 1, "the producer would wait on a stage only its own late arrival frees");

// This thread's words of one operand tile (`Rows` rows from r0, 32 floats of K from k0).
// A tile that lies inside the operand (all but the last row and K tiles) goes without
// bounds checks, at fixed strides (sw128_tile.hpp); at the edges each word is checked and
// those outside are zero-filled (cp.async with a source size of 0).
template <int Rows>
__device__ __forceinline__ void load_tile_words(unsigned char* tile, const LoadedOperand& op, int r0, int k0, int t) {
  constexpr int kSteps = sw128::kWordsPerThread<Rows>;
  if (r0 + Rows <= op.rows && k0 + kBK<Tf32Operand> <= op.k) {  // interior
    if (!op.rows_contiguous) {
      const sw128::Word first = sw128::k_contiguous<Rows>(t, 0);
      const float* src = op.data + static_cast<long long>(r0 + first.row) * op.ld + k0 + first.k;
      const long long step = static_cast<long long>(sw128::k_contiguous<Rows>(t, 1).row - first.row) * op.ld;
#pragma unroll 8
      for (int i = 0; i < kSteps; ++i, src += step) {
        const sw128::Word w = sw128::k_contiguous<Rows>(t, i);
        arch::cp_async_4(tile + sw128::offset(w.row, 4 * w.k), src);
      }
    } else {
      const sw128::Word first = sw128::rows_contiguous_first(t);
      const float* src = op.data + static_cast<long long>(k0 + first.k) * op.ld + r0 + first.row;
      const long long quad_step = static_cast<long long>(sw128::kQuadK) * op.ld;
#pragma unroll 2
      for (int quad = 0; quad < sw128::kWordsPerRow / sw128::kQuadK; ++quad, src += quad_step) {
        unsigned char* dst = tile + sw128::rows_contiguous_offset(t, quad, 0);
#pragma unroll
        for (int group = 0; group < sw128::kGroups<Rows>; ++group)
          arch::cp_async_4(dst + group * sw128::kGroupRows * kRowBytes, src + group * sw128::kGroupRows);
      }
    }
    return;
  }
#pragma unroll 4
  for (int i = 0; i < kSteps; ++i) {
    const sw128::Word w = op.rows_contiguous ? sw128::rows_contiguous<Rows>(t, i) : sw128::k_contiguous<Rows>(t, i);
    const long long r = r0 + w.row, k = k0 + w.k;
    const bool inside = r < op.rows && k < op.k;
    const float* src = !inside ? op.data : op.rows_contiguous ? op.data + k * op.ld + r : op.data + r * op.ld + k;
    arch::cp_async_4(tile + sw128::offset(w.row, 4 * w.k), src, inside ? 4 : 0);
  }
}

// The producer when it loads operands itself: all four warps of the warpgroup copy their
// words of each stage, thread 0 also issues the TMA copy of an operand that is not loaded
// (counted on the `full` barrier as transaction bytes, without an arrival). A thread's
// words of a stage count once they landed: it waits for its older cp.async groups, makes
// its writes visible to the async proxy wgmma reads through (fence.proxy.async), then
// arrives; `full` waits for all 128 arrivals and the TMA bytes.
template <class E, int Loads>
__device__ __forceinline__ void produce_loaded(const CUtensorMap* map_a, const CUtensorMap* map_b,
                                               const LoadedOperands& loads, unsigned char* ring, std::uint64_t* full,
                                               std::uint64_t* empty, const stream_k::Schedule& plan, int tiles_m,
                                               int tiles_n) {
  static_assert(E::kBytes == 4 && !E::kMnMajor, "words of tf32 operands, K-major in shared memory");
  constexpr int kTmaBytes = ((Loads & kLoadA) ? 0 : kABytes) + ((Loads & kLoadB) ? 0 : kBBytes);
  const int t = threadIdx.x % kWarpgroup;
  int stage = 0, issued = 0;
  std::uint32_t phase = 0;
  const auto landed = [&](int s) {
    ptx::fence_proxy_async(ptx::space_shared);
    (void)ptx::mbarrier_arrive(&full[s]);
  };
  stream_k::Cursor cursor(plan, blockIdx.x);
  stream_k::Work work;
  while (cursor.next(work)) {
    int tm, tn;
    cluster_tile<1>(work.unit, tiles_m, tiles_n, 0, tm, tn);
    for (int kt = work.k_begin; kt < work.k_end; ++kt) {
      while (!ptx::mbarrier_try_wait_parity(&empty[stage], phase ^ 1)) {
      }
      unsigned char* a = ring + stage * kStageBytes;
      unsigned char* b = a + kABytes;
      const int k0 = kt * kBK<E>;
      if constexpr (kTmaBytes > 0) {
        if (t == 0) {
          ptx::mbarrier_expect_tx(ptx::sem_relaxed, ptx::scope_cta, ptx::space_shared, &full[stage], kTmaBytes);
          if constexpr (!(Loads & kLoadA)) {
            const std::int32_t at[2] = {k0, tm * kBM};
            copy_box<1>(map_a, a, at, &full[stage]);
          } else {
            const std::int32_t at[2] = {k0, tn * kBN};
            copy_box<1>(map_b, b, at, &full[stage]);
          }
        }
      }
      if constexpr ((Loads & kLoadA) != 0) load_tile_words<kBM>(a, loads.a, tm * kBM, k0, t);
      if constexpr ((Loads & kLoadB) != 0) load_tile_words<kBN>(b, loads.b, tn * kBN, k0, t);
      arch::cp_async_commit();
      if (issued >= kLoadLag) {
        arch::cp_async_wait<kLoadLag>();
        landed((stage + kStages - kLoadLag) % kStages);
      }
      ++issued;
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1;
      }
    }
  }
  arch::cp_async_wait<0>();
  for (int back = issued < kLoadLag ? issued : kLoadLag; back >= 1; --back) landed((stage + kStages - back) % kStages);
}

// ---- the stream-K tail ---------------------------------------------------------------
// With GEMMLAB_WGMMA_TAIL=stream_k, units left over after the whole rounds are cut by K
// across all clusters (stream_k.hpp). Every piece of such a unit leaves its partial sums in
// global memory and counts itself on the unit's counter; the piece that arrives last adds
// the others' partials and writes C. No block waits for another: each cluster runs the
// piece that starts a unit first (stream_k.hpp says why), before that unit's writers are
// done. The last-first order took the 4096^3 tf32 tail's DRAM reads from 670 to 388 MB and
// its cycles from 640k to 589k (rounds: 585k); bf16 4096^3 +3 %, 8192^3 within 0.5 %
// (session 14, results/h100/tuning.md).
constexpr int kConsumerThreads = kConsumers * kWarpgroup;
constexpr int kTileFloats = kBM * kBN;  // a block's accumulators: 128 per consumer thread
constexpr int kStreamKBarrier = 1 + kConsumers;  // named barriers 1..kConsumers: the epilogues
constexpr int kPartialsPerBlock = 2;  // a range holds at most two pieces: one starts a unit
struct StreamKArgs {
  stream_k::Schedule schedule;  // of the clusters; read only by the stream-K instantiation
  float* partials = nullptr;    // two tiles per block: the piece that starts a unit, the other
  int* arrived = nullptr;       // per tail unit and rank in the cluster: pieces done; 0 between runs
};

// A piece of a tail unit: its accumulators, element i of consumer thread t at
// partial[i * 256 + t] (coalesced), then one count on the unit's counter. Returns whether this
// piece arrived last: then it adds the others' partials and stores C.
__device__ __forceinline__ bool arrive_partial(const float (&acc)[128], float* partial, int* arrived, int pieces,
                                               int* last_flag) {
  const int t = threadIdx.x;  // consumer threads are the first kConsumerThreads
#pragma unroll
  for (int i = 0; i < 128; ++i) __stcg(partial + i * kConsumerThreads + t, acc[i]);
  arch::named_barrier_sync(kStreamKBarrier, kConsumerThreads);
  if (t == 0) {
    const bool last = arch::acq_rel_add_gpu(arrived, 1) == pieces - 1;
    if (last) arch::store_relaxed_gpu(arrived, 0);  // for the next run
    *last_flag = last;
  }
  arch::named_barrier_sync(kStreamKBarrier, kConsumerThreads);
  return *last_flag != 0;
}

template <class E, bool TransA, bool TransB, int ClusterM, int Promote = 0, int Loads = 0, bool StreamK = false,
          int ClusterN = 1>
__global__ void __launch_bounds__(kThreads, 1)
    wgmma_ws_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                    const __grid_constant__ CUtensorMap map_c, Epilogue e, KSchedule schedule,
                    const __grid_constant__ LoadedOperands loads, const __grid_constant__ StreamKArgs sk) {
  static_assert(ClusterM == 1 || ClusterM == 2, "clusters of one or two blocks along M");
  static_assert(ClusterN == 1 || (ClusterN == 2 && ClusterM == 2 && !TransA && !Promote && Loads == 0 && !StreamK),
                "clusters of 2 x 2: K-major A, one plain K pass");
  constexpr int kClusterBlocks = ClusterM * ClusterN;
  static_assert(Loads == 0 || (ClusterM == 1 && !Promote && !TransA && TransB),
                "loaded operands: single blocks, one K pass, K-major in shared memory");
  // (3xTF32's promoted sums and a stream-K fix-up together spilled 72-160 bytes.)
  static_assert(!(StreamK && Promote), "the stream-K tail: one K pass");
  // tf32 A stored k x m: read into registers (load_a_fragments).
  constexpr bool kRegisterA = TransA && !E::kMnMajor;
  static_assert(!kRegisterA || (!Promote && Loads == 0), "A from registers: one plain K pass");
  // The warp-stored and bulk-copied epilogues (e.warp_store, e.bulk_store, form_of): in the
  // instantiations where they fit in registers (with A fragments or promoted sums the
  // warp-stored one spilled 200-1300 bytes).
  constexpr bool kWarpStore = !kRegisterA && !Promote && Loads == 0 && !StreamK;
  extern __shared__ unsigned char smem_raw[];
  // The swizzle pattern is a function of the address: every stage starts on an atom. (The
  // same offset in every block of a cluster: multicast copies land at the same place.)
  // (Rounded as an integer, so the compiler does not know these pointers are shared memory:
  // stage_chunk says where that matters.)
  unsigned char* ring = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + kAtomBytes - 1) / kAtomBytes * kAtomBytes);
  unsigned char* epilogue_buffers = ring + kStages * kStageBytes;
  __shared__ std::uint64_t full[kStages], empty[kStages];
  __shared__ int tail_last;  // the stream-K tail: whether this block's piece arrived last

  const int warpgroup = threadIdx.x / kWarpgroup;
  const unsigned rank = ClusterM > 1 ? arch::cluster_rank() : 0;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      // The producer's expect_tx arrival, or every producer thread's when it loads operands.
      ptx::mbarrier_init(&full[s], Loads != 0 ? kWarpgroup : 1);
      // A stage is free once every consumer warp of the cluster is done with it: the
      // producers of the cluster write their share of B into every block's copy.
      // (In clusters of 2 x 2: the blocks of its tile row and of its tile column.)
      ptx::mbarrier_init(&empty[s], kConsumers * 4 * (ClusterM + ClusterN - 1));
    }
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  // No block may copy into a peer or arrive on its barriers before the peer initialised them.
  if constexpr (ClusterM > 1) arch::cluster_sync();
  else __syncthreads();
  // Launched as a programmatic dependent (launch_config): the kernel before it in the stream
  // (an operand copy) may still be running. Nothing above touched global memory; from here
  // on its writes are complete and visible. (A no-op when nothing is pending.)
  cudaGridDependencySynchronize();

  const int tiles_m = ceil_div(e.m, kBM), tiles_n = ceil_div(e.n, kBN);
  const int units = ceil_div(tiles_m, ClusterM) * ceil_div(tiles_n, ClusterN);
  const int cluster = blockIdx.x / kClusterBlocks, clusters = gridDim.x / kClusterBlocks;
  const int k_tiles = schedule.k_tiles * schedule.segments;
  // This cluster's work: whole units round-robin, then (StreamK) pieces of the tail.
  const stream_k::Schedule plan = StreamK ? sk.schedule : stream_k::rounds_only(units, clusters, k_tiles);

  if (warpgroup == kConsumers) {  // the producer: the last warpgroup, one warp of it
    arch::setmaxnreg_decrease<Loads != 0 ? kLoadingProducerRegisters : kProducerRegisters>();
    if constexpr (Loads != 0) {
      produce_loaded<E, Loads>(&map_a, &map_b, loads, ring, full, empty, plan, tiles_m, tiles_n);
    } else if (threadIdx.x % kWarpgroup < 32) {
      // The whole warp walks the ring and one lane issues the copies, so that no lane waits
      // in the final cluster barrier while lane 0 of its warp still works.
      const bool issuer = threadIdx.x % 32 == 0;
      int stage = 0;
      std::uint32_t phase = 0;
      stream_k::Cursor cursor(plan, cluster);
      stream_k::Work work;
      while (cursor.next(work)) {
        int tm, tn;
        cluster_tile<ClusterM, ClusterN>(work.unit, tiles_m, tiles_n, rank, tm, tn);
        for (int step = work.k_begin; step < work.k_end; ++step) {
          const int segment = step / schedule.k_tiles, kt = step - segment * schedule.k_tiles;
          // A fresh barrier counts as having completed the phase before phase 0: the first
          // pass over the ring does not wait.
          while (!ptx::mbarrier_try_wait_parity(&empty[stage], phase ^ 1)) {
          }
          if (issuer)
            load_stage<E, TransA, TransB, ClusterM, ClusterN>(&map_a, &map_b, ring + stage * kStageBytes, &full[stage],
                                                    tm * kBM, tn * kBN, schedule.a_column(segment, kt * kBK<E>),
                                                    schedule.b_column(segment, kt * kBK<E>), rank);
          __syncwarp();
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
    }
  } else {
    arch::setmaxnreg_increase<Loads != 0 ? kLoadingConsumerRegisters : kConsumerRegisters>();
    // A stored k x m (TransA) is M-major; B stored k x n (not TransB) is N-major.
    constexpr int kMnMajorA = TransA ? 1 : 0, kMnMajorB = TransB ? 0 : 1;
    const int lane = threadIdx.x % 32, warp = (threadIdx.x % kWarpgroup) / 32;
    // One arrival per warp on the stage's `empty` barrier of every block of the cluster.
    const auto release = [&](int s) {
      if (lane != 0) return;
      if constexpr (ClusterM == 1) {
        ptx::mbarrier_arrive(&empty[s]);
      } else if constexpr (ClusterN == 1) {
#pragma unroll
        for (unsigned r = 0; r < ClusterM; ++r) arch::mbarrier_arrive_cluster(&empty[s], r);
      } else {  // this block, its tile column's other block (B), its tile row's other block (A)
        arch::mbarrier_arrive_cluster(&empty[s], rank);
        arch::mbarrier_arrive_cluster(&empty[s], rank ^ 1u);
        arch::mbarrier_arrive_cluster(&empty[s], rank ^ 2u);
      }
    };
    int stage = 0;
    std::uint32_t phase = 0;
    float acc[128];
    // Promote: only the last pass (big·big) needs it; the small passes come first, while the
    // sums are about 2^-11 of their final size, so what their truncation loses is negligible.
    const int promote_from = Promote ? (schedule.segments - 1) * schedule.k_tiles : k_tiles;
    stream_k::Cursor cursor(plan, cluster);
    stream_k::Work work;
    while (cursor.next(work)) {
      int tm, tn;
      cluster_tile<ClusterM, ClusterN>(work.unit, tiles_m, tiles_n, rank, tm, tn);
      int previous = -1;
      if constexpr (Promote || StreamK) {
        // The previous tile's accumulators are dead: without this, the first wgmma's runtime
        // scale_d keeps them live through the promoted pass beside `sums`, or through the
        // stream-K fix-up (spills, session 14).
#pragma unroll
        for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
      }
      const auto next_stage = [&] {
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1;
        }
      };
      // With Promote (whole units only): the small passes (segments >= 2).
      const int mma_end = work.k_end < promote_from ? work.k_end : promote_from;
      // One stage: its MMAs issued, the previous stage's waited for and handed back. With A in
      // registers, `frag` receives this stage's A fragments and `held` are the previous
      // stage's, in use until the wait.
      const auto mma_stage = [&](int kt, std::uint32_t(&frag)[kFragmentRegs], std::uint32_t(&held)[kFragmentRegs]) {
        while (!ptx::mbarrier_try_wait_parity(&full[stage], phase)) {
        }
        const unsigned char* a = ring + stage * kStageBytes;
        const unsigned char* b = a + kABytes;
        if constexpr (kRegisterA) load_a_fragments(a, warpgroup, frag);
#pragma unroll
        for (int i = 0; i < 128; ++i) arch::fence_accumulator(acc[i]);
        arch::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kKSteps<E>; ++kk) {
          const int scale_d = kt > work.k_begin || kk > 0;
          if constexpr (kRegisterA)
            arch::wgmma_m64n256k8_tf32_rs(acc, reinterpret_cast<const std::uint32_t(&)[4]>(frag[4 * kk]),
                                          b_descriptor<TransB>(b, kk), scale_d);
          else
            E::template mma<kMnMajorA, kMnMajorB>(acc, a_descriptor<TransA>(a, warpgroup, kk),
                                                  b_descriptor<TransB>(b, kk), scale_d);
        }
        arch::wgmma_commit();
#pragma unroll
        for (int i = 0; i < 128; ++i) arch::fence_accumulator(acc[i]);
        // Keep this stage's MMAs in flight; the previous stage's are done: hand it back.
        arch::wgmma_wait<1>();
        if constexpr (kRegisterA)
#pragma unroll
          for (int i = 0; i < kFragmentRegs; ++i) arch::fence_fragment(held[i]);  // free only now
        if (previous >= 0) release(previous);
        previous = stage;
        next_stage();
      };
      if constexpr (kRegisterA) {
        // Two sets of fragment registers, alternating stage by stage (unrolled by two, so
        // that each set keeps its registers).
        std::uint32_t frag[2][kFragmentRegs] = {};
        int kt = work.k_begin;
        for (; kt + 1 < mma_end; kt += 2) {
          mma_stage(kt, frag[0], frag[1]);
          mma_stage(kt + 1, frag[1], frag[0]);
        }
        if (kt < mma_end) mma_stage(kt, frag[0], frag[1]);
      } else {
        std::uint32_t none[kFragmentRegs];
        for (int kt = work.k_begin; kt < mma_end; ++kt) mma_stage(kt, none, none);
      }
      arch::wgmma_wait<0>();
#pragma unroll
      for (int i = 0; i < 128; ++i) arch::fence_accumulator(acc[i]);
      if (previous >= 0) release(previous);
      // Accumulator fragment of m64nN: register 4j + {0,1} holds row accumulator_row(h = 0)
      // and columns 8j + 2(lane%4) + {0,1}; 4j + {2,3} the same columns of row (h = 1).
      const int wg_row0 = tm * kBM + warpgroup * kEpilogueRows;
      const auto store = [&](const float (&r)[128]) {
        unsigned char* buffers = epilogue_buffers + warpgroup * kEpilogueBuffers * kEpilogueBufferBytes;
        if constexpr (kWarpStore) {
          if (e.bulk_store) {
            store_tile_bulk(r, e, buffers, wg_row0, tn * kBN);
            return;
          }
          if (e.warp_store) {
            store_tile_warps<kRegisterA>(r, e, buffers, wg_row0, tn * kBN, warpgroup);
            return;
          }
        }
        if (e.tma_store) {
          if constexpr (kRegisterA)
            if (e.c_transposed) {
              store_tile_tma_transposed(r, e, &map_c, buffers, wg_row0, tn * kBN, warpgroup);
              return;
            }
          store_tile_tma<kRegisterA, E::kMnMajor>(r, e, &map_c, buffers, wg_row0, tn * kBN, warpgroup);
          return;
        }
        const int row_0 = wg_row0 + accumulator_row<kRegisterA>(warp, lane, 0);
        const int row_1 = wg_row0 + accumulator_row<kRegisterA>(warp, lane, 1);
        const int col0 = tn * kBN + 2 * (lane % 4);
        if (e.c_transposed) {
#pragma unroll
          for (int j = 0; j < kBN / 8; ++j) {
            store_pair_transposed(e, row_0, col0 + 8 * j, r[4 * j], r[4 * j + 1]);
            store_pair_transposed(e, row_1, col0 + 8 * j, r[4 * j + 2], r[4 * j + 3]);
          }
          return;
        }
#pragma unroll
        for (int j = 0; j < kBN / 8; ++j) {
          store_pair(e, row_0, col0 + 8 * j, r[4 * j], r[4 * j + 1]);
          store_pair(e, row_1, col0 + 8 * j, r[4 * j + 2], r[4 * j + 3]);
        }
      };
      // The unit's sums: stored; or, for a piece of a stream-K tail unit, left as a partial,
      // and by the piece that arrives last added to the others' partials and stored.
      const auto finish = [&](float (&r)[128]) {
        if constexpr (StreamK) {
          if (!work.whole(k_tiles)) {
            const int u = work.unit - plan.dp_units;  // a tail unit
            int* arrived = sk.arrived + u * ClusterM + static_cast<int>(rank);
            // Two partial slots per block: the piece that starts its unit, and the other.
            const auto slot = [&](int c, int k_begin) {
              return sk.partials + static_cast<long long>((c * kPartialsPerBlock + (k_begin == 0 ? 0 : 1)) * ClusterM +
                                                          static_cast<int>(rank)) * kTileFloats;
            };
            const int owner = plan.owner(u), writers = plan.writers(u);
            if (!arrive_partial(r, slot(cluster, work.k_begin), arrived, writers + 1, &tail_last))
              return;
            // The others' partials added in place, so that one epilogue is inlined, not two
            // (with a second array for the sum, the kernel with A in registers spilled 732
            // bytes; no wgmma warning either way).
            const int t = threadIdx.x;
            for (int c = owner; c <= owner + writers; ++c) {
              if (c == cluster) continue;
              const float* partial = slot(c, c == owner ? 0 : 1);
#pragma unroll
              for (int i = 0; i < 128; ++i) r[i] += __ldcg(partial + i * kConsumerThreads + t);
            }
          }
        }
        store(r);
      };
      if constexpr (Promote) {
        float sums[128];  // registers no wgmma accumulates into: the adds below define them
#pragma unroll
        for (int i = 0; i < 128; ++i) sums[i] = acc[i];
        // kPromoteStages stages per partial sum: fewer waits.
        const int promoted_begin = work.k_begin > promote_from ? work.k_begin : promote_from;
        for (int kt = promoted_begin; kt < work.k_end; kt += kPromoteStages) {
          const int count = work.k_end - kt < kPromoteStages ? work.k_end - kt : kPromoteStages;
          int held[kPromoteStages];
          const unsigned char* stages[kPromoteStages];
#pragma unroll
          for (int g = 0; g < kPromoteStages; ++g) {
            held[g] = stage;
            stages[g] = ring + stage * kStageBytes;
            if (g < count) {
              while (!ptx::mbarrier_try_wait_parity(&full[stage], phase)) {
              }
              next_stage();
            }
          }
          promoted_stages<E, TransA, TransB, Promote>(sums, stages, count, warpgroup);
#pragma unroll
          for (int g = 0; g < kPromoteStages; ++g)  // both halves are done with them
            if (g < count) release(held[g]);
        }
        finish(sums);
      } else {
        finish(acc);
      }
    }
    // Shared memory must outlive the TMA stores and bulk copies that read it (issued by
    // thread 0 of each warpgroup, or lane 0 of each warp).
    if ((e.tma_store || e.bulk_store) && lane == 0) ptx::cp_async_bulk_wait_group(ptx::n32_t<0>{});
  }
  // A block leaves only when its peers no longer copy into it or arrive on its barriers.
  if constexpr (ClusterM > 1) arch::cluster_sync();
}

// ---- host side ---------------------------------------------------------------------------

// The tensor-map view of A and B for the canonical (row-major C) problem: A m x k or
// stored k x m, B stored n x k (K contiguous) or k x n.
// A's box: in clusters of 2 x 2 (`cluster_n` 2) a block loads half the rows of its A tile.
template <class E>
TmaMatrix tma_a(const RowMajorGemm& g, int cluster_n = 1) {
  const auto u = [](std::int64_t x) { return static_cast<std::uint64_t>(x); };
  // Stored k x m: 64-wide chunks for wgmma's MN-major read (16-bit types), 32-wide blocks
  // for the register fragments (tf32).
  if (g.trans_a)
    return {g.a, u(g.k), u(g.m), u(g.lda), E::kTma, static_cast<std::uint32_t>(kBK<E>),
            static_cast<std::uint32_t>(E::kMnMajor ? kChunk : kMnBlock)};
  return {g.a, u(g.m), u(g.k), u(g.lda), E::kTma, static_cast<std::uint32_t>(kBM / cluster_n),
          static_cast<std::uint32_t>(kBK<E>)};
}
// B's box: a block of a cluster of `cluster_m` loads 1/cluster_m of the K-major rows.
template <class E>
TmaMatrix tma_b(const RowMajorGemm& g, int cluster_m = 1) {
  const auto u = [](std::int64_t x) { return static_cast<std::uint64_t>(x); };
  if (g.trans_b)
    return {g.b, u(g.n), u(g.k), u(g.ldb), E::kTma, static_cast<std::uint32_t>(kBN / cluster_m),
            static_cast<std::uint32_t>(kBK<E>)};
  return {g.b, u(g.k), u(g.n), u(g.ldb), E::kTma, static_cast<std::uint32_t>(kBK<E>), kChunk};
}
// C as the TMA-store epilogue writes it: 64-row by 32-column (128-byte) boxes.
inline TmaMatrix tma_c(const RowMajorGemm& g) {
  const auto u = [](std::int64_t x) { return static_cast<std::uint64_t>(x); };
  return {g.c, u(g.m), u(g.n), u(g.ldc), TmaElement::F32, kEpilogueRows, kEpilogueCols};
}
// C for a kernel that computes C^T (g is C^T's problem): C's own rows (g.n of them) in
// 32 x 32 boxes (store_tile_tma_transposed).
inline TmaMatrix tma_c_transposed(const RowMajorGemm& g) {
  const auto u = [](std::int64_t x) { return static_cast<std::uint64_t>(x); };
  return {g.c, u(g.n), u(g.m), u(g.ldc), TmaElement::F32, kEpilogueCols, kEpilogueCols};
}

// Tuning knobs, read per call so that tests and probes can force each form:
//   GEMMLAB_WGMMA_CLUSTER  = auto | 2 | 1 | 4  blocks per cluster along M sharing B: by
//                                            default (auto) 2 where the stream-K tail runs,
//                                            for 3xTF32 and for a C that TMA cannot address,
//                                            else 1 (form_of says why); 4: 2 x 2, the blocks
//                                            of a tile row also sharing A (16-bit types,
//                                            K-major A, two tile columns or more)
//   GEMMLAB_WGMMA_EPILOGUE = tma | warps | registers | bulk  C through shared memory and TMA
//                                            where TMA can address C, else warp-stored through
//                                            shared memory where the kernel has it (default);
//                                            warp-stored wherever it can; stored from registers;
//                                            or as the default, but with a C that TMA cannot
//                                            address bulk-copied (store_tile_bulk) where
//                                            beta = 0
//   GEMMLAB_WGMMA_OPERANDS = copy | cp_async  a tf32 operand TMA cannot take as stored is
//                                            copied before the kernel (default), or loaded
//                                            by the producer warpgroup (single blocks)
//   GEMMLAB_WGMMA_TAIL     = auto | rounds | stream_k  units left over after the whole
//                                            rounds are cut by K over all clusters where that
//                                            pays (stream_k::tail_pays; default: for a C TMA
//                                            can address, one K pass, clusters of 2 along
//                                            M), always run as one more, partial round, or
//                                            always cut (bf16, f16 and tf32 with A in
//                                            registers in clusters of 2 only)
//   GEMMLAB_3XTF32_PROMOTE = halves | quarters  3xTF32's promoted partial sums by m64n128
//                                            halves, each waited for (default), or m64n64
//                                            quarters, one in flight while the last is added
//   GEMMLAB_WGMMA_TF32_MN  = registers | copy  a tf32 operand whose K is strided is read as
//                                            wgmma's A from registers (where it is B, the
//                                            kernel computes C^T = B^T A^T) (default), or
//                                            copied K-major before the kernel
// Where a form cannot run (one row of tiles, a C that TMA cannot address) the next one runs.
enum class EpilogueChoice { Tma, Warps, Registers, Bulk };
struct Options {
  int cluster_m = 2;
  bool cluster_auto = true;  // form_of picks 1 or 2
  int cluster_n = 1;  // 2: clusters of 2 x 2 (GEMMLAB_WGMMA_CLUSTER=4), where the kernel has them
  EpilogueChoice epilogue = EpilogueChoice::Tma;
  bool load_operands = false;
  bool stream_k = false;   // the stream-K tail wherever the kernel has one
  bool auto_tail = true;   // the stream-K tail where it pays
  bool promote_quarters = false;
  bool tf32_registers = true;
};

// One knob: `choice` becomes the index of the variable's value among `choices` (the first
// is the default, kept when the variable is unset); any other value is refused by name.
inline Status read_knob(const char* name, std::initializer_list<const char*> choices, int& choice) {
  choice = 0;
  const char* env = std::getenv(name);
  if (env == nullptr) return Status::ok();
  std::string list;
  int i = 0;
  for (const char* c : choices) {
    if (std::string_view(env) == c) {
      choice = i;
      return Status::ok();
    }
    list += (i == 0 ? "" : i + 1 == static_cast<int>(choices.size()) ? " or " : ", ") + std::string(c);
    ++i;
  }
  return {StatusCode::InvalidValue, std::string(name) + " must be " + list + ", not '" + env + "'"};
}

inline Status read_options(Options& o) {
  o = Options{};
  int cluster, epilogue, operands, tail, promote, mn;
  GEMMLAB_TRY(read_knob("GEMMLAB_WGMMA_CLUSTER", {"auto", "2", "1", "4"}, cluster));
  GEMMLAB_TRY(read_knob("GEMMLAB_WGMMA_EPILOGUE", {"tma", "warps", "registers", "bulk"}, epilogue));
  GEMMLAB_TRY(read_knob("GEMMLAB_WGMMA_OPERANDS", {"copy", "cp_async"}, operands));
  GEMMLAB_TRY(read_knob("GEMMLAB_WGMMA_TAIL", {"auto", "rounds", "stream_k"}, tail));
  GEMMLAB_TRY(read_knob("GEMMLAB_3XTF32_PROMOTE", {"halves", "quarters"}, promote));
  GEMMLAB_TRY(read_knob("GEMMLAB_WGMMA_TF32_MN", {"registers", "copy"}, mn));
  o.cluster_auto = cluster == 0;
  o.cluster_m = cluster == 2 ? 1 : 2;
  o.cluster_n = cluster == 3 ? 2 : 1;
  o.epilogue = static_cast<EpilogueChoice>(epilogue);
  o.load_operands = operands == 1;
  o.stream_k = tail == 2;
  o.auto_tail = tail == 0;
  o.promote_quarters = promote == 1;
  o.tf32_registers = mn == 0;
  return Status::ok();
}

// What the kernel needs beyond the rung's types: an sm_90 device. (Operands TMA cannot
// address are copied, tf32 operands that are not K-major rewritten K-major: run().)
inline Status check_kernel(const GemmProblem& p, const std::string& rung) {
  if (device_compute_capability() != 90)
    return {StatusCode::ArchMismatch, rung + " needs an sm_90 GPU (wgmma and setmaxnreg are sm_90a code)"};
  (void)p;
  Options o;
  return read_options(o);
}

// The form of the kernel one problem runs: blocks per cluster, epilogue, and which operands
// the producer loads itself (kLoadA | kLoadB; the plan decides, below).
struct Form {
  int cluster_m;
  int cluster_n = 1;  // 2: clusters of 2 x 2 (16-bit types, K-major A, one plain K pass)
  bool tma_epilogue;
  bool warp_epilogue;  // C warp-stored through shared memory (store_tile_warps)
  bool bulk_epilogue;  // C bulk-copied from shared memory (store_tile_bulk)
  int loads;
  bool stream_k;  // the stream-K instantiation, which cuts a leftover round by K where there is one
  bool register_a;    // tf32 A stored k x m, read into registers
  bool c_transposed;  // the kernel computes C^T (kernel_problem)
};
// `single_block_tail`: the stream-K instantiations include single blocks (tf32: with or
// without loaded operands), not only clusters of 2 (bf16, f16: fewer instantiations).
// `register_a`: tf32 A reaches the kernel stored k x m (read into registers, one plain pass);
// `c_transposed`: the kernel computes C^T.
inline Form form_of(const RowMajorGemm& g, const Options& o, int loads, bool split, bool single_block_tail,
                    int k_steps, bool register_a = false, bool c_transposed = false) {
  Form f;
  f.loads = loads;
  f.register_a = register_a;
  f.c_transposed = c_transposed;
  // One row of tiles: nothing to share. Loaded operands: no multicast.
  f.cluster_m = ceil_div(g.m, kBM) >= 2 && loads == 0 ? o.cluster_m : 1;
  const bool addressable = tma_requirements(c_transposed ? tma_c_transposed(g) : tma_c(g), "C").is_ok();
  // (With A in registers: clusters of 2 only.)
  const bool has_tail = !split && (f.cluster_m == 2 || (single_block_tail && !register_a));
  // The tail by default where it pays: decided here, since a stream-K form has neither the
  // warp-stored epilogue nor clusters of 2 x 2, from the clusters one block per SM makes
  // (the grid launch_config sizes has as many on an H100: 66).
  const bool tail_pays = o.auto_tail && f.cluster_m == 2 && o.cluster_n == 1 && loads == 0 && addressable &&
                         stream_k::tail_pays(static_cast<int>(ceil_div(g.m, kBM * 2) * ceil_div(g.n, kBN)),
                                             device_sm_count() / 2, k_steps);
  f.stream_k = (o.stream_k || tail_pays) && has_tail;
  // By default, clusters of 2 only where they pay. Each stage of a cluster waits for both
  // blocks' consumers to hand it back and for both producers' copies, and that coupling
  // costs 1.3-2.2 % of the K loop's cycles (Nsight Compute's locked clock, tf32 and bf16,
  // 4096 x 4096 x K); in whole rounds single blocks ran 1.5-1.9 % faster at 4096^3 and
  // 0.3-7 % at 1000^3, 2048^3 and 6144^3. Clusters stay where the stream-K tail runs (it has
  // no single-block form for A in registers or the 16-bit types, and with it clusters won
  // 2-8 % at 3072^3, 5120^3 and 8192^3), for 3xTF32 (single blocks 6-12 % slower; likely
  // because its split operands carry twice the bytes per MMA, which multicast halves) and
  // where TMA cannot address C (the warp-stored epilogue: equal for bf16, tf32 1 % slower
  // without). results/h100/probes/session16/.
  if (o.cluster_auto && f.cluster_m == 2 && !f.stream_k && !split && addressable) f.cluster_m = 1;
  // Clusters of 2 x 2 where the kernel has them (16-bit types: single_block_tail is false)
  // and there are two tile columns to share A.
  f.cluster_n = o.cluster_n == 2 && f.cluster_m == 2 && !single_block_tail && !g.trans_a && !split && loads == 0 &&
                        !f.stream_k && ceil_div(g.n, kBN) >= 2
                    ? 2
                    : 1;
  f.tma_epilogue = (o.epilogue == EpilogueChoice::Tma || o.epilogue == EpilogueChoice::Bulk) && addressable;
  // The warp-stored and bulk-copied epilogues: C's rows (not C^T's), in the kernels that have
  // them (kWarpStore); the bulk copies cannot add beta * C.
  const bool staged = !f.tma_epilogue && o.epilogue != EpilogueChoice::Registers && !register_a && !split &&
                      loads == 0 && !f.stream_k && !c_transposed;
  f.bulk_epilogue = staged && o.epilogue == EpilogueChoice::Bulk && static_cast<float>(g.beta) == 0.0f;
  f.warp_epilogue = staged && !f.bulk_epilogue;
  return f;
}

// The persistent grid: the fewest clusters that finish the units (ClusterM tile rows by one
// tile column) in as many rounds as all resident clusters would (2048 tiles of 128 x 256 on
// 132 SMs, one block each: 16 rounds either way, so 128 blocks, each with exactly 16 tiles,
// and every round a whole group of tile rows). Measured on an H100 at 8192^3 NN (no
// clusters): 769-772 TFLOP/s against 759-761 with 132 blocks.
inline int grid_size(int units, int resident_clusters, int cluster_m) {
  const int rounds = ceil_div(units, resident_clusters);
  return ceil_div(units, rounds) * cluster_m;
}

// The launch of one instantiation: its shared-memory limit raised and its resident
// clusters counted once (statics per instantiation), and the persistent grid for `g`.
// `plan` receives the clusters' work: with StreamK, whole rounds and a tail cut by K over all
// resident clusters where units are left over; otherwise (or without a leftover) the fewest
// clusters that finish in as many rounds.
// The launch attributes: the cluster shape, and programmatic stream serialisation (PDL), so
// that the kernel is launched while the operand copy before it drains and waits for it in
// cudaGridDependencySynchronize() (repitch_kernel says why).
struct LaunchAttributes {
  cudaLaunchAttribute attrs[2];
};

template <class E, bool TransA, bool TransB, int ClusterM, int Promote = 0, int Loads = 0, bool StreamK = false,
          int ClusterN = 1>
Status launch_config(const RowMajorGemm& g, int k_tiles, LaunchAttributes& attributes, cudaLaunchConfig_t& config,
                     stream_k::Schedule& plan) {
  const auto kernel = wgmma_ws_kernel<E, TransA, TransB, ClusterM, Promote, Loads, StreamK, ClusterN>;
  constexpr int kClusterBlocks = ClusterM * ClusterN;
  attributes = {};
  cudaLaunchAttribute& cluster = attributes.attrs[0];
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = kClusterBlocks;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  cudaLaunchAttribute& dependent = attributes.attrs[1];
  dependent.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  dependent.val.programmaticStreamSerializationAllowed = 1;
  config = {};
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = kSmemBytes;
  config.attrs = attributes.attrs;
  config.numAttrs = 1;  // the occupancy query below: the cluster shape alone
  static const cudaError_t raised =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  CUDA_CHECK(raised);
  static int resident = 0;
  static const cudaError_t counted = [&] {
    config.gridDim = dim3(kClusterBlocks);
    return cudaOccupancyMaxActiveClusters(&resident, kernel, &config);
  }();
  CUDA_CHECK(counted);
  if (resident < 1)
    return {StatusCode::ArchMismatch, "wgmma_ws: no cluster of " + std::to_string(kClusterBlocks) +
                                          " blocks fits on this GPU (GEMMLAB_WGMMA_CLUSTER=1 runs without)"};
  const int units = ceil_div(g.m, kBM * ClusterM) * ceil_div(g.n, kBN * ClusterN);
  if constexpr (StreamK) {
    plan = stream_k::with_tail(units, resident, k_tiles);
    if (plan.has_tail()) {
      config.gridDim = dim3(resident * ClusterM);
      config.numAttrs = 2;
      return Status::ok();
    }
  }
  config.gridDim = dim3(grid_size(units, resident, kClusterBlocks));
  config.numAttrs = 2;
  plan = stream_k::rounds_only(units, static_cast<int>(config.gridDim.x) / kClusterBlocks, k_tiles);
  return Status::ok();
}

// The stream-K tail's global memory (sized by prepare()): two partial tiles per block and a
// counter per tail unit and rank, zero between runs (the last piece resets its own).
struct StreamKWorkspace {
  DeviceMemory partials, arrived;
};

template <class E, bool TransA, bool TransB, int ClusterM, int Promote = 0, int Loads = 0, bool StreamK = false,
          int ClusterN = 1>
Status launch(const RowMajorGemm& g, Stream stream, const CUtensorMap& map_a, const CUtensorMap& map_b,
              const CUtensorMap& map_c, const Epilogue& e, const KSchedule& schedule,
              const LoadedOperands& loads = {}, const StreamKWorkspace* tail = nullptr) {
  LaunchAttributes attributes;
  cudaLaunchConfig_t config;
  StreamKArgs sk;
  GEMMLAB_TRY((launch_config<E, TransA, TransB, ClusterM, Promote, Loads, StreamK, ClusterN>(
      g, schedule.k_tiles * schedule.segments, attributes, config, sk.schedule)));
  if constexpr (StreamK) {
    if (!sk.schedule.has_tail())  // whole rounds: the plain kernel
      return launch<E, TransA, TransB, ClusterM, Promote, Loads, false>(g, stream, map_a, map_b, map_c, e, schedule,
                                                                         loads);
    const std::size_t partial_bytes =
        kPartialsPerBlock * static_cast<std::size_t>(config.gridDim.x) * kTileFloats * sizeof(float);
    if (tail == nullptr || tail->partials.bytes() < partial_bytes ||
        tail->arrived.bytes() < static_cast<std::size_t>(config.gridDim.x) * sizeof(int))
      return {StatusCode::InternalError, "wgmma_ws: run() before prepare() sized the stream-K workspace"};
    sk.partials = static_cast<float*>(tail->partials.data());
    sk.arrived = static_cast<int*>(tail->arrived.data());
  }
  config.stream = static_cast<cudaStream_t>(stream);
  CUDA_CHECK(cudaLaunchKernelEx(&config, wgmma_ws_kernel<E, TransA, TransB, ClusterM, Promote, Loads, StreamK, ClusterN>,
                                map_a, map_b, map_c, e, schedule, loads, sk));
  CUDA_CHECK_LAUNCH("wgmma_ws_kernel");
  return Status::ok();
}

// Calls f(std::integral_constant<int, ClusterM>) for the form's cluster size.
template <class F>
decltype(auto) dispatch_cluster(int cluster_m, F&& f) {
  if (cluster_m == 2) return f(std::integral_constant<int, 2>{});
  return f(std::integral_constant<int, 1>{});
}

// Calls f(std::integral_constant<int, Loads>) for the loaded operands (kLoadA | kLoadB, not 0).
template <class F>
decltype(auto) dispatch_loads(int loads, F&& f) {
  if (loads == kLoadA) return f(std::integral_constant<int, kLoadA>{});
  if (loads == kLoadB) return f(std::integral_constant<int, kLoadB>{});
  return f(std::integral_constant<int, kLoadA | kLoadB>{});
}

// How the producer reads a loaded operand of the canonical problem: op(A) is m x k, stored
// k x m when trans_a; op(B) is k x n, seen as n rows of K, stored n x k when trans_b.
inline LoadedOperands loaded_operands(const RowMajorGemm& g) {
  LoadedOperands l;
  l.a = {static_cast<const float*>(g.a), g.lda, static_cast<int>(g.m), static_cast<int>(g.k), g.trans_a};
  l.b = {static_cast<const float*>(g.b), g.ldb, static_cast<int>(g.n), static_cast<int>(g.k), !g.trans_b};
  return l;
}

// Launches the kernel on a canonical problem whose operands TMA can address, except those
// in `loads` (the producer loads them itself). `map_k` is the K extent of the tensor maps
// (g.k, or both segments of a split operand).
// `c_transposed`: `g` is the problem of C^T (kernel_problem), and the kernel stores it so.
template <class E, bool Promote = false>
Status run_canonical(const RowMajorGemm& g, std::int64_t map_k, const KSchedule& schedule, Stream stream,
                     int loads = 0, const StreamKWorkspace* tail = nullptr, bool c_transposed = false) {
  Options options;
  GEMMLAB_TRY(read_options(options));
  const bool register_a = !E::kMnMajor && g.trans_a && !(loads & kLoadA);  // a_in_registers held
  const Form form = form_of(g, options, loads, Promote, !E::kMnMajor, ceil_div(g.k, kBK<E>), register_a, c_transposed);
  RowMajorGemm view = g;
  view.k = map_k;
  CUtensorMap map_a{}, map_b{}, map_c{};
  if (!(loads & kLoadA)) GEMMLAB_TRY(encode_tensor_map(tma_a<E>(view, form.cluster_n), "A", map_a));
  if (!(loads & kLoadB)) GEMMLAB_TRY(encode_tensor_map(tma_b<E>(view, form.cluster_m), "B", map_b));
  if (form.tma_epilogue) GEMMLAB_TRY(encode_tensor_map(c_transposed ? tma_c_transposed(g) : tma_c(g), "C", map_c));
  Epilogue e{static_cast<float*>(g.c),       g.ldc, static_cast<int>(g.m), static_cast<int>(g.n),
             static_cast<float>(g.alpha), static_cast<float>(g.beta), form.tma_epilogue, c_transposed,
             form.warp_epilogue, form.bulk_epilogue};
  return dispatch_cluster(form.cluster_m, [&](auto cluster) -> Status {
    constexpr int kCluster = decltype(cluster)::value;
    if constexpr (E::kMnMajor) {
      return dispatch_trans(g.trans_a, g.trans_b, [&](auto ta, auto tb) -> Status {
        constexpr bool kTa = decltype(ta)::value, kTb = decltype(tb)::value;
        if constexpr (kCluster == 2)
          if (form.stream_k) return launch<E, kTa, kTb, 2, false, 0, true>(g, stream, map_a, map_b, map_c, e, schedule, {}, tail);
        if constexpr (kCluster == 2 && !kTa)
          if (form.cluster_n == 2)
            return launch<E, false, kTb, 2, 0, 0, false, 2>(g, stream, map_a, map_b, map_c, e, schedule);
        return launch<E, kTa, kTb, kCluster>(g, stream, map_a, map_b, map_c, e, schedule);
      });
    } else {
      if (loads != 0) {
        if constexpr (kCluster == 1 && !Promote) {
          return dispatch_loads(loads, [&](auto l) -> Status {
            constexpr int kLoads = decltype(l)::value;
            if (form.stream_k)
              return launch<E, false, true, 1, false, kLoads, true>(g, stream, map_a, map_b, map_c, e, schedule,
                                                                    loaded_operands(g), tail);
            return launch<E, false, true, 1, false, kLoads>(g, stream, map_a, map_b, map_c, e, schedule,
                                                            loaded_operands(g));
          });
        }
        return {StatusCode::InternalError, "wgmma_ws: loaded operands in a cluster or a split run"};
      }
      if (!g.trans_b) return {StatusCode::InternalError, "wgmma_ws: a tf32 B reached the kernel MN-major"};
      if (register_a) {
        if constexpr (!Promote && kCluster == 2)
          if (form.stream_k)
            return launch<E, true, true, 2, false, 0, true>(g, stream, map_a, map_b, map_c, e, schedule, {}, tail);
        if constexpr (!Promote) return launch<E, true, true, kCluster>(g, stream, map_a, map_b, map_c, e, schedule);
        return {StatusCode::InternalError, "wgmma_ws: tf32 A in registers in a split run"};
      }
      if constexpr (!Promote)
        if (form.stream_k)
          return launch<E, false, true, kCluster, false, 0, true>(g, stream, map_a, map_b, map_c, e, schedule, {}, tail);
      if constexpr (Promote)
        if (options.promote_quarters)
          return launch<E, false, true, kCluster, kPromoteQuarters>(g, stream, map_a, map_b, map_c, e, schedule);
      return launch<E, false, true, kCluster, Promote ? kPromoteHalves : 0>(g, stream, map_a, map_b, map_c, e, schedule);
    }
  });
}

// ---- what run() does before the kernel -------------------------------------------------
// An operand TMA can address in the layout the kernel reads goes straight in. Otherwise it
// is copied into a workspace whose rows start every 16 bytes (seed 001's memory padding):
//  - padded: rows as they are (about 2 x its bytes of traffic), for a base or row pitch
//    that is not a multiple of 16 bytes;
//  - K-major: a tf32 operand whose K is not contiguous, transposed on the way
//    (operand_staging.cuh; the tf32 tensor cores have no MN-major form);
//  - split (3xTF32): every operand, K-major, as [big | small] tf32 parts.
// Or, with GEMMLAB_WGMMA_OPERANDS=cp_async, a tf32 operand that would be padded or made
// K-major is not copied: the producer loads it itself (Loaded; needs only 4-byte words).
enum class Copy : std::uint8_t { None, Padded, KMajor, Split, Loaded };

template <class E>
std::int64_t tma_pitch(std::int64_t cols) {
  constexpr std::int64_t kPerRow = 16 / E::kBytes;
  return (cols + kPerRow - 1) / kPerRow * kPerRow;
}
constexpr std::size_t kWorkspaceAlignment = 256;
inline std::size_t aligned(std::size_t bytes) {
  return (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
}

struct OperandPlan {
  Copy copy = Copy::None;
  staging::StagedLayout layout{};  // of a K-major or split copy
  std::size_t bytes = 0;     // of its workspace, a multiple of kWorkspaceAlignment
};

struct Plan {
  OperandPlan a, b;
  bool split = false;
  std::size_t bytes() const { return a.bytes + b.bytes; }
  int loads() const { return (a.copy == Copy::Loaded ? kLoadA : 0) | (b.copy == Copy::Loaded ? kLoadB : 0); }
};

// `k_major`: op(X)'s K is contiguous; `rows`: m for A, n for B; `may_load`: the producer
// may load an operand TMA cannot take (tf32, GEMMLAB_WGMMA_OPERANDS=cp_async).
template <class E>
OperandPlan plan_operand(const TmaMatrix& view, bool k_major, std::int64_t rows, std::int64_t k, bool split,
                         bool may_load, const char* name) {
  OperandPlan o;
  const bool tma_ok = tma_requirements(view, name).is_ok();
  if (split) {
    o.copy = Copy::Split;
    o.layout = {static_cast<int>((k + kBK<E> - 1) / kBK<E> * kBK<E>), 2};
  } else if (may_load && (!k_major || !tma_ok) && reinterpret_cast<std::uintptr_t>(view.base) % 4 == 0) {
    o.copy = Copy::Loaded;
    return o;
  } else if (!E::kMnMajor && !k_major) {
    o.copy = Copy::KMajor;
    o.layout = {static_cast<int>(tma_pitch<E>(k)), 1};
  } else if (!tma_ok) {
    o.copy = Copy::Padded;
    o.bytes = aligned(static_cast<std::size_t>(view.rows) * tma_pitch<E>(static_cast<std::int64_t>(view.cols)) *
                      E::kBytes);
    return o;
  } else {
    return o;
  }
  o.bytes = aligned(o.layout.bytes(static_cast<int>(rows)));
  return o;
}

// tf32 A stored k x m goes into registers (no copy) unless another form is asked for
// (GEMMLAB_WGMMA_TF32_MN=copy, GEMMLAB_WGMMA_OPERANDS=cp_async, 3xTF32's split) or TMA
// cannot address it (an unaligned base or row pitch: then it is copied K-major).
template <class E>
bool a_in_registers(const RowMajorGemm& g, bool split, const Options& o) {
  return !E::kMnMajor && !split && o.tf32_registers && !o.load_operands && g.trans_a &&
         tma_requirements(tma_a<E>(g), "A").is_ok();
}

// The problem the kernel runs for the canonical problem `g`. tf32 wgmma reads A from
// registers in any layout but B only K-major from shared memory: where B's K is strided and
// A's is not (row-major NN), the kernel computes C^T = B^T A^T instead (`c_transposed`),
// whose A (B^T of the problem) goes into registers, and no operand is copied.
template <class E>
RowMajorGemm kernel_problem(const RowMajorGemm& g, bool split, const Options& o, bool& c_transposed) {
  c_transposed = false;
  if (g.trans_a || g.trans_b) return g;  // A goes into registers as it is, or B is K-major
  const RowMajorGemm t{g.n, g.m, g.k, true, true, g.b, g.ldb, g.a, g.lda, g.c, g.ldc, g.alpha, g.beta};
  if (!a_in_registers<E>(t, split, o)) return g;
  c_transposed = true;
  return t;
}

template <class E>
Plan make_plan(const RowMajorGemm& g, bool split, const Options& options) {
  Plan plan;
  plan.split = split;
  const bool may_load = options.load_operands && E::kBytes == 4 && !E::kMnMajor;
  if (!a_in_registers<E>(g, split, options))
    plan.a = plan_operand<E>(tma_a<E>(g), !g.trans_a, g.m, g.k, split, may_load, "A");
  plan.b = plan_operand<E>(tma_b<E>(g), g.trans_b, g.n, g.k, split, may_load, "B");
  return plan;
}

// The storage type of a padded copy: 16-bit elements move as raw halves.
template <class E>
using StorageOf = std::conditional_t<E::kBytes == 2, std::uint16_t, float>;

// A padded copy of one operand into `dst` (launched by stage_operands, with the other
// operand's in the same grid), and the problem pointed at it.
template <class E>
staging::RepitchJob<StorageOf<E>> padded_copy(const TmaMatrix& view, const void*& data, std::int64_t& ld,
                                               unsigned char* dst) {
  using T = StorageOf<E>;
  const std::int64_t pitch = tma_pitch<E>(static_cast<std::int64_t>(view.cols));
  const staging::RepitchJob<T> job{static_cast<const T*>(data), ld, reinterpret_cast<T*>(dst), pitch,
                                   static_cast<int>(view.rows), static_cast<int>(view.cols)};
  data = dst;
  ld = pitch;
  return job;
}

// Enqueues the K-major (or split) copy of one operand into `dst` and points the problem at it.
template <class E>
Status k_major_copy(const OperandPlan& o, bool k_major, std::int64_t rows, std::int64_t k, const void*& data,
                    std::int64_t& ld, bool& trans, bool k_major_trans, unsigned char* dst, Stream stream) {
  if constexpr (E::kTma == TmaElement::F32) {
    GEMMLAB_TRY(staging::stage_k_major(static_cast<const float*>(data), ld, k_major, static_cast<int>(rows),
                                       static_cast<int>(k), o.copy == Copy::Split, o.layout,
                                       reinterpret_cast<float*>(dst), stream));
    data = dst;
    ld = o.layout.pitch();
    trans = k_major_trans;  // the copy is K-major
    return Status::ok();
  } else {
    return {StatusCode::InternalError, "wgmma_ws: K-major staging is for f32 operands"};
  }
}

// The workspace of one rung: grown by prepare(), only read by run().
struct Workspace {
  DeviceMemory memory;     // the operand copies
  StreamKWorkspace tail;   // the stream-K tail's partials and counters
  // Room for the stream-K tail of a grid of up to `blocks`; new counters start at zero.
  Status reserve_tail(int blocks) {
    const std::size_t partial_bytes = kPartialsPerBlock * static_cast<std::size_t>(blocks) * kTileFloats * sizeof(float);
    if (tail.partials.bytes() < partial_bytes) {
      tail.partials = DeviceMemory{};
      GEMMLAB_TRY(DeviceMemory::allocate(partial_bytes, tail.partials));
    }
    const std::size_t counter_bytes = static_cast<std::size_t>(blocks) * sizeof(int);
    if (tail.arrived.bytes() < counter_bytes) {
      tail.arrived = DeviceMemory{};
      GEMMLAB_TRY(DeviceMemory::allocate(counter_bytes, tail.arrived));
      CUDA_CHECK(cudaMemset(tail.arrived.data(), 0, counter_bytes));
      CUDA_CHECK(cudaDeviceSynchronize());  // before a kernel on any stream reads them
    }
    return Status::ok();
  }
  Status reserve(std::size_t bytes) {
    if (bytes <= memory.bytes()) return Status::ok();
    memory = DeviceMemory{};  // free the old block before taking the larger one
    const Status s = DeviceMemory::allocate(bytes, memory);
    if (s.is_ok()) return s;
    char size[64];
    std::snprintf(size, sizeof size, "%.1f MB", static_cast<double>(bytes) / 1e6);
    return {s.code(), std::string("wgmma: the workspace for the operand copies (") + size + ") could not be allocated: " +
                          s.message()};
  }
};

template <class E, bool Split = false>
Status prepare(const GemmProblem& p, Workspace& w) {
  if (p.m == 0 || p.n == 0 || p.k == 0) return Status::ok();
  Options options;
  GEMMLAB_TRY(read_options(options));
  bool c_transposed = false;
  const RowMajorGemm g = kernel_problem<E>(canonicalize(p), Split, options, c_transposed);
  const Plan plan = make_plan<E>(g, Split, options);
  if (form_of(g, options, plan.loads(), Split, !E::kMnMajor, ceil_div(g.k, kBK<E>), a_in_registers<E>(g, Split, options),
              c_transposed)
          .stream_k) {  // a grid of at most one block per SM
    int device = 0, sms = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    GEMMLAB_TRY(w.reserve_tail(sms));
  }
  return w.reserve(plan.bytes());
}

// Enqueues the plan's copies into the workspace (sized by prepare()) and points `g` at them.
template <class E>
Status stage_operands(RowMajorGemm& g, const Plan& plan, const Workspace& w, Stream stream) {
  if (plan.bytes() > w.memory.bytes())
    return {StatusCode::InternalError, "wgmma: run() before prepare() sized the workspace for this problem"};
  auto* base = static_cast<unsigned char*>(w.memory.data());
  const std::int64_t k = g.k;
  const auto k_major = [](const OperandPlan& o) { return o.copy == Copy::KMajor || o.copy == Copy::Split; };
  if (k_major(plan.a))
    GEMMLAB_TRY(k_major_copy<E>(plan.a, !g.trans_a, g.m, k, g.a, g.lda, g.trans_a, false, base, stream));
  if (k_major(plan.b))
    GEMMLAB_TRY(k_major_copy<E>(plan.b, g.trans_b, g.n, k, g.b, g.ldb, g.trans_b, true, base + plan.a.bytes, stream));
  // Padded copies: both operands in one grid (repitch_kernel).
  staging::RepitchJob<StorageOf<E>> jobs[2] = {};
  int n = 0;
  if (plan.a.copy == Copy::Padded) jobs[n++] = padded_copy<E>(tma_a<E>(g), g.a, g.lda, base);
  if (plan.b.copy == Copy::Padded) jobs[n++] = padded_copy<E>(tma_b<E>(g), g.b, g.ldb, base + plan.a.bytes);
  if (n > 0) GEMMLAB_TRY(staging::repitch_rows(jobs[0], jobs[1], stream));
  return Status::ok();
}

template <class E, bool Split = false>
Status run(const GemmProblem& p, Stream stream, const Workspace& w) {
  Options options;
  GEMMLAB_TRY(read_options(options));
  bool c_transposed = false;
  RowMajorGemm g = kernel_problem<E>(canonicalize(p), Split, options, c_transposed);
  const Plan plan = make_plan<E>(g, Split, options);
  const std::int64_t k = g.k;
  GEMMLAB_TRY(stage_operands<E>(g, plan, w, stream));
  if constexpr (!Split) {
    return run_canonical<E>(g, k, {ceil_div(k, kBK<E>), 1, 0}, stream, plan.loads(), &w.tail, c_transposed);
  } else {
    const int segment = plan.a.layout.segment;
    return run_canonical<E, /*Promote=*/true>(g, 2LL * segment, {segment / kBK<E>, 3, segment}, stream);
  }
}

inline const char* describe_copy(Copy c) {
  switch (c) {
    case Copy::None: return "";
    case Copy::Padded: return "a padded copy";
    case Copy::KMajor: return "a K-major (transposed) copy";
    case Copy::Split: return "a split into tf32 big and small parts";
    case Copy::Loaded: return "";
  }
  return "";
}

// " after a padded copy of A (67.1 MB moved)", ...: what explain appends to the kernel's
// name: which copies run before it and their traffic (each copy reads its source and writes
// the workspace; a split reads half what it writes).
inline std::string describe_copies(const Plan& plan) {
  const auto copied = [](const OperandPlan& o) { return o.copy != Copy::None && o.copy != Copy::Loaded; };
  const auto moved = [&](const OperandPlan& o) {
    if (!copied(o)) return 0.0;
    return static_cast<double>(o.bytes) * (o.copy == Copy::Split ? 1.5 : 2.0);
  };
  const double bytes = moved(plan.a) + moved(plan.b);
  std::string copies;
  if (copied(plan.a) && plan.a.copy == plan.b.copy)
    copies = std::string(" after ") + describe_copy(plan.a.copy) + " of A and B";
  else if (copied(plan.a) || copied(plan.b)) {
    copies = " after ";
    if (copied(plan.a)) copies += std::string(describe_copy(plan.a.copy)) + " of A";
    if (copied(plan.a) && copied(plan.b)) copies += " and ";
    if (copied(plan.b)) copies += std::string(describe_copy(plan.b.copy)) + " of B";
  }
  if (bytes > 0) {
    char text[48];
    std::snprintf(text, sizeof text, " (%.1f MB moved)", bytes / 1e6);
    copies += text;
  }
  return copies;
}

// " (clusters of 2, TMA-store epilogue, 128 blocks)", " (no clusters, B loaded by cp.async,
// ...)", "(..., stream-K tail, 132 blocks)": the form run() launches for this problem.
inline std::string describe_form(const Form& f, bool stream_k_tail, unsigned blocks) {
  std::string text = f.cluster_n > 1   ? " (clusters of 2 x 2 sharing A and B, "
                     : f.cluster_m > 1 ? " (clusters of " + std::to_string(f.cluster_m) + ", "
                                       : " (no clusters, ";
  if (f.loads != 0)
    text += std::string(f.loads == (kLoadA | kLoadB) ? "A and B" : f.loads == kLoadA ? "A" : "B") +
            " loaded by cp.async, ";
  if (f.register_a) text += "A read M-major into registers, ";
  if (f.c_transposed) text += "computing C^T = B^T A^T, ";
  text += f.tma_epilogue    ? "TMA-store epilogue, "
          : f.bulk_epilogue ? "bulk-copied epilogue, "
          : f.warp_epilogue ? "warp-stored epilogue, "
                            : "epilogue from registers, ";
  if (stream_k_tail) text += "stream-K tail, ";
  return text + std::to_string(blocks) + " blocks)";
}

// One instantiation of the kernel, as a type (for kernel_info's generic lambda).
template <bool TransA, bool TransB, int ClusterM, int Promote, int Loads, bool StreamK, int ClusterN = 1>
struct Instance {
  static constexpr bool kTransA = TransA, kTransB = TransB, kStreamK = StreamK;
  static constexpr int kClusterM = ClusterM, kPromote = Promote, kLoads = Loads, kClusterN = ClusterN;
};

template <class E, bool Split = false>
Status kernel_info(const GemmProblem& p, KernelInfo& out, const char* name) {
  Options options;
  GEMMLAB_TRY(read_options(options));
  bool c_transposed = false;
  const RowMajorGemm g = kernel_problem<E>(canonicalize(p), Split, options, c_transposed);
  const Plan plan = make_plan<E>(g, Split, options);
  const bool register_a = a_in_registers<E>(g, Split, options);
  const int k_tiles = ceil_div(g.k, kBK<E>);  // of the one-pass runs the stream-K tail takes
  const Form form = form_of(g, options, plan.loads(), Split, !E::kMnMajor, k_tiles, register_a, c_transposed);
  const std::string copies = describe_copies(plan);
  // The kernel run() launches: with the stream-K option, the tail instantiation where there is
  // a leftover round, the plain one otherwise.
  const auto describe = [&](auto instance, bool trans_a, bool trans_b) -> Status {
    using I = decltype(instance);
    LaunchAttributes attributes;
    cudaLaunchConfig_t config;
    stream_k::Schedule schedule;
    GEMMLAB_TRY((launch_config<E, I::kTransA, I::kTransB, I::kClusterM, I::kPromote, I::kLoads, I::kStreamK,
                               I::kClusterN>(g, k_tiles, attributes, config, schedule)));
    const bool tail = I::kStreamK && schedule.has_tail();
    const auto kernel =
        tail ? wgmma_ws_kernel<E, I::kTransA, I::kTransB, I::kClusterM, I::kPromote, I::kLoads, I::kStreamK, I::kClusterN>
             : wgmma_ws_kernel<E, I::kTransA, I::kTransB, I::kClusterM, I::kPromote, I::kLoads, false, I::kClusterN>;
    const std::string promote = I::kPromote == kPromoteQuarters ? ", big·big sums promoted by m64n64 quarters"
                                : I::kPromote == kPromoteHalves  ? ", big·big sums promoted by m64n128 halves"
                                                                 : "";
    return describe_kernel(out, kernel,
                           kernel_name(name, trans_a, trans_b) + describe_form(form, tail, config.gridDim.x) + copies +
                               promote,
                           kThreads, kSmemBytes);
  };
  return dispatch_cluster(form.cluster_m, [&](auto cluster) -> Status {
    constexpr int kCluster = decltype(cluster)::value;
    if constexpr (E::kMnMajor) {
      return dispatch_trans(g.trans_a, g.trans_b, [&](auto ta, auto tb) {
        constexpr bool kTa = decltype(ta)::value, kTb = decltype(tb)::value;
        if constexpr (kCluster == 2)
          if (form.stream_k) return describe(Instance<kTa, kTb, 2, false, 0, true>{}, kTa, kTb);
        if constexpr (kCluster == 2 && !kTa)
          if (form.cluster_n == 2) return describe(Instance<false, kTb, 2, 0, 0, false, 2>{}, kTa, kTb);
        return describe(Instance<kTa, kTb, kCluster, false, 0, false>{}, kTa, kTb);
      });
    } else {
      if constexpr (kCluster == 1 && !Split)
        if (form.loads != 0)
          return dispatch_loads(form.loads, [&](auto l) {
            constexpr int kLoads = decltype(l)::value;
            if (form.stream_k) return describe(Instance<false, true, 1, false, kLoads, true>{}, g.trans_a, g.trans_b);
            return describe(Instance<false, true, 1, false, kLoads, false>{}, g.trans_a, g.trans_b);
          });
      if constexpr (!Split && kCluster == 2)
        if (form.register_a && form.stream_k)
          return describe(Instance<true, true, 2, 0, 0, true>{}, g.trans_a, g.trans_b);
      if constexpr (!Split)
        if (form.register_a) return describe(Instance<true, true, kCluster, 0, 0, false>{}, g.trans_a, g.trans_b);
      if constexpr (!Split)
        if (form.stream_k) return describe(Instance<false, true, kCluster, false, 0, true>{}, false, true);
      if constexpr (Split)
        if (options.promote_quarters) return describe(Instance<false, true, kCluster, kPromoteQuarters, 0, false>{}, false, true);
      return describe(Instance<false, true, kCluster, Split ? kPromoteHalves : 0, 0, false>{}, false, true);
    }
  });
}

inline Config config_of(int bk) {
  return {{{"BM", kBM}, {"BN", kBN}, {"BK", bk}, {"stages", kStages}, {"consumers", kConsumers},
           {"threads", kThreads}, {"group_m", kGroupM}}};
}

inline Traffic model_of(const GemmProblem& p) {
  Traffic t = minimum_traffic(p);
  set_loads_per_fma(t, p, 1.0 / kBN + 1.0 / kBM);
  t.threads_per_block = kThreads;
  t.smem_bytes_per_block = kSmemBytes;
  return t;
}

}  // namespace gemmlab::cuda::wgmma_ws
