// Rung 12 (cuda), wgmma_bf16: Hopper's tensor memory accelerator and warpgroup MMA, without warp
// specialisation. The step after mma_sync (11): instead of every thread copying 16-byte
// chunks with cp.async and every warp loading fragments with ldmatrix, one thread asks the
// TMA for whole tiles (cp.async.bulk.tensor, completing on an mbarrier with their byte
// count) and two warpgroups multiply straight from shared memory with wgmma, each its 64
// rows of the 128 x 256 block tile by the whole B tile (m64n256k16, 128 f32 accumulators a
// thread). Tiles land 128-byte swizzled, the layout wgmma reads without bank conflicts.
//
// The tile, the stage layout, the copies and the shared-memory descriptors are the Hopper
// engine's shared pieces (src/cuda/hopper/: config.cuh, producer.cuh's load_stage,
// epilogue.cuh's store_pair), so the next rung, wgmma_ws_bf16 (13), differs from this one
// only in its organisation: a producer warpgroup that does nothing
// but copy, registers moved to the consumers (setmaxnreg), and a persistent grid that
// overlaps one tile's epilogue with the next tile's loads. Here every block owns one tile
// of C (grouped launch order), the 256 threads all multiply, and thread 0 also refills
// the ring of kStages stages between its own MMAs.
//
// Any shape: TMA zero-fills outside A and B, stores are predicated, beta = 0 never reads
// C. A K-contiguous operand is read K-major, the others as 64-wide MN chunks read MN-major
// (wgmma's transposition bits), so all four transpositions and both layouts run without a
// copy. Operands TMA cannot address (base or row pitch not a multiple of 16 bytes) are
// first copied into a padded workspace (hopper/operands.hpp); explain names the copies.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cuda/ptx>

#include <cstdint>
#include <string>

#include "core/traffic.hpp"
#include "cuda/arch/target.cuh"
#include "cuda/arch/wgmma.cuh"
#include "cuda/tiles/block_order.cuh"
#include "cuda/tiles/common.cuh"
#include "cuda/tiles/kernel_info.hpp"
#include "cuda/hopper/config.cuh"
#include "cuda/hopper/epilogue.cuh"
#include "cuda/hopper/operands.hpp"
#include "cuda/hopper/producer.cuh"
#include "cuda/ladder/rungs.hpp"
#include "cuda/runtime/check.hpp"
#include "cuda/runtime/kernel_setup.hpp"
#include "cuda/runtime/tensor_map.hpp"

namespace gemmlab::cuda {
namespace {

namespace ptx = ::cuda::ptx;
using Element = hopper::Bf16Operand;
constexpr const char* kRung = "wgmma_bf16";

// Every size of the rung; block shape, shared memory and launch bounds follow from it.
struct WgmmaConfig {
  static constexpr int BM = 128, BN = 256;              // block tile of C
  static constexpr int BK = hopper::kBK<Element>;     // 64: one 128-byte swizzled row of K
  static constexpr int kStages = 4;                     // 4 x 48 KiB ring; 5 would not fit
  static constexpr int kWarpgroups = 2;                 // each multiplies 64 rows (wgmma m64)
  static constexpr int kThreads = kWarpgroups * hopper::kWarpgroup;
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kGroupM = 8;                     // tile rows per L2 group
  static constexpr int kKSteps = hopper::kKSteps<Element>;  // m64n256k16 per stage: 4
  static constexpr int kAccumulators = BN / 2;          // 64 x BN f32 over 128 threads
  static constexpr int kStageBytes = hopper::kStageBytes;
  // + one swizzle atom of slack: the ring is aligned up to 1024 bytes inside the block.
  static constexpr int kSmemBytes = kStages * kStageBytes + hopper::kAtomBytes;

  static_assert(BM == hopper::kBM && BN == hopper::kBN,
                "hopper/'s tensor maps, load_stage and descriptors copy and address its tile");
  static_assert(BM == kWarpgroups * 64, "each warpgroup multiplies 64 rows");
  static_assert(kStages >= 2, "a pipeline needs at least two stages");
  static_assert(kSmemBytes <= 227 * 1024, "shared memory of one block on sm_90");
};

// One block per tile of C. Tile k-step kt lives in stage kt % kStages. Two barriers per
// stage: `full` completes when the TMA has written the stage's bytes (thread 0 arms it with
// expect_tx), `empty` when all 8 warps have finished the MMAs that read it.
//
// Why an `empty` barrier rather than __syncthreads before each refill: only the thread
// that issues the copy must know that both warpgroups are done with the stage. With a
// barrier, the other warps post an arrival and go on to the next stage; __syncthreads
// would stop all 256 threads at the slowest warp on every k-step.
template <class Cfg, bool TransA, bool TransB>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                 hopper::Epilogue e, int k) {
  // sm_90a code: in a build whose list lacks 90a the body compiles to nothing (target.cuh).
#if GEMMLAB_CODE_SM90A
  extern __shared__ unsigned char smem_raw[];
  // The swizzle pattern is a function of the address: every stage starts on an atom.
  unsigned char* ring = reinterpret_cast<unsigned char*>(  // kStages x (A (BM, BK), B (BN, BK))
      (reinterpret_cast<std::uintptr_t>(smem_raw) + hopper::kAtomBytes - 1) / hopper::kAtomBytes *
      hopper::kAtomBytes);
  __shared__ std::uint64_t full[Cfg::kStages], empty[Cfg::kStages];

  const bool issuer = threadIdx.x == 0;
  const int warpgroup = threadIdx.x / hopper::kWarpgroup;
  const int warp = (threadIdx.x % hopper::kWarpgroup) / 32, lane = threadIdx.x % 32;
  int tile_m, tile_n;
  grouped_block<Cfg::kGroupM>(ceil_div(e.m, Cfg::BM), ceil_div(e.n, Cfg::BN), tile_m, tile_n);
  const int m0 = tile_m * Cfg::BM, n0 = tile_n * Cfg::BN;
  const int k_tiles = ceil_div(k, Cfg::BK);

  if (issuer) {
    for (int s = 0; s < Cfg::kStages; ++s) {
      ptx::mbarrier_init(&full[s], 1);            // the issuer's expect_tx arrival
      ptx::mbarrier_init(&empty[s], Cfg::kWarps);  // one arrival per warp
    }
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  // Prologue: every stage is free, fill the whole ring.
  if (issuer)
    for (int kt = 0; kt < Cfg::kStages && kt < k_tiles; ++kt)
      hopper::load_stage<Element, TransA, TransB>(&map_a, &map_b, ring + kt * Cfg::kStageBytes, &full[kt], m0,
                                                     n0, kt * Cfg::BK, kt * Cfg::BK);

  // A stored k x m (TransA) is M-major; B stored k x n (not TransB) is N-major.
  constexpr int kMnMajorA = TransA ? 1 : 0, kMnMajorB = TransB ? 0 : 1;
  float acc[Cfg::kAccumulators];  // (64, BN) of this warpgroup, wgmma's fragment order
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int stage = kt % Cfg::kStages;
    while (!ptx::mbarrier_try_wait_parity(&full[stage], static_cast<std::uint32_t>(kt / Cfg::kStages) & 1u)) {
    }
    const unsigned char* s_a = ring + stage * Cfg::kStageBytes;  // (BM, BK), swizzled
    const unsigned char* s_b = s_a + hopper::kABytes;          // (BN, BK), swizzled
#pragma unroll
    for (int i = 0; i < Cfg::kAccumulators; ++i) arch::fence_accumulator(acc[i]);
    arch::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < Cfg::kKSteps; ++kk)
      Element::mma<kMnMajorA, kMnMajorB>(acc, hopper::a_descriptor<TransA>(s_a, warpgroup, kk),
                                         hopper::b_descriptor<TransB>(s_b, kk), kt > 0 || kk > 0);
    arch::wgmma_commit();
#pragma unroll
    for (int i = 0; i < Cfg::kAccumulators; ++i) arch::fence_accumulator(acc[i]);
    // Keep this step's MMAs in flight; the previous step's are done: hand its stage back,
    // and (thread 0) refill it with step kt - 1 + kStages once all 8 warps have.
    arch::wgmma_wait<1>();
    if (kt > 0) {
      const int freed = (kt - 1) % Cfg::kStages;
      if (lane == 0) ptx::mbarrier_arrive(&empty[freed]);
      const int next = kt - 1 + Cfg::kStages;
      if (issuer && next < k_tiles) {
        // Step kt - 1 was the ((kt - 1) / kStages)-th use of its stage: wait for that phase.
        while (!ptx::mbarrier_try_wait_parity(&empty[freed],
                                              static_cast<std::uint32_t>((kt - 1) / Cfg::kStages) & 1u)) {
        }
        hopper::load_stage<Element, TransA, TransB>(&map_a, &map_b, ring + freed * Cfg::kStageBytes,
                                                       &full[freed], m0, n0, next * Cfg::BK,
                                                       next * Cfg::BK);
      }
      __syncwarp();  // warp 0 together again before the next warpgroup-wide wgmma
    }
  }
  arch::wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < Cfg::kAccumulators; ++i) arch::fence_accumulator(acc[i]);

  // Accumulator fragment of m64nN: register 4j + {0,1} holds row lane/4 and columns
  // 8j + 2(lane%4) + {0,1} of this warp's 16 rows; 4j + {2,3} the same columns 8 rows down.
  const int row0 = m0 + warpgroup * 64 + warp * 16 + lane / 4;
  const int col0 = n0 + 2 * (lane % 4);
#pragma unroll
  for (int j = 0; j < Cfg::BN / 8; ++j) {
    hopper::store_pair<float>(e, row0, col0 + 8 * j, acc[4 * j], acc[4 * j + 1]);
    hopper::store_pair<float>(e, row0 + 8, col0 + 8 * j, acc[4 * j + 2], acc[4 * j + 3]);
  }
#else
  // (What only the body uses, named once, so the pass without it has nothing to warn of.)
  static_assert(Cfg::kWarps > 0 && Cfg::kKSteps > 0 && Cfg::kAccumulators > 0);
#endif
}

using Cfg = WgmmaConfig;

// One instantiation: its shared-memory limit raised once per context, then launched.
template <bool TransA, bool TransB>
Status launch(int grid, RunContext& context, const CUtensorMap& map_a, const CUtensorMap& map_b,
              const hopper::Epilogue& e, int k) {
  GEMMLAB_TRY(allow_dynamic_smem(context, wgmma_kernel<Cfg, TransA, TransB>, Cfg::kSmemBytes));
  wgmma_kernel<Cfg, TransA, TransB>
      <<<grid, Cfg::kThreads, Cfg::kSmemBytes, static_cast<cudaStream_t>(context.stream())>>>(map_a, map_b, e, k);
  CUDA_CHECK_LAUNCH("wgmma_kernel");
  return Status::ok();
}

// The operand copies' workspace is the context's, shared with the other Hopper rungs (engine.hpp).
Status run(const GemmProblem& p, RunContext& context) {
  RowMajorGemm g = canonicalize(p);
  // bf16 needs no K-major staging: the only copies are padded ones (rows re-pitched).
  GEMMLAB_TRY(hopper::stage_operands<Element>(g, hopper::make_plan<Element>(g, /*split=*/false),
                                              context.get<hopper::Workspace>(), context.stream()));
  CUtensorMap map_a, map_b;
  GEMMLAB_TRY(encode_tensor_map(hopper::tma_a<Element>(g), "A", map_a));
  GEMMLAB_TRY(encode_tensor_map(hopper::tma_b<Element>(g), "B", map_b));
  const hopper::Epilogue e{g.c, g.ldc, static_cast<int>(g.m), static_cast<int>(g.n),
                           static_cast<float>(g.alpha), static_cast<float>(g.beta), /*tma_store=*/false,
                           /*c_transposed=*/false, /*warp_store=*/false};
  const int grid = ceil_div(g.m, Cfg::BM) * ceil_div(g.n, Cfg::BN);
  return dispatch_trans(g.trans_a, g.trans_b, [&](auto ta, auto tb) {
    return launch<decltype(ta)::value, decltype(tb)::value>(grid, context, map_a, map_b, e, static_cast<int>(g.k));
  });
}

// Sizes the padded copies' workspace (the only copies bf16 needs).
Status prepare(const GemmProblem& p, RunContext& context) {
  if (p.m == 0 || p.n == 0 || p.k == 0) return Status::ok();
  return context.get<hopper::Workspace>().reserve(hopper::make_plan<Element>(canonicalize(p), /*split=*/false).bytes());
}

Status can_implement(const GemmProblem& p) {
  GEMMLAB_TRY(require_precision(p, *precision_for(DType::BF16), kRung));
  return hopper::require_32bit_extents(p, kRung);
}

Status kernel_info(const GemmProblem& p, KernelInfo& out) {
  const RowMajorGemm g = canonicalize(p);
  const std::string copies = hopper::describe_copies(hopper::make_plan<Element>(g, /*split=*/false));
  return dispatch_trans(g.trans_a, g.trans_b, [&](auto ta, auto tb) {
    return describe_kernel(out, wgmma_kernel<Cfg, decltype(ta)::value, decltype(tb)::value>,
                           kernel_name("wgmma_kernel<bf16>", g.trans_a, g.trans_b) + copies, Cfg::kThreads,
                           Cfg::kSmemBytes);
  });
}

Traffic model(const GemmProblem& p) {
  Traffic t = minimum_traffic(p);
  set_loads_per_fma(t, p, 1.0 / Cfg::BN + 1.0 / Cfg::BM);  // each A element feeds BN FMAs, each B one BM
  t.threads_per_block = Cfg::kThreads;
  t.smem_bytes_per_block = Cfg::kSmemBytes;
  return t;
}

}  // namespace

Variant wgmma_bf16_variant() {
  Variant v;
  v.rung = 12;
  v.name = kRung;
  v.backend = Backend::Cuda;
  v.tensor_cores = true;
  v.input = DType::BF16;
  v.compute = DType::F32;  // exact bf16 products, f32 sums: precision_for(bf16)
  v.output = DType::F32;
  v.technique = "TMA tiles into 128B-swizzled smem, wgmma from smem, 4-stage mbarrier ring, no warp specialisation";
  v.config = {{{"BM", Cfg::BM}, {"BN", Cfg::BN}, {"BK", Cfg::BK}, {"stages", Cfg::kStages},
               {"warpgroups", Cfg::kWarpgroups}, {"threads", Cfg::kThreads}, {"group_m", Cfg::kGroupM}}};
  // sm_90a code, which the library checks before any launch (gemmlab/availability.hpp).
  v.min_compute_capability = 90;
  v.arch_specific = "90a";
  v.arch_features = "TMA and wgmma";
  v.can_implement = can_implement;
  v.prepare = prepare;
  v.run = run;
  v.kernel_info = kernel_info;
  v.model = model;
  return v;
}

}  // namespace gemmlab::cuda
