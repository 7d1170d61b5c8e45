// The epilogue: a consumer warpgroup's 64 x 256 accumulators (alpha * acc + beta * C) out to
// C. The forms kept, chosen per problem by form_of (forms.hpp):
//  - TMA stores through shared memory where TMA can address C (store_tile_tma, and
//    store_tile_tma_transposed for a kernel that computes C^T), overlapping the next tile's
//    loads;
//  - warp stores through shared memory for a C that TMA cannot address (store_tile_warps),
//    in the kernels where they fit in registers;
//  - stores from registers (store_tile_registers) in the other kernels for such a C, and for
//    the chunks the staged forms cannot write (a chunk straddling C's last column).
// Measured on an H100 (bf16 NN, 4096^3 / 8192^3, ratio to cuBLAS in the same run): epilogue
// from registers 0.94 / 0.97; TMA epilogue 0.96 / 1.00.
// C is stored as Out (the element type's Output): float, or bf16 / f16, into which
// alpha * acc + beta * C, computed in float32, is rounded once.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cuda/ptx>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cuda/arch/cluster.cuh"
#include "cuda/arch/smem.cuh"
#include "cuda/hopper/config.cuh"
#include "cuda/arch/c_element.cuh"

namespace gemmlab::cuda::hopper {

namespace ptx = ::cuda::ptx;

// C's elements in its storage type (arch/c_element.cuh), by pairs where aligned.
template <class Out>
using CPair = typename arch::CElement<Out>::Pair;
template <class Out>
__device__ __forceinline__ float2 load_c_pair(const Out* p) {
  return arch::CElement<Out>::widen2(*reinterpret_cast<const CPair<Out>*>(p));
}

// C(row, col..col+1) <- alpha * acc + beta * C, predicated; one paired store where aligned.
template <class Out>
__device__ __forceinline__ void store_pair(const Epilogue& e, int row, int col, float v0, float v1) {
  if (row >= e.m || col >= e.n) return;
  Out* p = static_cast<Out*>(e.c) + static_cast<long long>(row) * e.ldc + col;
  const bool both = col + 1 < e.n;
  if (both && (reinterpret_cast<std::uintptr_t>(p) % sizeof(CPair<Out>) == 0)) {
    float2 r = make_float2(e.alpha * v0, e.alpha * v1);
    if (e.beta != 0.0f) {
      const float2 old = load_c_pair(p);
      r.x = fmaf(e.beta, old.x, r.x);
      r.y = fmaf(e.beta, old.y, r.y);
    }
    *reinterpret_cast<CPair<Out>*>(p) = arch::CElement<Out>::narrow2(r);
    return;
  }
  using C = arch::CElement<Out>;
  p[0] = C::narrow(e.beta != 0.0f ? fmaf(e.beta, C::widen(p[0]), e.alpha * v0) : e.alpha * v0);
  if (both) p[1] = C::narrow(e.beta != 0.0f ? fmaf(e.beta, C::widen(p[1]), e.alpha * v1) : e.alpha * v1);
}

// The same for a kernel that computes C^T (e.c_transposed; tf32, float C): C(col, row) and
// C(col + 1, row), a row of C apart. A warp's store covers 8 consecutive columns of 4 rows:
// 4 whole sectors.
__device__ __forceinline__ void store_pair_transposed(const Epilogue& e, int row, int col, float v0, float v1) {
  if (row >= e.m || col >= e.n) return;
  float* p = static_cast<float*>(e.c) + static_cast<long long>(col) * e.ldc + row;
  p[0] = e.beta != 0.0f ? fmaf(e.beta, p[0], e.alpha * v0) : e.alpha * v0;
  if (col + 1 < e.n) p[e.ldc] = e.beta != 0.0f ? fmaf(e.beta, p[e.ldc], e.alpha * v1) : e.alpha * v1;
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

// Chunk q (128 bytes of Out from `col`: 32 float columns, 64 two-byte ones) of a consumer
// warpgroup's 64 x 256 tile (registers as wgmma leaves them) into a 64-row staging buffer in
// the 128-byte swizzle, in C's storage type: alpha * acc, plus beta * C where `add_c` (read
// here by pairs: a TMA-addressable C). float2 writes
// are served a half-warp at a time, and a half-warp's lanes hold rows 0-3 of an 8-row atom,
// whose swizzle flips only the two low bits of the chunk index: 16 of the 32 banks, four
// wavefronts per warp instead of two (measured with Nsight Compute: 4.4 per request, about
// 1.5 % of a bf16 4096^3 run). (With permuted rows, lanes 16 apart write rows 16 apart:
// two-way conflicts on top.)
// With SharedStores the writes are st.shared at 32-bit addresses; without, generic stores
// with 64-bit ones (the compiler cannot tell that `buffer` is shared memory). The
// warp-stored epilogue takes st.shared (with its reads, bf16 4095^3 about 2 us faster on an
// H100); the TMA epilogue keeps the generic stores: with
// shared ones bf16 4096^3 did not move, and a tf32 stream-K kernel spilled 48 bytes.
// A 2-byte C's pairs are 4-byte words: a quarter-warp's 4 lanes fill one 16-byte chunk of
// each of 8 rows, whose swizzled chunks differ, so one wavefront per warp.
template <class Out, bool PermutedRows, bool SharedStores = false>
__device__ __forceinline__ void stage_chunk(const float (&r)[128], const Epilogue& e, unsigned char* buffer, int q,
                                            int row0, int col, bool add_c) {
  constexpr int kGroups = kEpilogueCols<Out> / 8;  // accumulator groups of 8 columns per chunk
  const int lane = threadIdx.x % 32, warp = (threadIdx.x % kWarpgroup) / 32;
#pragma unroll
  for (int jj = 0; jj < kGroups; ++jj) {
    const int j = q * kGroups + jj;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = accumulator_row<PermutedRows>(warp, lane, h);
      float2 v = make_float2(e.alpha * r[4 * j + 2 * h], e.alpha * r[4 * j + 2 * h + 1]);
      if (add_c) {
        const int grow = row0 + row, gcol = col + 8 * jj + 2 * (lane % 4);
        if (grow < e.m) {  // gcol + 1 < n: this chunk lies inside C
          const float2 old = load_c_pair(static_cast<const Out*>(e.c) + static_cast<long long>(grow) * e.ldc + gcol);
          v.x = fmaf(e.beta, old.x, v.x);
          v.y = fmaf(e.beta, old.y, v.y);
        }
      }
      // Byte sizeof(Out) * (8jj + 2(lane%4)) of the row, in its 16-byte chunk swizzled by the
      // row's place in its 8-row atom.
      const int byte = static_cast<int>(sizeof(Out)) * (8 * jj + 2 * (lane % 4));
      const int at = row * kRowBytes + ((byte / 16) ^ (row % 8)) * 16 + byte % 16;
      if constexpr (SharedStores && std::is_same_v<Out, float>)
        arch::st_shared_v2_f32(arch::smem_address(buffer) + at, v.x, v.y);
      else
        *reinterpret_cast<CPair<Out>*>(buffer + at) = arch::CElement<Out>::narrow2(v);
    }
  }
}

// Chunk q (Cols columns from `col`) from registers, predicated element by element: for a
// chunk that straddles C's last column, where a TMA store would write past it.
template <class Out, bool PermutedRows, int Cols>
__device__ __forceinline__ void store_chunk_from_registers(const float (&r)[128], const Epilogue& e, int q, int row0,
                                                           int col) {
  const int lane = threadIdx.x % 32, warp = (threadIdx.x % kWarpgroup) / 32;
#pragma unroll
  for (int jj = 0; jj < Cols / 8; ++jj) {
    const int j = q * (Cols / 8) + jj;
    const int c = col + 8 * jj + 2 * (lane % 4);
    store_pair<Out>(e, row0 + accumulator_row<PermutedRows>(warp, lane, 0), c, r[4 * j], r[4 * j + 1]);
    store_pair<Out>(e, row0 + accumulator_row<PermutedRows>(warp, lane, 1), c, r[4 * j + 2], r[4 * j + 3]);
  }
}

// The chunk of a tile that straddles C's last column (q, known only at run time), from
// registers: one branch per chunk (Q, Q + 1, ...), since registers can only be named by
// constants.
template <class Out, bool PermutedRows, int Q = 0>
__device__ __forceinline__ void store_straddling_chunk(const float (&r)[128], const Epilogue& e, int q, int row0,
                                                       int col) {
  if constexpr (Q + 1 < kBN / kEpilogueCols<Out>) {
    if (q != Q) {
      store_straddling_chunk<Out, PermutedRows, Q + 1>(r, e, q, row0, col);
      return;
    }
  }
  store_chunk_from_registers<Out, PermutedRows, kEpilogueCols<Out>>(r, e, Q, row0, col);
}

// Chunk q of a consumer warpgroup's tile, written into a free staging buffer by
// stage(buffer) and stored by TMA from thread 0 of the warpgroup at (col, row0).
template <class Stage>
__device__ __forceinline__ void store_chunk_tma(int q, const CUtensorMap* map_c, unsigned char* buffers, int row0,
                                                int col, int warpgroup, Stage&& stage) {
  const bool issuer = threadIdx.x % kWarpgroup == 0;
  const int barrier = 1 + warpgroup;  // named barrier 0 is __syncthreads
  unsigned char* buffer = free_epilogue_buffer(buffers, q, issuer, barrier);
  stage(buffer);
  ptx::fence_proxy_async(ptx::space_shared);  // the writes, visible to the TMA engine
  arch::named_barrier_sync(barrier, kWarpgroup);
  if (issuer) {
    const std::int32_t at[2] = {col, row0};
    ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, map_c, at, buffer);
    ptx::cp_async_bulk_commit_group();
  }
}

// The TMA-store epilogue of one consumer warpgroup: its 64 x 256 tile of C goes out 128
// bytes of each row at a time. The warpgroup stages a chunk (stage_chunk), and one thread stores it
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
// Compute and three interleaved rounds on an H100). StraddleAfter
// keeps every accumulator live to the end of the loop, which spilled in the 3xTF32 kernels:
// the 16-bit types only.
template <class Out, bool PermutedRows, bool AddC, bool StraddleAfter>
__device__ __forceinline__ void store_chunks_tma(const float (&r)[128], const Epilogue& e, const CUtensorMap* map_c,
                                                 unsigned char* buffers, int row0, int col0, int warpgroup) {
  constexpr int kCols = kEpilogueCols<Out>;
#pragma unroll
  for (int q = 0; q < kBN / kCols; ++q) {
    const int col = col0 + q * kCols;
    if (col + kCols > e.n) {
      // (No `break`: with one, ptxas put the accumulators on the stack.)
      if (!StraddleAfter && col < e.n) store_chunk_from_registers<Out, PermutedRows, kCols>(r, e, q, row0, col);
      continue;
    }
    store_chunk_tma(q, map_c, buffers, row0, col, warpgroup,
                    [&](unsigned char* buffer) { stage_chunk<Out, PermutedRows>(r, e, buffer, q, row0, col, AddC); });
  }
  if constexpr (StraddleAfter) {
    const int cols_left = e.n - col0;  // > 0: the tile starts inside C
    if (cols_left < kBN && cols_left % kCols != 0) {
      const int q = cols_left / kCols;
      store_straddling_chunk<Out, PermutedRows>(r, e, q, row0, col0 + q * kCols);
    }
  }
}

template <class Out, bool PermutedRows, bool StraddleAfter>
__device__ __forceinline__ void store_tile_tma(const float (&r)[128], const Epilogue& e, const CUtensorMap* map_c,
                                               unsigned char* buffers, int row0, int col0, int warpgroup) {
  if (row0 >= e.m) return;  // the whole warpgroup's rows lie below C
  if (e.beta != 0.0f)
    store_chunks_tma<Out, PermutedRows, true, StraddleAfter>(r, e, map_c, buffers, row0, col0, warpgroup);
  else
    store_chunks_tma<Out, PermutedRows, false, StraddleAfter>(r, e, map_c, buffers, row0, col0, warpgroup);
}

// ---- the held chunks: beta = 0 --------------------------------------------------------------
// Stored at the end of its tile, C costs the tensor cores the whole epilogue (a probe that
// skipped storing C ran 4-5 % faster at 4096^3). The last kHeldChunks chunks of a tile fit in
// registers beside the accumulators (16 words a chunk: 64 two-byte or 32 float columns of 64
// rows over 128 threads): a tile that needs no C read and no chunk from registers stores
// its first chunks (store_first_chunks), keeps alpha * acc of the others in C's type in
// `held` (hold_chunks), and the next tile's MMAs start; the held chunks go out one after
// each of the next tile's first K steps, while the tensor cores work (store_held_chunk;
// kernel.cuh's consume).
// How many: two chunks of a 2-byte C; one of a float C, whose kernels also carry the
// warp-stored epilogue, or in the stream-K kernels, which also carry the fix-up (with two,
// they spilled 8-12 bytes).
template <class Out, bool StreamK>
constexpr int kHeldChunks = sizeof(Out) == 2 && !StreamK ? 2 : 1;
constexpr int kChunkWords = kEpilogueRows * kRowBytes / 4 / kWarpgroup;  // a thread's words of a chunk: 16
template <int Chunks>
using HeldChunks = std::uint32_t[Chunks * kChunkWords];

// Whether a warpgroup's tile at column col0 can be held: TMA-stored as C's rows, beta = 0,
// and no chunk straddling C's last column.
__device__ __forceinline__ bool holdable(const Epilogue& e, int col0) {
  return e.tma_store && !e.c_transposed && e.beta == 0.0f && col0 + kBN <= e.n;
}

template <class Out, int Chunks>
constexpr int kFirstHeldChunk = kBN / kEpilogueCols<Out> - Chunks;
template <class Out>
constexpr int kPairWords = static_cast<int>(sizeof(CPair<Out>) / sizeof(std::uint32_t));  // 2 float, 1 two-byte
template <class Out>
constexpr int kChunkPairs = kChunkWords / kPairWords<Out>;  // pair 2j + h: accumulators 4j + 2h, 4j + 2h + 1

template <class Out, int Chunks>
__device__ __forceinline__ void store_first_chunks(const float (&r)[128], const Epilogue& e, const CUtensorMap* map_c,
                                                   unsigned char* buffers, int row0, int col0, int warpgroup) {
#pragma unroll
  for (int q = 0; q < kFirstHeldChunk<Out, Chunks>; ++q) {
    const int col = col0 + q * kEpilogueCols<Out>;
    store_chunk_tma(q, map_c, buffers, row0, col, warpgroup,
                    [&](unsigned char* buffer) { stage_chunk<Out, false>(r, e, buffer, q, row0, col, false); });
  }
}

// Held words kPairWords * i ...: pair kChunkPairs * kFirstHeldChunk + i, in C's type.
template <class Out, int Chunks>
__device__ __forceinline__ void hold_chunks(const float (&r)[128], float alpha, HeldChunks<Chunks>& held) {
  constexpr int kFirstPair = kChunkPairs<Out> * kFirstHeldChunk<Out, Chunks>;
#pragma unroll
  for (int i = 0; i < Chunks * kChunkPairs<Out>; ++i) {
    const int p = kFirstPair + i;
    const CPair<Out> pair = arch::CElement<Out>::narrow2(make_float2(alpha * r[2 * p], alpha * r[2 * p + 1]));
    std::memcpy(&held[kPairWords<Out> * i], &pair, sizeof pair);
  }
}

// Held chunk q (kFirstHeldChunk <= q), staged as stage_chunk would. q must be a constant where
// it is called (unrolled loops): registers can only be named by constants.
template <class Out, int Chunks>
__device__ __forceinline__ void store_held_chunk(const HeldChunks<Chunks>& held, int q, const CUtensorMap* map_c,
                                                 unsigned char* buffers, int row0, int col0, int warpgroup) {
  constexpr int kGroups = kEpilogueCols<Out> / 8;
  const int lane = threadIdx.x % 32, warp = (threadIdx.x % kWarpgroup) / 32;
  store_chunk_tma(q, map_c, buffers, row0, col0 + q * kEpilogueCols<Out>, warpgroup, [&](unsigned char* buffer) {
#pragma unroll
    for (int jj = 0; jj < kGroups; ++jj)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = accumulator_row<false>(warp, lane, h);
        const int byte = static_cast<int>(sizeof(Out)) * (8 * jj + 2 * (lane % 4));
        const int word = kPairWords<Out> * ((q - kFirstHeldChunk<Out, Chunks>) * kChunkPairs<Out> + 2 * jj + h);
        CPair<Out> pair;
        std::memcpy(&pair, &held[word], sizeof pair);
        *reinterpret_cast<CPair<Out>*>(buffer + row * kRowBytes + ((byte / 16) ^ (row % 8)) * 16 + byte % 16) = pair;
      }
  });
}

// The warp-stored epilogue, for a C that TMA cannot address (row pitch or base not a
// multiple of 16 bytes, as at 4095^3; TMA boxes must also start on 16 bytes, so no view of
// such rows works: measured). From registers, such a C cost the bf16 kernel 19 % at
// 4096^3 with pitch 4097 (Nsight Compute on an H100): half the rows are not 8-byte aligned,
// so their pairs go out as scalar stores divergent within each warp. Here the warpgroup
// stages each chunk as for TMA, meets, and each warp stores a quarter of its rows, one
// 128-byte store per row at any alignment (lane l: column col + l; conflict-free reads of
// the swizzled buffer), adding beta * C. The buffers alternate, so one meeting per chunk
// suffices within a tile: a warp that reached it has read the chunk before. As in
// store_chunks_tma, beta is chosen once per tile (AddC): the code runs once per tile and is
// fetched cold, so the path that does not run should not lie between the chunks.
// The chunks are staged in float whatever C's type (alpha * acc is rounded to a 2-byte C only
// once beta * C is added: one rounding, as in the other forms); a 2-byte C's row then takes
// 64-byte stores.
template <class Out, bool PermutedRows, bool AddC>
__device__ __forceinline__ void store_chunks_warps(const float (&r)[128], const Epilogue& e, unsigned char* buffers,
                                                   int row0, int col0, int warpgroup) {
  constexpr int kCols = kEpilogueCols<float>;
  const int lane = threadIdx.x % 32, warp = (threadIdx.x % kWarpgroup) / 32;
  const int barrier = 1 + warpgroup;
  const int rows = min(kEpilogueRows, e.m - row0);  // > 0: store_tile_warps
  const long long step = static_cast<long long>(kWarpgroupWarps) * e.ldc;  // a warp's rows
#pragma unroll
  for (int q = 0; q < kBN / kCols; ++q) {
    const int col = col0 + q * kCols;
    if (col >= e.n) continue;  // (no `break`: store_tile_tma)
    unsigned char* buffer = buffers + (q % kEpilogueBuffers) * kEpilogueBufferBytes;
    stage_chunk<float, PermutedRows, true>(r, e, buffer, q, row0, col, false);
    arch::named_barrier_sync(barrier, kWarpgroup);
    if (col + lane < e.n) {
      const unsigned words = arch::smem_address(buffer) + (lane % 4) * 4;
      Out* c = static_cast<Out*>(e.c) + static_cast<long long>(row0 + warp) * e.ldc + col + lane;
#pragma unroll 4
      for (int row = warp; row < rows; row += kWarpgroupWarps, c += step) {
        float v = arch::ld_shared_f32(words + row * kRowBytes + (((lane / 4) ^ (row % 8)) * 16));
        if constexpr (AddC) v = fmaf(e.beta, arch::CElement<Out>::widen(*c), v);
        *c = arch::CElement<Out>::narrow(v);
      }
    }
  }
  // The next tile may start in either buffer: every warp is done reading.
  arch::named_barrier_sync(barrier, kWarpgroup);
}

template <class Out, bool PermutedRows>
__device__ __forceinline__ void store_tile_warps(const float (&r)[128], const Epilogue& e, unsigned char* buffers,
                                                 int row0, int col0, int warpgroup) {
  if (row0 >= e.m) return;
  if (e.beta != 0.0f) store_chunks_warps<Out, PermutedRows, true>(r, e, buffers, row0, col0, warpgroup);
  else store_chunks_warps<Out, PermutedRows, false>(r, e, buffers, row0, col0, warpgroup);
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
  constexpr int kCols = kEpilogueCols<float>;
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
  constexpr int kBoxBytes = kCols * kRowBytes;  // 32 rows of C by 32 columns: 4 KiB
  static_assert(kEpilogueRows / kCols * kBoxBytes == kEpilogueBufferBytes, "two boxes fill a buffer");
#pragma unroll
  for (int q = 0; q < kBN / kCols; ++q) {
    const int col = col0 + q * kCols;  // C's first row of this chunk
    if (col + kCols > e.n) {  // rows below C, clipped one by one (no `break`: store_tile_tma)
      if (col < e.n) {
#pragma unroll
        for (int jj = 0; jj < kCols / 8; ++jj) {
          const int j = q * (kCols / 8) + jj;
          const int c = col + 8 * jj + 2 * (lane % 4);
          store_pair_transposed(e, row0 + rows[0], c, r[4 * j], r[4 * j + 1]);
          store_pair_transposed(e, row0 + rows[1], c, r[4 * j + 2], r[4 * j + 3]);
        }
      }
      continue;
    }
    unsigned char* buffer = free_epilogue_buffer(buffers, q, issuer, barrier);
#pragma unroll
    for (int jj = 0; jj < kCols / 8; ++jj) {
      const int j = q * (kCols / 8) + jj;
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          const int c_row = 8 * jj + 2 * (lane % 4) + i;  // of the chunk's 32 rows of C
          const int c_col = rows[h];                      // of the warpgroup's 64 columns of C
          float v = e.alpha * r[4 * j + 2 * h + i];
          if (e.beta != 0.0f && row0 + c_col < e.m)
            v = fmaf(e.beta, static_cast<const float*>(e.c)[static_cast<long long>(col + c_row) * e.ldc + row0 + c_col], v);
          const int chunk = ((c_col % kCols) / 4) ^ (c_row % 8);
          *reinterpret_cast<float*>(buffer + (c_col / kCols) * kBoxBytes + c_row * kRowBytes + chunk * 16 +
                                    (c_col % 4) * 4) = v;
        }
    }
    ptx::fence_proxy_async(ptx::space_shared);
    arch::named_barrier_sync(barrier, kWarpgroup);
    if (issuer) {
#pragma unroll
      for (int box = 0; box < kEpilogueRows / kCols; ++box) {
        const std::int32_t at[2] = {row0 + box * kCols, col};
        ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, map_c, at, buffer + box * kBoxBytes);
      }
      ptx::cp_async_bulk_commit_group();
    }
  }
}

// C from registers, pair by pair (store_pair, predicated): for a C that TMA cannot address in
// the kernels without the warp-stored epilogue (A in registers, promoted sums, the stream-K
// tail: there it spilled 200-1300 bytes).
template <class Out, bool PermutedRows>
__device__ __forceinline__ void store_tile_registers(const float (&r)[128], const Epilogue& e, int row0, int col0) {
  const int lane = threadIdx.x % 32, warp = (threadIdx.x % kWarpgroup) / 32;
  const int row_0 = row0 + accumulator_row<PermutedRows>(warp, lane, 0);
  const int row_1 = row0 + accumulator_row<PermutedRows>(warp, lane, 1);
  const int col = col0 + 2 * (lane % 4);
  if constexpr (std::is_same_v<Out, float>)
    if (e.c_transposed) {
#pragma unroll
      for (int j = 0; j < kBN / 8; ++j) {
        store_pair_transposed(e, row_0, col + 8 * j, r[4 * j], r[4 * j + 1]);
        store_pair_transposed(e, row_1, col + 8 * j, r[4 * j + 2], r[4 * j + 3]);
      }
      return;
    }
#pragma unroll
  for (int j = 0; j < kBN / 8; ++j) {
    store_pair<Out>(e, row_0, col + 8 * j, r[4 * j], r[4 * j + 1]);
    store_pair<Out>(e, row_1, col + 8 * j, r[4 * j + 2], r[4 * j + 3]);
  }
}

// A consumer warpgroup's tile of C, stored as Out, by the form the launch chose (e.tma_store,
// e.warp_store, e.c_transposed). PermutedRows: A came from registers (accumulator_row; tf32,
// float C). WarpStore: the kernel has the warp-stored epilogue. StraddleAfter:
// store_chunks_tma.
template <class Out, bool PermutedRows, bool WarpStore, bool StraddleAfter>
__device__ __forceinline__ void store_tile(const float (&r)[128], const Epilogue& e, const CUtensorMap* map_c,
                                           unsigned char* buffers, int row0, int col0, int warpgroup) {
  static_assert(!PermutedRows || std::is_same_v<Out, float>, "A in registers: tf32, float C");
  if constexpr (WarpStore) {
    if (e.warp_store) {
      store_tile_warps<Out, PermutedRows>(r, e, buffers, row0, col0, warpgroup);
      return;
    }
  }
  if (e.tma_store) {
    if constexpr (PermutedRows)
      if (e.c_transposed) {
        store_tile_tma_transposed(r, e, map_c, buffers, row0, col0, warpgroup);
        return;
      }
    store_tile_tma<Out, PermutedRows, StraddleAfter>(r, e, map_c, buffers, row0, col0, warpgroup);
    return;
  }
  store_tile_registers<Out, PermutedRows>(r, e, row0, col0);
}

}  // namespace gemmlab::cuda::hopper
