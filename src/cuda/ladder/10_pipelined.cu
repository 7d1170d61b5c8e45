// Rung 10 (cuda): a multi-stage shared-memory pipeline. A block keeps kStages - 1 tiles
// in flight while it computes on the oldest, so global-memory latency hides behind the
// math of earlier tiles, with one barrier per tile. Tiles sit k-major in shared memory,
// (BK, BM) and (BK, BN), as the warp-tile compute wants them. An operand whose rows
// already run along m or n (A^T, B) is copied with cp.async, straight to shared memory;
// one that must be transposed on the way (A, B^T) is loaded into registers one tile
// ahead and stored after the math, so its latency hides too. Blocks run in grouped order
// for L2 reuse. The configuration "auto" picks the tiles per problem from a small table;
// each tile configuration is also a named configuration of its own.
#include <cuda_runtime.h>

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "cuda/arch/cp_async.cuh"
#include "cuda/tiles/common.cuh"
#include "cuda/tiles/device_limits.hpp"
#include "cuda/tiles/kernel_info.hpp"
#include "cuda/tiles/operand_staging.cuh"
#include "cuda/tiles/sub_grid.hpp"
#include "cuda/ladder/rungs.hpp"
#include "cuda/tiles/tile_copy.cuh"
#include "cuda/tiles/warp_tile.cuh"
#include "cuda/runtime/buffer.hpp"
#include "cuda/runtime/check.hpp"
#include "cuda/runtime/kernel_setup.hpp"

namespace gemmlab::cuda {
namespace {

constexpr int kPad = 4;     // 16 bytes: rows stay float4-aligned, transposing stores spread
constexpr int kGroupM = 8;  // block rows per L2 group

template <class Cfg>
struct PipelinedLayout {
  using A = SmemLayout<1, Cfg::BM + kPad>;  // (m, k) at k * (BM + pad) + m
  using B = SmemLayout<Cfg::BN + kPad, 1>;  // (k, n) at k * (BN + pad) + n
  static constexpr int kStageA = Cfg::BK * (Cfg::BM + kPad);
  static constexpr int kStageB = Cfg::BK * (Cfg::BN + kPad);
  static constexpr int kSmemBytes = Cfg::kStages * (kStageA + kStageB) * static_cast<int>(sizeof(float));
};

// One operand's path into shared memory: cp.async when its global rows are already
// k-major (Async), through registers with a transposing store otherwise.
template <int Rows, int Cols, int Threads, bool ColsContiguous, bool Vec, bool Async>
struct OperandPipe {
  StagedTileCopy<Rows, Cols, Threads, ColsContiguous, Vec> staged;

  // Starts moving the tile: lands in `stage` (async) or in registers (staged).
  template <class Layout>
  __device__ __forceinline__ void fetch(const TileSource& src, float* stage, int tid) {
    if constexpr (Async) AsyncTileCopy<Rows, Cols, Threads, ColsContiguous, Vec>::template copy<Layout>(src, stage, tid);
    else staged.load(src, tid);
  }
  // Finishes a staged fetch: registers to shared memory. Nothing to do for cp.async.
  template <class Layout>
  __device__ __forceinline__ void deposit(float* stage, int tid) const {
    if constexpr (!Async) staged.template store<Layout>(stage, tid);
  }
};

// How a block walks k through a stage. PerStage: a barrier, then each k step loads its
// fragments and multiplies (the compiler decides how far ahead the loads go; at 255
// registers it issues them just before their FFMAs). FragmentsAhead: fragments
// double-buffered in registers, step k + 1's loads issued before step k's FFMAs, and the
// barrier inside a tile's last step.
enum class Schedule { PerStage, FragmentsAhead };

// A warp-tile configuration (warp_tile.cuh) and the schedule of its main loop.
template <class Tile, Schedule S>
struct PipelinedConfig : Tile {
  static constexpr Schedule kSchedule = S;
};

template <class Cfg, bool TransA, bool TransB, bool Vec>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    pipelined_kernel(GemmArgs g, bool vec_c, int tiles_m, int tiles_n) {
  static_assert(Cfg::kStages >= 2, "a pipeline needs at least two stages");
  using L = PipelinedLayout<Cfg>;
  // A^T is stored with m contiguous and B with n contiguous: both already k-major.
  OperandPipe<Cfg::BM, Cfg::BK, Cfg::kThreads, !TransA, Vec, /*Async=*/TransA> pipe_a;
  OperandPipe<Cfg::BK, Cfg::BN, Cfg::kThreads, !TransB, Vec, /*Async=*/!TransB> pipe_b;
  extern __shared__ float4 smem_words[];  // float4: 16-byte alignment for cp.async
  float* sA = reinterpret_cast<float*>(smem_words);  // kStages x (BK, BM + pad)
  float* sB = sA + Cfg::kStages * L::kStageA;        // kStages x (BK, BN + pad)
  const int tid = threadIdx.x;
  int block_m, block_n;
  grouped_block<kGroupM>(tiles_m, tiles_n, block_m, block_n);
  const int row0 = block_m * Cfg::BM, col0 = block_n * Cfg::BN;
  const int k_tiles = ceil_div(g.k, Cfg::BK);

  const auto fetch = [&](int kt) {
    const int stage = kt % Cfg::kStages;
    pipe_a.template fetch<typename L::A>(a_tile<TransA>(g, row0, kt * Cfg::BK), sA + stage * L::kStageA, tid);
    pipe_b.template fetch<typename L::B>(b_tile<TransB>(g, kt * Cfg::BK, col0), sB + stage * L::kStageB, tid);
  };
  const auto deposit = [&](int kt) {
    const int stage = kt % Cfg::kStages;
    pipe_a.template deposit<typename L::A>(sA + stage * L::kStageA, tid);
    pipe_b.template deposit<typename L::B>(sB + stage * L::kStageB, tid);
  };

  // Prologue: kStages - 1 tiles in flight. Every iteration commits one group (empty ones
  // too), so "at most kStages - 2 groups pending" always means "tile kt has landed".
#pragma unroll
  for (int s = 0; s < Cfg::kStages - 1; ++s) {
    if (s < k_tiles) {
      fetch(s);
      deposit(s);
    }
    arch::cp_async_commit();
  }
  using Mma = WarpTileMma<Cfg, typename L::A, typename L::B>;
  Mma mma;
  mma.init(tid);
  const auto stage_a = [&](int kt) { return sA + (kt % Cfg::kStages) * L::kStageA; };
  const auto stage_b = [&](int kt) { return sB + (kt % Cfg::kStages) * L::kStageB; };
  if constexpr (Cfg::kSchedule == Schedule::PerStage) {
    for (int kt = 0; kt < k_tiles; ++kt) {
      arch::cp_async_wait<Cfg::kStages - 2>();
      // Tile kt is complete and visible; every thread is done with the stage computed in
      // the previous iteration, which tile kt + kStages - 1 now overwrites.
      __syncthreads();
      const bool more = kt + Cfg::kStages - 1 < k_tiles;
      if (more) fetch(kt + Cfg::kStages - 1);
      arch::cp_async_commit();
      mma.compute(stage_a(kt), stage_b(kt));
      // Staged operands: their loads had the whole computation to arrive.
      if (more) deposit(kt + Cfg::kStages - 1);
    }
  } else if (k_tiles > 0) {
    // FragmentsAhead: step k's FFMAs run while step k + 1's fragments load, so no step
    // waits on shared memory. The barrier sits in a tile's last step, before the first
    // fragments of the next tile load; those, and the barrier, overlap that last step.
    static_assert(Cfg::BK % 2 == 0, "the two fragment buffers alternate within a tile");
    typename Mma::Fragments frag[2];  // [k % 2]
    arch::cp_async_wait<Cfg::kStages - 2>();
    __syncthreads();
    mma.load(stage_a(0), stage_b(0), 0, frag[0]);
    for (int kt = 0; kt < k_tiles; ++kt) {
      // The stage tile kt + kStages - 1 overwrites held tile kt - 1, whose last fragments
      // were read before the previous barrier.
      const bool more = kt + Cfg::kStages - 1 < k_tiles;
      if (more) fetch(kt + Cfg::kStages - 1);
      arch::cp_async_commit();
      const float* a = stage_a(kt);
      const float* b = stage_b(kt);
#pragma unroll
      for (int k = 0; k < Cfg::BK; ++k) {
        if (k < Cfg::BK - 1) {
          mma.load(a, b, k + 1, frag[(k + 1) % 2]);
        } else {
          // Staged operands: their loads had the whole tile to arrive.
          if (more) deposit(kt + Cfg::kStages - 1);
          if (kt + 1 < k_tiles) {
            // Tile kt + 1 is complete and visible (as in PerStage), and every thread has
            // read its last fragments of tile kt.
            arch::cp_async_wait<Cfg::kStages - 2>();
            __syncthreads();
            mma.load(stage_a(kt + 1), stage_b(kt + 1), 0, frag[0]);
          }
        }
        // A code-motion fence for ptxas (a NOP in SASS): without it, ptxas sinks step
        // k + 1's LDS below step k's FFMAs again, to just before their first use, and
        // the warp stalls on shared-memory latency at the start of every step.
        __syncwarp();
        mma.fma(frag[k % 2]);
      }
    }
  }
  arch::cp_async_wait<0>();
  mma.store(g, row0, col0, vec_c);
}

// One instantiation's launch. Its dynamic shared-memory limit is raised once per context,
// by the first call (outside any timed region: the harness's first call is an untimed
// verification run).
template <class Cfg, bool TransA, bool TransB, bool Vec>
Status launch_kernel(const GemmArgs& g, bool vec_c, int tiles_m, int tiles_n, RunContext& context) {
  constexpr int kBytes = PipelinedLayout<Cfg>::kSmemBytes;
  GEMMLAB_TRY(allow_dynamic_smem(context, pipelined_kernel<Cfg, TransA, TransB, Vec>, kBytes));
  const auto s = static_cast<cudaStream_t>(context.stream());
  pipelined_kernel<Cfg, TransA, TransB, Vec><<<tiles_m * tiles_n, Cfg::kThreads, kBytes, s>>>(g, vec_c, tiles_m, tiles_n);
  CUDA_CHECK_LAUNCH("pipelined_kernel");
  return Status::ok();
}

template <class Cfg>
Status launch(const GemmArgs& g, bool trans_a, bool trans_b, RunContext& context) {
  const int tiles_m = ceil_div(g.m, Cfg::BM), tiles_n = ceil_div(g.n, Cfg::BN);
  const bool vec_ab = rows_16b_aligned(g.a, g.lda) && rows_16b_aligned(g.b, g.ldb);
  const bool vec_c = rows_16b_aligned(g.c, g.ldc);
  return dispatch_trans(trans_a, trans_b, [&](auto ta, auto tb) -> Status {
    constexpr bool kTa = decltype(ta)::value, kTb = decltype(tb)::value;
    return vec_ab ? launch_kernel<Cfg, kTa, kTb, true>(g, vec_c, tiles_m, tiles_n, context)
                  : launch_kernel<Cfg, kTa, kTb, false>(g, vec_c, tiles_m, tiles_n, context);
  });
}

// For explain: the kernel launch<Cfg>() runs for this problem (configuration, transposition,
// float4 or scalar loads) with its dynamic shared memory.
template <class Cfg>
Status describe_pipelined(const RowMajorGemm& rm, const char* config, bool transposed, KernelInfo& out) {
  const GemmArgs g = make_args(rm);
  const bool vec_ab = rows_16b_aligned(g.a, g.lda) && rows_16b_aligned(g.b, g.ldb);
  const std::string name = kernel_name("pipelined_kernel", rm.trans_a, rm.trans_b, std::string(config) + ", ") +
                           (vec_ab ? " float4" : " scalar") + (transposed ? ", after A transposed into a workspace" : "");
  return dispatch_trans(rm.trans_a, rm.trans_b, [&](auto ta, auto tb) {
    constexpr bool kTa = decltype(ta)::value, kTb = decltype(tb)::value;
    constexpr int kBytes = PipelinedLayout<Cfg>::kSmemBytes;
    return vec_ab ? describe_kernel(out, pipelined_kernel<Cfg, kTa, kTb, true>, name, Cfg::kThreads, kBytes)
                  : describe_kernel(out, pipelined_kernel<Cfg, kTa, kTb, false>, name, Cfg::kThreads, kBytes);
  });
}

// The tuning space, as data: each entry one instantiated configuration, and each a named
// configuration of the rung (`--config 128x64`), which runs that kernel on the problem as
// it is. The configuration "auto" picks among them by problem shape (kTableStagedA,
// kTableAsyncA below) and transposes A for wide NN problems.
//                                                     BM   BN  BK  WM  WN stages min blocks/SM
using Tile256x128 = PipelinedConfig<WarpTileConfig<256, 128, 16, 64, 64, 3, 1>, Schedule::PerStage>;
using Tile128x128k8 = PipelinedConfig<WarpTileConfig<128, 128, 8, 64, 64, 4, 2>, Schedule::PerStage>;
// (128 x 64 keeps the row order: at 3 blocks per SM, 85 registers, the serpentine order's
// NT kernel spilled 100 bytes against 28.)
using Tile128x64 =
    PipelinedConfig<WarpTileConfig<128, 64, 16, 64, 32, 3, 3, OuterProduct::Rows>, Schedule::PerStage>;
using Tile64x64 = PipelinedConfig<WarpTileConfig<64, 64, 16, 32, 32, 3, 4>, Schedule::PerStage>;
// Fragments loaded a step ahead ("fa"):
using Tile256x128fa = PipelinedConfig<WarpTileConfig<256, 128, 16, 64, 64, 3, 1>, Schedule::FragmentsAhead>;
using Tile256x128k8fa = PipelinedConfig<WarpTileConfig<256, 128, 8, 64, 64, 3, 1>, Schedule::FragmentsAhead>;
using Tile128x128k8fa = PipelinedConfig<WarpTileConfig<128, 128, 8, 64, 64, 4, 2>, Schedule::FragmentsAhead>;
// The table's two choices with each k step's FFMAs row by row (OuterProduct::Rows, the order
// the serpentine replaced), to time against the serpentine order every configuration above uses:
using Tile256x128faRows =
    PipelinedConfig<WarpTileConfig<256, 128, 16, 64, 64, 3, 1, OuterProduct::Rows>, Schedule::FragmentsAhead>;
using Tile128x128k8Rows =
    PipelinedConfig<WarpTileConfig<128, 128, 8, 64, 64, 4, 2, OuterProduct::Rows>, Schedule::PerStage>;

struct PipelinedChoice {
  const char* name;
  int bm, bn, bk, wm, wn, stages, min_blocks, threads;
  int smem_bytes;  // dynamic shared memory per block: kStages x ((BK, BM + pad) + (BK, BN + pad))
  Schedule schedule;
  OuterProduct order;
  Status (*launch)(const GemmArgs&, bool, bool, RunContext&);
  Status (*describe)(const RowMajorGemm&, const char* config, bool transposed, KernelInfo&);
};

template <class Cfg>
constexpr PipelinedChoice choice(const char* name) {
  return {name,         Cfg::BM,   Cfg::BN,     Cfg::BK,     Cfg::WM, Cfg::WN, Cfg::kStages, Cfg::kMinBlocks,
          Cfg::kThreads, PipelinedLayout<Cfg>::kSmemBytes, Cfg::kSchedule, Cfg::kOrder, launch<Cfg>,
          describe_pipelined<Cfg>};
}

constexpr std::array kChoices = {choice<Tile256x128>("256x128"),         choice<Tile128x128k8>("128x128k8"),
                                 choice<Tile128x64>("128x64"),           choice<Tile64x64>("64x64"),
                                 choice<Tile256x128fa>("256x128fa"),     choice<Tile256x128k8fa>("256x128k8fa"),
                                 choice<Tile128x128k8fa>("128x128k8fa"),
                                 choice<Tile256x128faRows>("256x128fa_rows"),
                                 choice<Tile128x128k8Rows>("128x128k8_rows")};

// Per way A arrives, the configurations to try from the largest tile down: the first that
// fits the device's shared memory (the 256 x 128 tiles take 74 KiB, more than sm_75's 64)
// and whose grid has at least `min_waves` blocks per SM is used (0.9: 2048^2 gives 128
// large tiles for 132 SMs, still faster than 512 small ones). Staged through registers
// (NN, NT) the 256 x 128 tile with fragments loaded a step ahead measured best (NN 44.8
// against 43.5 TFLOP/s at 4096^3); by cp.async (TN, TT) the 128 x 128 tile with BK = 8,
// where loading ahead measured slower (45.8 against 47.0) (H100 SXM).
struct TableEntry {
  const char* config;
  double min_waves;
};
constexpr std::array kTableStagedA = {TableEntry{"256x128fa", 0.9}, TableEntry{"128x64", 1.0},
                                 TableEntry{"64x64", 0.0}};
constexpr std::array kTableAsyncA = {TableEntry{"128x128k8", 1.0}, TableEntry{"128x64", 1.0},
                                    TableEntry{"64x64", 0.0}};

// NN (A's rows run along k) with n >= kTransposeMinN: A is transposed once into a
// workspace by the seeds' tiled transpose (staging::stage_k_major), so that both operands
// go by cp.async and the TN kernels run (measured on an H100: 48.4 against 45.6 TFLOP/s at
// 4096^3, in the same run). The transpose moves 2 m k floats, about 63 / n of the GEMM's
// time at these rates: 1.5 % at n = 4096, break-even near n = 1000.
constexpr std::int64_t kTransposeMinN = 2048;

constexpr std::string_view kAuto = "auto";

const PipelinedChoice* find_choice(std::string_view name) {
  for (const PipelinedChoice& c : kChoices)
    if (name == c.name) return &c;
  return nullptr;
}

// What a bound variant runs: the per-shape choice ("auto", nullptr) or one configuration,
// which runs its kernel on the problem as it is (no transpose).
using Forced = const PipelinedChoice*;

// Whether run() transposes A first (kTransposeMinN).
bool transposes_a(const RowMajorGemm& g, Forced forced) {
  return forced == nullptr && !g.trans_a && !g.trans_b && g.n >= kTransposeMinN && g.k > 0;
}

// A^T (k x m, rows padded to 16 bytes) as the transpose writes it.
staging::StagedLayout transposed_a_layout(const RowMajorGemm& g) {
  constexpr int kPerRow = 16 / static_cast<int>(sizeof(float));
  return {static_cast<int>((g.m + kPerRow - 1) / kPerRow * kPerRow), 1};
}

// The problem the kernel runs: g itself, or (transposes_a) TN on A^T in the workspace.
RowMajorGemm kernel_problem(const RowMajorGemm& g, const void* workspace, Forced forced) {
  if (!transposes_a(g, forced)) return g;
  RowMajorGemm t = g;
  t.a = workspace;
  t.lda = transposed_a_layout(g).pitch();
  t.trans_a = true;
  return t;
}

// A^T's workspace in the context: grown by prepare(), only read by run().
struct TransposedA {
  DeviceMemory memory;
};

// Any 16-byte aligned address describes the same kernel as the workspace's (for explain and
// the model, which may ask before the workspace exists).
alignas(16) constexpr float kAnyAligned[4] = {};
const void* any_aligned() { return kAnyAligned; }

// One launch is a 1-D grid of tiles in int: problems past 2^31 rows or columns run as
// sub-grids in sequence (the K loop counts tiles: any k in int).
GridLimits grid_limits(const PipelinedChoice& c) { return tiles_on_x(c.bm, c.bn); }

const PipelinedChoice& pick(const RowMajorGemm& g, Forced forced) {
  if (forced) return *forced;
  const auto choose = [&](const auto& table) -> const PipelinedChoice& {
    for (const TableEntry& e : table) {
      const PipelinedChoice& c = *find_choice(e.config);
      if (!smem_fits(c.smem_bytes)) continue;
      const double blocks = static_cast<double>(ceil_div(g.m, c.bm)) * ceil_div(g.n, c.bn);
      if (blocks >= e.min_waves * device_sm_count()) return c;
    }
    return *find_choice(table.back().config);
  };
  return g.trans_a ? choose(kTableAsyncA) : choose(kTableStagedA);
}

Status kernel_info(const GemmProblem& p, KernelInfo& out, Forced forced) {
  const RowMajorGemm g = canonicalize(p);
  const RowMajorGemm rm = kernel_problem(g, any_aligned(), forced);
  const PipelinedChoice& c = pick(rm, forced);
  return c.describe(rm, c.name, transposes_a(g, forced), out);
}

Status prepare(const GemmProblem& p, RunContext& context, Forced forced) {
  const RowMajorGemm g = canonicalize(p);
  if (!transposes_a(g, forced)) return Status::ok();
  DeviceMemory& workspace = context.get<TransposedA>().memory;
  const std::size_t bytes = transposed_a_layout(g).bytes(static_cast<int>(g.k));
  if (bytes <= workspace.bytes()) return Status::ok();
  workspace = DeviceMemory{};  // free the old block before taking the larger one
  return DeviceMemory::allocate(bytes, workspace);
}

Status run(const GemmProblem& p, RunContext& context, Forced forced) {
  const RowMajorGemm g = canonicalize(p);
  DeviceMemory& workspace = context.get<TransposedA>().memory;
  const RowMajorGemm rm = kernel_problem(g, workspace.data(), forced);
  if (rm.a != g.a) {
    const staging::StagedLayout layout = transposed_a_layout(g);
    if (workspace.bytes() < layout.bytes(static_cast<int>(g.k)))
      return {StatusCode::InternalError, "pipelined: run() before prepare() sized the workspace for A^T"};
    // Row kk of A^T is column kk of A: rows = k, "K" = m, read with A's k strided.
    GEMMLAB_TRY(staging::stage_k_major(static_cast<const float*>(g.a), g.lda, /*k_contiguous=*/false,
                                       static_cast<int>(g.k), static_cast<int>(g.m), /*split=*/false, layout,
                                       workspace.as<float>(), context.stream()));
  }
  const PipelinedChoice& c = pick(rm, forced);
  return for_each_sub_grid(rm, grid_limits(c), sizeof(float), sizeof(float), [&](const RowMajorGemm& sub) {
    return c.launch(make_args(sub), sub.trans_a, sub.trans_b, context);
  });
}

std::string describe_choice(const PipelinedChoice& c) {
  return "BM=" + std::to_string(c.bm) + " BN=" + std::to_string(c.bn) + " BK=" + std::to_string(c.bk) +
         " WM=" + std::to_string(c.wm) + " WN=" + std::to_string(c.wn) + ", " + std::to_string(c.stages) +
         " stages, " + (c.schedule == Schedule::FragmentsAhead ? "fragments loaded a step ahead" : "fragments per stage") +
         ", FFMAs " + (c.order == OuterProduct::Rows ? "row by row" : "in serpentine order") +
         ", on the problem as it is";
}

std::vector<NamedConfig> configurations() {
  std::vector<NamedConfig> configs = {
      {std::string(kAuto), "tiles per problem shape (256x128fa or 128x128k8 down to 64x64 as the grid fills the "
                           "SMs, of those that fit the GPU's shared memory), A transposed into a workspace for NN with n >= " +
                               std::to_string(kTransposeMinN)}};
  for (const PipelinedChoice& c : kChoices) configs.push_back({c.name, describe_choice(c)});
  return configs;
}

Variant make_variant(Forced forced);

Status configure(std::string_view name, Variant& out) {
  if (name == kAuto) {
    out = make_variant(nullptr);
    return Status::ok();
  }
  const PipelinedChoice* c = find_choice(name);
  if (!c) return {StatusCode::InvalidValue, "neither auto nor one of its tile configurations"};
  out = make_variant(c);
  return Status::ok();
}

Variant make_variant(Forced forced) {
  // Printed: the forced configuration, or the largest tile the automatic choice takes.
  const PipelinedChoice& shown = forced ? *forced : kChoices.front();
  Variant v;
  v.rung = 10;
  v.name = "pipelined";
  v.backend = Backend::Cuda;
  v.technique = forced ? std::string("cp.async multi-stage pipeline, grouped block order, ") + forced->name + " tiles"
                       : "cp.async multi-stage pipeline, grouped block order, tiles chosen per shape, A transposed for NN";
  v.config = {{{"BM", shown.bm}, {"BN", shown.bn}, {"BK", shown.bk}, {"WM", shown.wm}, {"WN", shown.wn},
               {"stages", shown.stages}, {"min_blocks", shown.min_blocks}, {"threads", shown.threads}}};
  v.config_name = forced ? forced->name : std::string(kAuto);
  v.configs = configurations();
  v.configure = configure;
  v.can_implement = [forced](const GemmProblem& p) {
    GEMMLAB_TRY(require_f32_simt(p, "pipelined"));
    // "auto" picks only configurations that fit; a forced one may not.
    return forced ? require_smem(forced->smem_bytes, "pipelined", forced->name) : Status::ok();
  };
  v.prepare = [forced](const GemmProblem& p, RunContext& context) { return prepare(p, context, forced); };
  v.run = [forced](const GemmProblem& p, RunContext& context) { return run(p, context, forced); };
  v.kernel_info = [forced](const GemmProblem& p, KernelInfo& out) { return kernel_info(p, out, forced); };
  v.model = [forced](const GemmProblem& p) {
    const RowMajorGemm rm = kernel_problem(canonicalize(p), any_aligned(), forced);
    const PipelinedChoice& c = pick(rm, forced);
    Traffic t = minimum_traffic(p);
    set_loads_per_fma(t, p, 1.0 / c.bn + 1.0 / c.bm);
    t.threads_per_block = c.threads;
    t.smem_bytes_per_block = c.smem_bytes;
    t.launches = plan_sub_grids(rm, grid_limits(c)).launches();
    return t;
  };
  return v;
}

}  // namespace

Variant pipelined_variant() { return make_variant(nullptr); }

}  // namespace gemmlab::cuda
