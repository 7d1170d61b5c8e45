// Rung 11 (cuda): the tensor cores, through warp-level mma.sync. The bridge from the SIMT
// ladder: the same multi-stage cp.async pipeline as `pipelined`, but each warp's inner
// loop is ldmatrix (shared memory -> mma fragments, transposing where the operand's
// layout needs it) and mma.m16n8k16 (a 16x8x16 product per instruction, bf16 or f16
// inputs, float32 sums) instead of FFMA. A and B are 2-byte types; C is float32 or, as
// frameworks keep it, the input type: alpha * acc + beta * C in float32, rounded once.
//
// Tiles stay in shared memory in their global orientation (cp.async copies 16-byte chunks
// along the contiguous dimension), so one kernel serves all four transpositions: the
// orientation only decides whether ldmatrix transposes. Rows are padded by 16 bytes, so
// the eight rows an ldmatrix phase reads fall in eight different 16-byte bank groups.
// Operands whose rows are not 16-byte aligned (ld not a multiple of 8, or a misaligned
// base) take the same pipeline with guarded element loads instead of cp.async.
//
// C of up to 64 rows (a transformer's projections at a few tokens) takes tiles of 16, 32 or
// 64 rows, and where the tiles fill under half the GPU each tile's K is cut into ranges on
// several blocks (split_k.cuh): such a product streams B once from DRAM, and only enough
// blocks in flight keep DRAM busy.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/traffic.hpp"
#include "cuda/arch/cp_async.cuh"
#include "cuda/arch/ldmatrix.cuh"
#include "cuda/arch/mma.cuh"
#include "cuda/arch/target.cuh"
#include "cuda/tiles/block_order.cuh"
#include "cuda/arch/c_element.cuh"
#include "cuda/tiles/common.cuh"
#include "cuda/tiles/device_limits.hpp"
#include "cuda/tiles/kernel_info.hpp"
#include "cuda/tiles/mma_sync_tile.cuh"
#include "cuda/tiles/split_k.cuh"
#include "cuda/tiles/sub_grid.hpp"
#include "cuda/ladder/rungs.hpp"
#include "cuda/runtime/buffer.hpp"
#include "cuda/runtime/check.hpp"
#include "cuda/runtime/device.hpp"
#include "cuda/runtime/kernel_setup.hpp"

namespace gemmlab::cuda {
namespace {

using namespace mma_sync;  // MmaSyncConfig, Bits, load_tile, WarpMma, add_ranges (mma_sync_tile.cuh)

// The kernel's arguments: A and B as 16-bit storage. RowMajorArgs (common.cuh) types C as
// float; the epilogue reads and writes it as the kernel's Out (float, __nv_bfloat16, __half).
using MmaArgs = RowMajorArgs<Bits>;

// An element type (float, __half, __nv_bfloat16) as the library names it.
template <class X>
constexpr DType kDType = std::is_same_v<X, float> ? DType::F32 : std::is_same_v<X, __half> ? DType::F16 : DType::BF16;

#if GEMMLAB_CODE_SM80  // (only the kernel's sm_80 body stores)
// C(row, col..col+1) <- alpha * (v0, v1) + beta * C in float32, stored as Out; beta = 0
// never reads C. One access of both (8 bytes of float, 4 of a 2-byte C) when C's rows allow
// it (`pair_ok`) and both lie inside C.
template <class Out>
__device__ __forceinline__ void store_pair(const MmaArgs& g, int row, int col, float v0, float v1, bool pair_ok) {
  using E = arch::CElement<Out>;
  using Pair = typename E::Pair;
  if (row >= g.m || col >= g.n) return;
  Out* out = reinterpret_cast<Out*>(g.c) + static_cast<long long>(row) * g.ldc + col;
  if (pair_ok && col + 1 < g.n) {
    float2 r = make_float2(g.alpha * v0, g.alpha * v1);
    if (g.beta != 0.0f) {
      const float2 old = E::widen2(*reinterpret_cast<const Pair*>(out));
      r.x = fmaf(g.beta, old.x, r.x);
      r.y = fmaf(g.beta, old.y, r.y);
    }
    *reinterpret_cast<Pair*>(out) = E::narrow2(r);
    return;
  }
  out[0] = E::narrow(g.beta == 0.0f ? g.alpha * v0 : fmaf(g.beta, E::widen(out[0]), g.alpha * v0));
  if (col + 1 < g.n) out[1] = E::narrow(g.beta == 0.0f ? g.alpha * v1 : fmaf(g.beta, E::widen(out[1]), g.alpha * v1));
}
#endif

// Out: C's element type (float, or T itself).
template <class Cfg, class T, class Out, bool TransA, bool TransB, bool Async>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    mma_sync_kernel(MmaArgs g, bool pair_c, int tiles_m, int tiles_n, SplitK split_k) {
  // mma.sync on 2-byte types is sm_80 code: for sm_75 the body compiles to nothing, and the
  // rung declares compute capability 8.0 (target.cuh).
#if GEMMLAB_CODE_SM80
  using L = MmaLayout<Cfg, TransA, TransB>;
  extern __shared__ uint4 smem_chunks[];  // uint4: 16-byte alignment for cp.async and ldmatrix
  Bits* sA = reinterpret_cast<Bits*>(smem_chunks);  // kStages x A tile
  Bits* sB = sA + Cfg::kStages * L::A::kElems;      // kStages x B tile
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  int block_m, block_n;
  grouped_block<Cfg::kGroupM>(tiles_m, tiles_n, block_m, block_n);
  const int row0 = block_m * Cfg::BM, col0 = block_n * Cfg::BN;
  // This block's range of the tile's K steps (all of them unless split-K cut it: grid.y).
  int kt_begin, kt_end;
  split_k_range(ceil_div(g.k, Cfg::BK), static_cast<int>(blockIdx.y), static_cast<int>(gridDim.y), kt_begin, kt_end);
  const int k_tiles = kt_end - kt_begin;
  // In one row of tiles every block reads the same A: each starts its range at its own
  // offset (evenly spread by tile column), so that they do not all ask the same lines of L2
  // at once. (With several rows, tiles of a column share B in L2 only by staying in step.)
  const int rotate = tiles_m == 1 ? static_cast<int>(static_cast<long long>(block_n) * k_tiles / tiles_n) : 0;

  // Step i of the range into stage i % kStages.
  const auto fetch = [&](int i) {
    const int k0 = (kt_begin + (i + rotate) % k_tiles) * Cfg::BK;
    Bits* dA = sA + (i % Cfg::kStages) * L::A::kElems;
    Bits* dB = sB + (i % Cfg::kStages) * L::B::kElems;
    if constexpr (TransA)  // A stored k x m: lines along k
      load_tile<typename L::A, Cfg::kThreads, Async>(g.a + static_cast<long long>(k0) * g.lda + row0, g.lda, g.k - k0,
                                                     g.m - row0, dA, tid);
    else
      load_tile<typename L::A, Cfg::kThreads, Async>(g.a + static_cast<long long>(row0) * g.lda + k0, g.lda, g.m - row0,
                                                     g.k - k0, dA, tid);
    if constexpr (TransB)  // B stored n x k: lines along n
      load_tile<typename L::B, Cfg::kThreads, Async>(g.b + static_cast<long long>(col0) * g.ldb + k0, g.ldb, g.n - col0,
                                                     g.k - k0, dB, tid);
    else
      load_tile<typename L::B, Cfg::kThreads, Async>(g.b + static_cast<long long>(k0) * g.ldb + col0, g.ldb, g.k - k0,
                                                     g.n - col0, dB, tid);
  };

  // Prologue: kStages - 1 tiles in flight. Every iteration commits one group (empty ones
  // too), so "at most kStages - 2 groups pending" always means "tile kt has landed".
#pragma unroll
  for (int s = 0; s < Cfg::kStages - 1; ++s) {
    if (s < k_tiles) fetch(s);
    arch::cp_async_commit();
  }
  WarpMma<Cfg, T, TransA, TransB> mma;
  mma.init(warp / Cfg::kWarpsN, warp % Cfg::kWarpsN, lane);
  for (int kt = 0; kt < k_tiles; ++kt) {
    arch::cp_async_wait<Cfg::kStages - 2>();
    // Tile kt is complete and visible to every warp; every warp is done with the stage
    // computed in the previous iteration, which tile kt + kStages - 1 now overwrites.
    __syncthreads();
    if (kt + Cfg::kStages - 1 < k_tiles) fetch(kt + Cfg::kStages - 1);
    arch::cp_async_commit();
    mma.compute(sA + (kt % Cfg::kStages) * L::A::kElems, sB + (kt % Cfg::kStages) * L::B::kElems);
  }
  arch::cp_async_wait<0>();

  // Epilogue straight from the accumulators: lane (g, t) holds C(g, 2t..2t+1) and
  // C(g + 8, 2t..2t+1) of each 16 x 8 tile.
  const int warp_row = row0 + (warp / Cfg::kWarpsN) * Cfg::WM + lane / 4;
  const int warp_col = col0 + (warp % Cfg::kWarpsN) * Cfg::WN + 2 * (lane % 4);
  // Split-K: only the block that arrives last stores C.
  if (gridDim.y > 1 && !add_ranges<Cfg>(mma.acc, split_k, warp_row, g.m, tid, reinterpret_cast<int*>(smem_chunks)))
    return;
#pragma unroll
  for (int mi = 0; mi < Cfg::MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < Cfg::NI; ++ni) {
      const int row = warp_row + mi * Cfg::kMmaM, col = warp_col + ni * Cfg::kMmaN;
      store_pair<Out>(g, row, col, mma.acc[mi][ni][0], mma.acc[mi][ni][1], pair_c);
      store_pair<Out>(g, row + 8, col, mma.acc[mi][ni][2], mma.acc[mi][ni][3], pair_c);
    }
#else
  // (What only the body uses, named once, so the pass without it has nothing to warn of.)
  using L = MmaLayout<Cfg, TransA, TransB>;
  static_assert(Cfg::kGroupM > 0 && Cfg::MI * Cfg::NI > 0 && sizeof(WarpMma<Cfg, T, TransA, TransB>) > 0 &&
                L::A::kOuter * L::A::kInner * L::B::kOuter * L::B::kInner > 0);
#endif
}

// cp.async moves 16 bytes from 16-byte aligned addresses: every row start of the operand
// must be one (an aligned base and a leading dimension of whole 16-byte chunks).
bool rows_16b_aligned(const void* base, long long ld) {
  return reinterpret_cast<std::uintptr_t>(base) % 16 == 0 && ld % kChunk == 0;
}
bool async_ok(const MmaArgs& g) { return rows_16b_aligned(g.a, g.lda) && rows_16b_aligned(g.b, g.ldb); }
// The epilogue's pairs start at even columns: one access of both where C's base is aligned
// to a pair and its rows hold whole pairs.
template <class Out>
bool pair_ok(const MmaArgs& g) {
  return reinterpret_cast<std::uintptr_t>(g.c) % (2 * sizeof(Out)) == 0 && g.ldc % 2 == 0;
}

// One kernel instantiation, with its launch. Its dynamic shared-memory limit is raised by
// the first launch in a context (outside any timed region: the harness's first call is an
// untimed verification run).
template <class Cfg, class T, class Out, bool TransA, bool TransB, bool Async>
struct Instance {
  static constexpr int kSmemBytes = MmaLayout<Cfg, TransA, TransB>::kSmemBytes;
  static auto kernel() { return mma_sync_kernel<Cfg, T, Out, TransA, TransB, Async>; }

  // `splits` ranges of K per tile (split_plan), with split-K's workspace where it is over 1.
  static Status launch(const MmaArgs& g, int splits, SplitK split_k, RunContext& context) {
    GEMMLAB_TRY(allow_dynamic_smem(context, kernel(), kSmemBytes));
    const auto stream = static_cast<cudaStream_t>(context.stream());
    const int tiles_m = ceil_div(g.m, Cfg::BM), tiles_n = ceil_div(g.n, Cfg::BN);
    const dim3 grid(static_cast<unsigned>(tiles_m * tiles_n), static_cast<unsigned>(splits));
    kernel()<<<grid, Cfg::kThreads, kSmemBytes, stream>>>(g, pair_ok<Out>(g), tiles_m, tiles_n, split_k);
    CUDA_CHECK_LAUNCH("mma_sync_kernel");
    return Status::ok();
  }
};

// Calls f(Instance<...>{}) for these transpositions and load path.
template <class Cfg, class T, class Out, class F>
Status with_instance(bool trans_a, bool trans_b, bool async, F&& f) {
  return dispatch_trans(trans_a, trans_b, [&](auto ta, auto tb) -> Status {
    constexpr bool kTa = decltype(ta)::value, kTb = decltype(tb)::value;
    return async ? f(Instance<Cfg, T, Out, kTa, kTb, true>{}) : f(Instance<Cfg, T, Out, kTa, kTb, false>{});
  });
}

template <class Cfg, class T, class Out>
Status launch_config(const MmaArgs& g, bool trans_a, bool trans_b, int splits, SplitK split_k, RunContext& context) {
  return with_instance<Cfg, T, Out>(trans_a, trans_b, async_ok(g), [&](auto instance) {
    return decltype(instance)::launch(g, splits, split_k, context);
  });
}

// For explain: the kernel launch_config() runs (configuration, transposition, load path,
// split-K, and C's type where it is not float32).
template <class Cfg, class T, class Out>
Status describe_config(const MmaArgs& g, bool trans_a, bool trans_b, const char* config, int splits,
                       KernelInfo& out) {
  const bool async = async_ok(g);
  const std::string name = kernel_name("mma_sync_kernel", trans_a, trans_b, std::string(config) + ", ") +
                           (async ? " cp.async" : " guarded loads") +
                           (splits > 1 ? ", K in " + std::to_string(splits) + " ranges (split-K)" : "") +
                           (std::is_same_v<Out, float> ? "" : ", " + std::string(to_string(kDType<Out>)) + " C");
  return with_instance<Cfg, T, Out>(trans_a, trans_b, async, [&](auto instance) {
    using I = decltype(instance);
    return describe_kernel(out, I::kernel(), name, Cfg::kThreads, I::kSmemBytes);
  });
}

template <class Cfg>
int smem_bytes(bool trans_a, bool trans_b) {
  return dispatch_trans(trans_a, trans_b, [](auto ta, auto tb) {
    return MmaLayout<Cfg, decltype(ta)::value, decltype(tb)::value>::kSmemBytes;
  });
}

// The tuning space, as data: each entry one instantiated configuration, and each a named
// configuration of the rung (`--config 128x128x64`); "auto" chooses by the rows of C and the
// transposition.
// Measured on an H100 SXM (bf16, 4096 / 8192, TFLOP/s): 128x128x32 NN 299 / 312, TN 307 / 322,
// NT 278 / 299; 128x128x64 NN 306 / 315, TN 298 / 317, NT 306 / 316 (255 registers for two
// blocks per SM: its NN and TT instantiations spill 52-56 bytes, NT and TN 8, since the
// split-K epilogue). A 128x256x32 tile with 8 warps (one block per SM) ran at 250 / 261 and
// was dropped.
// The short tiles are for C of a few rows (an LLM's projections at up to 64 tokens), where
// the product streams B once from DRAM: four warps side by side along n. 16 and 32 rows take
// 64 columns 128 deep (256-byte runs of a K-contiguous B); 64 rows, 128 columns 64 deep.
//                                     BM   BN  BK  WM  WN stages min blocks/SM
using Tile128x128x32 = MmaSyncConfig<128, 128, 32, 64, 64, 4, 2>;
using Tile128x128x64 = MmaSyncConfig<128, 128, 64, 64, 64, 3, 2>;
using Tile64x128x64 = MmaSyncConfig<64, 128, 64, 64, 32, 4, 2>;
using Tile16x64x128 = MmaSyncConfig<16, 64, 128, 16, 16, 4, 2>;
using Tile32x64x128 = MmaSyncConfig<32, 64, 128, 32, 16, 4, 2>;

struct MmaChoice {
  const char* name;
  int bm, bn, bk, wm, wn, stages, threads, min_blocks;
  int (*smem_bytes)(bool trans_a, bool trans_b);
  Status (*launch)(const MmaArgs&, bool trans_a, bool trans_b, int splits, SplitK, RunContext&);
  Status (*describe)(const MmaArgs&, bool trans_a, bool trans_b, const char* config, int splits, KernelInfo&);
};

template <class Cfg, class T, class Out>
constexpr MmaChoice choice(const char* name) {
  return {name, Cfg::BM, Cfg::BN, Cfg::BK, Cfg::WM, Cfg::WN, Cfg::kStages, Cfg::kThreads, Cfg::kMinBlocks,
          smem_bytes<Cfg>, launch_config<Cfg, T, Out>, describe_config<Cfg, T, Out>};
}

template <class T, class Out>
constexpr std::array kChoices = {
    choice<Tile128x128x32, T, Out>("128x128x32"), choice<Tile128x128x64, T, Out>("128x128x64"),
    choice<Tile64x128x64, T, Out>("64x128x64"), choice<Tile16x64x128, T, Out>("16x64x128"),
    choice<Tile32x64x128, T, Out>("32x64x128")};

constexpr std::string_view kAuto = "auto";

template <class T, class Out>
const MmaChoice* find_choice(std::string_view name) {
  for (const MmaChoice& c : kChoices<T, Out>)
    if (name == c.name) return &c;
  return nullptr;
}

// What a bound variant runs: the choice by transposition ("auto", nullptr) or one
// configuration on every problem.
using Forced = const MmaChoice*;

// NT measured 6-10 % faster with BK = 64 (half the barriers); the other transpositions
// equal within noise, and the 32-deep tile needs no spill. The 64-deep tile takes 108 KiB of
// shared memory, more than sm_86 and sm_89 allow a block (99 KiB): there NT takes the 32-deep
// one (80 KiB) too.
// Up to 64 rows of C: the shortest tile that holds them (where its shared memory fits).
template <class T, class Out>
const MmaChoice& pick(const RowMajorGemm& rm, Forced forced) {
  if (forced) return *forced;
  for (const char* short_tile : {"16x64x128", "32x64x128", "64x128x64"}) {
    const MmaChoice& c = *find_choice<T, Out>(short_tile);
    if (rm.m <= c.bm && smem_fits(c.smem_bytes(rm.trans_a, rm.trans_b))) return c;
  }
  const MmaChoice& wide = *find_choice<T, Out>("128x128x64");
  if (!rm.trans_a && rm.trans_b && smem_fits(wide.smem_bytes(rm.trans_a, rm.trans_b))) return wide;
  return *find_choice<T, Out>("128x128x32");
}

// One launch is a 1-D grid of tiles in int: problems past 2^31 rows or columns run as
// sub-grids in sequence (the K loop counts tiles: any k in int).
GridLimits grid_limits(const MmaChoice& c) { return tiles_on_x(c.bm, c.bn); }

// The configuration pick() runs must fit the device's shared memory (a forced one may not).
Status fits_device(const MmaChoice& c, const RowMajorGemm& rm, const char* rung) {
  return require_smem(c.smem_bytes(rm.trans_a, rm.trans_b), rung, c.name);
}

// A context's split-K workspace, grown to the largest problem it ran; new counters start at 0.
struct SplitKWorkspace {
  DeviceMemory partials, arrived;

  Status reserve(std::int64_t tiles, int splits, int tile_floats) {
    if (splits <= 1) return Status::ok();
    const std::size_t partial_bytes = static_cast<std::size_t>(tiles) * splits * tile_floats * sizeof(float);
    if (partials.bytes() < partial_bytes) {
      partials = DeviceMemory{};
      const Status s = DeviceMemory::allocate(partial_bytes, partials);
      if (!s.is_ok())
        return {s.code(), "split-K: the partial sums' workspace (" + std::to_string(partial_bytes) +
                              " bytes) could not be allocated: " + s.message()};
    }
    const std::size_t counter_bytes = static_cast<std::size_t>(tiles) * sizeof(int);
    if (arrived.bytes() < counter_bytes) {
      arrived = DeviceMemory{};
      GEMMLAB_TRY(DeviceMemory::allocate(counter_bytes, arrived));
      CUDA_CHECK(cudaMemset(arrived.data(), 0, counter_bytes));
      CUDA_CHECK(cudaDeviceSynchronize());  // before a kernel on any stream reads them
    }
    return Status::ok();
  }
  // Whether reserve() made room for this launch.
  bool holds(std::int64_t tiles, int splits, int tile_floats) const {
    return splits <= 1 || (partials.bytes() >= static_cast<std::size_t>(tiles) * splits * tile_floats * sizeof(float) &&
                           arrived.bytes() >= static_cast<std::size_t>(tiles) * sizeof(int));
  }
  SplitK args() const { return {partials.as<float>(), arrived.as<int>()}; }
};

// A launch's tiles and its ranges of K per tile, for `sms` SMs (split_k_count).
struct SplitPlan {
  std::int64_t tiles = 0;
  int splits = 1;
  int tile_floats = 0;
};
SplitPlan split_plan(const RowMajorGemm& sub, const MmaChoice& c, int sms) {
  SplitPlan s;
  s.tiles = static_cast<std::int64_t>(ceil_div(sub.m, c.bm)) * ceil_div(sub.n, c.bn);
  s.splits = split_k_count(s.tiles, static_cast<int>(ceil_div(sub.k, c.bk)), sms * c.min_blocks);
  s.tile_floats = c.bm * c.bn;
  return s;
}
// The SMs a context's grids are sized for (its target, where it sets one).
int sms_for(const RunContext& context) {
  const int sms = device_sm_count();
  return context.sm_count_target() > 0 ? std::min(sms, context.sm_count_target()) : sms;
}

template <class T, class Out>
Status prepare(const GemmProblem& p, RunContext& context, Forced forced) {
  const RowMajorGemm rm = canonicalize(p);
  const MmaChoice& c = pick<T, Out>(rm, forced);
  SplitKWorkspace& w = context.get<SplitKWorkspace>();
  return for_each_sub_grid(rm, grid_limits(c), sizeof(Bits), sizeof(Out), [&](const RowMajorGemm& sub) {
    const SplitPlan s = split_plan(sub, c, sms_for(context));
    return w.reserve(s.tiles, s.splits, s.tile_floats);
  });
}

template <class T, class Out>
std::uint64_t workspace_bytes(const GemmProblem& p, Forced forced) {
  const RowMajorGemm rm = canonicalize(p);
  const MmaChoice& c = pick<T, Out>(rm, forced);
  std::uint64_t bytes = 0;
  (void)for_each_sub_grid(rm, grid_limits(c), sizeof(Bits), sizeof(Out), [&](const RowMajorGemm& sub) {
    const SplitPlan s = split_plan(sub, c, device_sm_count());
    bytes = std::max(bytes, split_k_bytes(s.tiles, s.splits, s.tile_floats));
    return Status::ok();
  });
  return bytes;
}

template <class T, class Out>
Status run(const GemmProblem& p, RunContext& context, Forced forced) {
  const RowMajorGemm rm = canonicalize(p);
  const MmaChoice& c = pick<T, Out>(rm, forced);
  const SplitKWorkspace& w = context.get<SplitKWorkspace>();
  return for_each_sub_grid(rm, grid_limits(c), sizeof(Bits), sizeof(Out), [&](const RowMajorGemm& sub) {
    const SplitPlan s = split_plan(sub, c, sms_for(context));
    if (!w.holds(s.tiles, s.splits, s.tile_floats))
      return Status{StatusCode::InternalError, "mma_sync: run before prepare (no split-K workspace)"};
    return c.launch(make_args<Bits>(sub), sub.trans_a, sub.trans_b, s.splits, w.args(), context);
  });
}

template <class T, class Out>
Status kernel_info(const GemmProblem& p, KernelInfo& out, Forced forced) {
  const RowMajorGemm rm = canonicalize(p);
  const MmaChoice& c = pick<T, Out>(rm, forced);
  return c.describe(make_args<Bits>(rm), rm.trans_a, rm.trans_b, c.name, split_plan(rm, c, device_sm_count()).splits,
                    out);
}

template <class T, class Out>
std::vector<NamedConfig> configurations() {
  std::vector<NamedConfig> configs = {
      {std::string(kAuto), "up to 64 rows of C: the shortest of 16x64x128, 32x64x128, 64x128x64 that holds "
                           "them; else 128x128x64 for NT (half the barriers) where its 108 KiB of shared memory "
                           "fit, 128x128x32 otherwise; K split into ranges where the tiles fill under half the GPU"}};
  for (const MmaChoice& c : kChoices<T, Out>)
    configs.push_back({c.name, "BM=" + std::to_string(c.bm) + " BN=" + std::to_string(c.bn) + " BK=" +
                                   std::to_string(c.bk) + " WM=" + std::to_string(c.wm) + " WN=" +
                                   std::to_string(c.wn) + ", " + std::to_string(c.stages) +
                                   " stages, on every transposition"});
  return configs;
}

template <class T, class Out>
Variant make_variant(const char* name, Forced forced);

template <class T, class Out>
Status configure(const char* name, std::string_view config, Variant& out) {
  if (config == kAuto) {
    out = make_variant<T, Out>(name, nullptr);
    return Status::ok();
  }
  const MmaChoice* c = find_choice<T, Out>(config);
  if (!c) return {StatusCode::InvalidValue, "neither auto nor one of its tile configurations"};
  out = make_variant<T, Out>(name, c);
  return Status::ok();
}

// T: the inputs' type (__nv_bfloat16, __half); Out: C's (float, or T).
template <class T, class Out>
Variant make_variant(const char* name, Forced forced) {
  static_assert(std::is_same_v<Out, float> || std::is_same_v<Out, T>, "C is float32 or the input type");
  const Precision precision = *precision_for(kDType<T>, kDType<Out>);
  Variant v;
  v.rung = 11;
  v.name = name;
  v.backend = Backend::Cuda;
  v.tensor_cores = true;
  v.input = precision.input;
  v.compute = precision.compute;
  v.output = precision.output;
  v.technique = "tensor cores: ldmatrix + mma.sync m16n8k16, multi-stage cp.async pipeline";
  if constexpr (!std::is_same_v<Out, float>)
    v.technique += ", " + std::string(to_string(kDType<Out>)) + " C (float32 sums rounded once, to nearest)";
  // Printed: the forced configuration, or the one "auto" takes for all but NT.
  const MmaChoice& c = forced ? *forced : kChoices<T, Out>.front();
  v.config = {{{"BM", c.bm}, {"BN", c.bn}, {"BK", c.bk}, {"WM", c.wm}, {"WN", c.wn}, {"stages", c.stages},
               {"threads", c.threads}}};
  v.config_name = forced ? forced->name : std::string(kAuto);
  v.configs = configurations<T, Out>();
  v.configure = [name](std::string_view config, Variant& out) { return configure<T, Out>(name, config, out); };
  // mma.m16n8k16 on bf16 and f16: sm_80 (the library checks it, and the build's code, first).
  v.min_compute_capability = 80;
  v.arch_features = "mma.sync m16n8k16 on bf16 and f16";
  v.can_implement = [precision, name, forced](const GemmProblem& p) {
    GEMMLAB_TRY(require_precision(p, precision, name));
    return fits_device(pick<T, Out>(canonicalize(p), forced), canonicalize(p), name);
  };
  v.prepare = [forced](const GemmProblem& p, RunContext& context) { return prepare<T, Out>(p, context, forced); };
  v.workspace_bytes = [forced](const GemmProblem& p) { return workspace_bytes<T, Out>(p, forced); };
  v.run = [forced](const GemmProblem& p, RunContext& context) { return run<T, Out>(p, context, forced); };
  v.kernel_info = [forced](const GemmProblem& p, KernelInfo& out) { return kernel_info<T, Out>(p, out, forced); };
  v.model = [forced](const GemmProblem& p) {
    const RowMajorGemm rm = canonicalize(p);
    const MmaChoice& choice = pick<T, Out>(rm, forced);
    Traffic t = minimum_traffic(p);
    // Each element of A is loaded once per block column of C, each of B once per block row.
    set_loads_per_fma(t, p, 1.0 / choice.bn + 1.0 / choice.bm);
    t.threads_per_block = choice.threads;
    t.smem_bytes_per_block = choice.smem_bytes(rm.trans_a, rm.trans_b);
    t.launches = plan_sub_grids(rm, grid_limits(choice)).launches();
    return t;
  };
  return v;
}

}  // namespace

// C in float32 keeps the rung's name; C in the input type adds it: mma_sync_bf16_bf16.
Variant mma_sync_variant(DType input, DType output) {
  const bool c16 = output != DType::F32;
  if (input == DType::F16)
    return c16 ? make_variant<__half, __half>("mma_sync_f16_f16", nullptr)
               : make_variant<__half, float>("mma_sync_f16", nullptr);
  return c16 ? make_variant<__nv_bfloat16, __nv_bfloat16>("mma_sync_bf16_bf16", nullptr)
             : make_variant<__nv_bfloat16, float>("mma_sync_bf16", nullptr);
}

}  // namespace gemmlab::cuda
