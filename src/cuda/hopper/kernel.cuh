// The warp-specialised, persistent TMA + wgmma kernel of the wgmma_ws rungs (13-16).
//
// One block per SM walks the 128 x 256 tiles of C in grouped order (kGroupM tile rows at a
// time, so the A rows and B columns in flight stay in L2). Inside it:
//  - the producer, one warp of the last warpgroup, only issues TMA copies of each stage's A
//    and B tiles into a ring of kStages stages (producer.cuh), each completing on a `full`
//    mbarrier with its byte count;
//  - two consumer warpgroups each multiply their 64 rows by the whole B tile (wgmma m64n256,
//    straight from 128-byte swizzled shared memory, or with a tf32 A from registers:
//    consumer.cuh), and hand a stage back on its `empty` mbarrier as soon as the tensor
//    cores are done with it;
//  - the epilogue (epilogue.cuh) writes a tile of C while the producer already loads the next.
// setmaxnreg moves registers from the producer, which needs few, to the consumers (128 f32
// accumulators each).
//
// Template axes: the element type; the operands' layouts in shared memory (TransA: A stored
// k x m, TransB: B stored n x k); ClusterM, blocks per cluster along M (1, or 2 sharing the B
// tile by multicast); Promote, sums promoted into f32 registers (3xTF32's last K pass, every
// FP8 stage: consumer.cuh); StreamK, whole rounds then the stream-K tail, or every unit cut
// by K (fixup.cuh, stream_k.hpp).
// Which instantiation runs: forms.hpp.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cuda/ptx>

#include <cstdint>
#include <type_traits>

#include "cuda/arch/cluster.cuh"
#include "cuda/arch/grid_dependency.cuh"
#include "cuda/arch/smem.cuh"
#include "cuda/arch/target.cuh"
#include "cuda/arch/wgmma.cuh"
#include "cuda/hopper/config.cuh"
#include "cuda/hopper/consumer.cuh"
#include "cuda/hopper/epilogue.cuh"
#include "cuda/hopper/fixup.cuh"
#include "cuda/hopper/lockstep.cuh"
#include "cuda/hopper/producer.cuh"
#include "cuda/hopper/stream_k.hpp"
#include "cuda/tiles/common.cuh"

namespace gemmlab::cuda::hopper {

// The block's shared memory: the ring of stages, the epilogue's staging buffers, the barriers.
struct Smem {
  unsigned char* ring;              // kStages x (A (BM, BK), B (BN, BK)), swizzled
  unsigned char* epilogue_buffers;  // kConsumers x kEpilogueBuffers x (64, 32) of C
  std::uint64_t* full;              // [kStages]: the stage's copies landed
  std::uint64_t* empty;             // [kStages]: every consumer warp of the cluster is done with it
  int* tail_last;                   // the stream-K tail: whether this block's piece arrived last
};

// The producer warp: walks the ring over this cluster's work (whole units, then its pieces
// of the stream-K tail) and, from one lane, fills each stage once the consumers freed it. The
// whole warp walks the ring, so that no lane waits in the final cluster barrier while lane 0
// of its warp still works.
// With `prefetch_c` (beta != 0, C through TMA), the work that ends a tile's K also asks for the
// tile's C in L2, kCPrefetchLead steps before its end. With `lockstep.counters`, each whole
// round after the first starts once every producer has issued the round before (lockstep.cuh).
template <class E, bool TransA, bool TransB, int ClusterM>
__device__ __forceinline__ void produce(const CUtensorMap* map_a, const CUtensorMap* map_b,
                                        const CUtensorMap* map_c, bool prefetch_c, const Smem& s,
                                        const KSchedule& schedule, const stream_k::Schedule& plan,
                                        const Lockstep& lockstep, int cluster, unsigned rank, int tiles_m,
                                        int tiles_n) {
  const bool issuer = threadIdx.x % 32 == 0;
  const int k_steps = schedule.k_tiles * schedule.segments;
  int stage = 0;
  std::uint32_t phase = 0;
  const bool in_step = lockstep.counters != nullptr && issuer;
  const int rounds = plan.rounds();
  int round = 0;  // round-robin units begun
  bool rounds_ended = false;
  const auto end_rounds = [&] {
    if (in_step && !rounds_ended) lockstep_end_rounds(lockstep, round, rounds);
    rounds_ended = true;
  };
  stream_k::Cursor cursor(plan, cluster);
  stream_k::Work work;
  while (cursor.next(work)) {
    int tm, tn;
    cluster_tile<ClusterM>(work.unit, tiles_m, tiles_n, rank, tm, tn);
    if (work.unit < plan.dp_units) {  // a round-robin unit (they come first)
      if (in_step && round > 0) lockstep_round(lockstep, round, gridDim.x);
      __syncwarp();
      ++round;
    } else {
      end_rounds();  // the stream-K tail's pieces run free
    }
    const int prefetch_at = prefetch_c && work.k_end == k_steps ? max(work.k_begin, k_steps - kCPrefetchLead) : -1;
    for (int step = work.k_begin; step < work.k_end; ++step) {
      const int segment = step / schedule.k_tiles, kt = step - segment * schedule.k_tiles;
      // A fresh barrier counts as having completed the phase before phase 0: the first
      // pass over the ring does not wait.
      while (!ptx::mbarrier_try_wait_parity(&s.empty[stage], phase ^ 1)) {
      }
      if (issuer)
        load_stage<E, TransA, TransB, ClusterM>(map_a, map_b, s.ring + stage * kStageBytes, &s.full[stage], tm * kBM,
                                                tn * kBN, schedule.a_column(segment, kt * kBK<E>),
                                                schedule.b_column(segment, kt * kBK<E>), rank);
      if (issuer && step == prefetch_at) prefetch_c_tile<typename E::Output>(map_c, tm * kBM, tn * kBN);
      __syncwarp();
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1;
      }
    }
  }
  end_rounds();
  if (in_step) lockstep_leave(lockstep, gridDim.x);
}

// A consumer warpgroup: per unit of work, the K loop (each stage's MMAs issued, the previous
// stage's waited for and handed back), then with Promote the promoted big·big pass, then the
// stream-K fix-up where the unit is a piece of the tail, then the epilogue.
template <class E, bool TransA, bool TransB, int ClusterM, bool Promote, bool StreamK>
__device__ __forceinline__ void consume(const CUtensorMap* map_c, const Epilogue& e, const KSchedule& schedule,
                                        const StreamKArgs& sk, const Smem& s, const stream_k::Schedule& plan,
                                        int cluster, unsigned rank, int tiles_m, int tiles_n, int k_tiles) {
  // tf32 A stored k x m: read into registers (load_a_fragments).
  constexpr bool kRegisterA = TransA && E::kRegisterA;
  // The warp-stored epilogue where it fits in registers (with A fragments or promoted sums it
  // spilled 200-1300 bytes; the stream-K form has no room for it either).
  constexpr bool kWarpStore = !kRegisterA && !Promote && !StreamK;
  // A stored k x m (TransA) is M-major; B stored k x n (not TransB) is N-major.
  constexpr int kMnMajorA = TransA ? 1 : 0, kMnMajorB = TransB ? 0 : 1;
  // A tile's last chunks of C are stored during the next tile's first K steps (epilogue.cuh).
  // (With A in registers or promoted sums there are no registers for them.)
  using Out = typename E::Output;
  constexpr bool kDefer = !Promote && !kRegisterA;
  constexpr int kHeld = kHeldChunks<Out, StreamK>;
  const int warpgroup = threadIdx.x / kWarpgroup;
  const int lane = threadIdx.x % 32;
  // One arrival per warp on the stage's `empty` barrier of every block of the cluster.
  const auto release = [&](int stage) {
    if (lane != 0) return;
    if constexpr (ClusterM == 1) {
      ptx::mbarrier_arrive(&s.empty[stage]);
    } else {
#pragma unroll
      for (unsigned r = 0; r < ClusterM; ++r) arch::mbarrier_arrive_cluster(&s.empty[stage], r);
    }
  };
  int stage = 0;
  std::uint32_t phase = 0;
  const auto next_stage = [&] {
    if (++stage == kStages) {
      stage = 0;
      phase ^= 1;
    }
  };
  float acc[128];  // (64, BN) of this warpgroup, wgmma's fragment order
  // Promote: every stage of a one-pass (FP8) run; of 3xTF32, only the last pass (big·big):
  // the small passes come first, while the sums are about 2^-11 of their final size, so what
  // their truncation loses is negligible.
  const int promote_from = Promote ? (schedule.segments - 1) * schedule.k_tiles : k_tiles;
  unsigned char* buffers = s.epilogue_buffers + warpgroup * kEpilogueBuffers * kEpilogueBufferBytes;
  // The tile held for storing (kDefer): alpha * acc in C's type, and where it goes.
  HeldChunks<kHeld> held_chunks;
  bool pending = false;
  int held_row0 = 0, held_col0 = 0;
  const auto store_held = [&](int q) { store_held_chunk<Out, kHeld>(held_chunks, q, map_c, buffers, held_row0, held_col0, warpgroup); };
  stream_k::Cursor cursor(plan, cluster);
  stream_k::Work work;
  while (cursor.next(work)) {
    int tm, tn;
    cluster_tile<ClusterM>(work.unit, tiles_m, tiles_n, rank, tm, tn);
    int previous = -1;
    if constexpr (Promote || (StreamK && !kDefer)) {
      // The previous tile's accumulators are dead: without this, the first wgmma's runtime
      // scale_d keeps them live through the promoted pass beside `sums`, or through the
      // stream-K fix-up (spills). (Where chunks are held, ptxas then serialised the wgmmas,
      // C7515, and spilled nothing without it.)
#pragma unroll
      for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
    }
    // With Promote (whole units only): the small passes (segments >= 2).
    const int mma_end = work.k_end < promote_from ? work.k_end : promote_from;
    // A warpgroup whose 64 rows all lie below C (up to 64 rows of C: an LLM's decode steps)
    // waits for each stage and hands it back, but multiplies nothing: half the tensor
    // cores' work per tile (kSkipsIdleWarpgroups).
    const bool rows_in_c = !kSkipsIdleWarpgroups<E> || tm * kBM + warpgroup * kEpilogueRows < e.m;
    // One stage: its MMAs issued, the previous stage's waited for and handed back. With A in
    // registers, `frag` receives this stage's A fragments and `held` are the previous
    // stage's, in use until the wait.
    const auto mma_stage = [&](int kt, std::uint32_t(&frag)[kFragmentRegs], std::uint32_t(&held)[kFragmentRegs]) {
      while (!ptx::mbarrier_try_wait_parity(&s.full[stage], phase)) {
      }
      const unsigned char* a = s.ring + stage * kStageBytes;  // (BM, BK)
      const unsigned char* b = a + kABytes;                   // (BN, BK)
      if (rows_in_c) {
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
      }
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
      int kt = work.k_begin;
      if constexpr (kDefer)
        if (pending) {  // the held tile's chunks, one after each of the first K steps
#pragma unroll
          for (int q = kFirstHeldChunk<Out, kHeld>; q < kBN / kEpilogueCols<Out>; ++q) {
            if (kt < mma_end) mma_stage(kt++, none, none);
            store_held(q);
          }
          pending = false;
        }
      for (; kt < mma_end; ++kt) mma_stage(kt, none, none);
    }
    arch::wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < 128; ++i) arch::fence_accumulator(acc[i]);
    if (previous >= 0) release(previous);
    if constexpr (kDefer) {
      const int row0 = tm * kBM + warpgroup * kEpilogueRows, col0 = tn * kBN;
      if (work.whole(k_tiles) && holdable(e, col0)) {
        if (row0 < e.m) {  // (rows below C: nothing to store)
          store_first_chunks<Out, kHeld>(acc, e, map_c, buffers, row0, col0, warpgroup);
          hold_chunks<Out, kHeld>(acc, e.alpha, held_chunks);
          pending = true;
          held_row0 = row0;
          held_col0 = col0;
        }
        continue;
      }
    }

    // The unit's sums: stored; or, for a piece of a stream-K tail unit, left as a partial,
    // and by the piece that arrives last added to the others' partials and stored.
    const auto finish = [&](float (&r)[128]) {
      if constexpr (StreamK) {
        const int warp = (threadIdx.x % kWarpgroup) / 32;  // (row h = 1 lies below row h = 0)
        const bool live = tm * kBM + warpgroup * kEpilogueRows + accumulator_row<kRegisterA>(warp, lane, 0) < e.m;
        if (!work.whole(k_tiles) && !fix_up<ClusterM>(r, sk, plan, work, cluster, rank, s.tail_last, live)) return;
      }
      store_tile<Out, kRegisterA, kWarpStore, E::kMnMajor>(
          r, e, map_c, buffers, tm * kBM + warpgroup * kEpilogueRows, tn * kBN, warpgroup);
    };
    if constexpr (Promote) {
      float sums[128];  // registers no wgmma accumulates into: the adds below define them
#pragma unroll
      for (int i = 0; i < 128; ++i) sums[i] = acc[i];
      // kPromoteStages stages per partial sum.
      const int promoted_begin = work.k_begin > promote_from ? work.k_begin : promote_from;
      for (int kt = promoted_begin; kt < work.k_end; kt += kPromoteStages<E>) {
        const int count = work.k_end - kt < kPromoteStages<E> ? work.k_end - kt : kPromoteStages<E>;
        int held[kPromoteStages<E>];
        const unsigned char* stages[kPromoteStages<E>];
#pragma unroll
        for (int g = 0; g < kPromoteStages<E>; ++g) {
          held[g] = stage;
          stages[g] = s.ring + stage * kStageBytes;
          if (g < count) {
            while (!ptx::mbarrier_try_wait_parity(&s.full[stage], phase)) {
            }
            next_stage();
          }
        }
        promoted_stages<E, TransA, TransB>(sums, stages, count, warpgroup);
#pragma unroll
        for (int g = 0; g < kPromoteStages<E>; ++g)  // both halves are done with them
          if (g < count) release(held[g]);
      }
      finish(sums);
    } else {
      finish(acc);
    }
  }
  if constexpr (kDefer)
    if (pending)
#pragma unroll
      for (int q = kFirstHeldChunk<Out, kHeld>; q < kBN / kEpilogueCols<Out>; ++q) store_held(q);
  // Shared memory must outlive the TMA stores that read it (issued by thread 0 of each
  // warpgroup).
  if (e.tma_store && lane == 0) ptx::cp_async_bulk_wait_group(ptx::n32_t<0>{});
}

template <class E, bool TransA, bool TransB, int ClusterM, bool Promote = false, bool StreamK = false>
__global__ void __launch_bounds__(kThreads, 1)
    wgmma_ws_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                    const __grid_constant__ CUtensorMap map_c, Epilogue e, KSchedule schedule,
                    const __grid_constant__ StreamKArgs sk, Lockstep lockstep) {
  static_assert(ClusterM == 1 || ClusterM == 2, "clusters of one or two blocks along M");
  // (3xTF32's promoted sums and a stream-K fix-up together spilled 72-160 bytes; FP8's fit.)
  static_assert(!(StreamK && Promote && !E::kPromoted), "the stream-K tail: one K pass");
  static_assert(!(TransA && E::kRegisterA && Promote), "A from registers: one plain K pass");
  // sm_90a code: in a build whose list lacks 90a the body compiles to nothing (target.cuh).
#if GEMMLAB_CODE_SM90A
  extern __shared__ unsigned char smem_raw[];
  __shared__ std::uint64_t full[kStages], empty[kStages];
  __shared__ int tail_last;
  // The swizzle pattern is a function of the address: every stage starts on an atom. (The
  // same offset in every block of a cluster: multicast copies land at the same place.)
  // (Rounded as an integer, so the compiler does not know these pointers are shared memory:
  // stage_chunk says where that matters.)
  unsigned char* ring = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + kAtomBytes - 1) / kAtomBytes * kAtomBytes);
  const Smem s{ring, ring + kStages * kStageBytes, full, empty, &tail_last};

  const int warpgroup = threadIdx.x / kWarpgroup;
  const unsigned rank = ClusterM > 1 ? arch::cluster_rank() : 0;
  if (threadIdx.x == 0) {
    for (int i = 0; i < kStages; ++i) {
      ptx::mbarrier_init(&full[i], 1);  // the producer's expect_tx arrival
      // A stage is free once every consumer warp of the cluster is done with it: the
      // producers of the cluster write their share of B into every block's copy.
      ptx::mbarrier_init(&empty[i], kConsumers * kWarpgroupWarps * ClusterM);
    }
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  // No block may copy into a peer or arrive on its barriers before the peer initialised them.
  if constexpr (ClusterM > 1) arch::cluster_sync();
  else __syncthreads();
  // Launched as a programmatic dependent (launch_config): the kernel before it in the stream
  // (an operand copy) may still be running. Nothing above touched global memory; from here
  // on its writes are complete and visible. (A no-op when nothing is pending.)
  arch::wait_for_dependencies();

  const int tiles_m = ceil_div(e.m, kBM), tiles_n = ceil_div(e.n, kBN);
  const int units = ceil_div(tiles_m, ClusterM) * tiles_n;
  const int cluster = blockIdx.x / ClusterM, clusters = gridDim.x / ClusterM;
  const int k_tiles = schedule.k_tiles * schedule.segments;
  // This cluster's work: whole units round-robin, then (StreamK) pieces of the tail.
  const stream_k::Schedule plan = StreamK ? sk.schedule : stream_k::rounds_only(units, clusters, k_tiles);

  if (warpgroup == kConsumers) {  // the producer: the last warpgroup, one warp of it
    arch::setmaxnreg_decrease<kProducerRegisters>();
    if (threadIdx.x % kWarpgroup < 32)
      produce<E, TransA, TransB, ClusterM>(&map_a, &map_b, &map_c, e.tma_store && !e.c_transposed && e.beta != 0.0f, s,
                                           schedule, plan, lockstep, cluster, rank, tiles_m, tiles_n);
  } else {
    arch::setmaxnreg_increase<kConsumerRegisters>();
    consume<E, TransA, TransB, ClusterM, Promote, StreamK>(&map_c, e, schedule, sk, s, plan, cluster, rank, tiles_m,
                                                            tiles_n, k_tiles);
  }
  // A block leaves only when its peers no longer copy into it or arrive on its barriers.
  if constexpr (ClusterM > 1) arch::cluster_sync();
#endif
}

}  // namespace gemmlab::cuda::hopper
