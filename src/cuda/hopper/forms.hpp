// Which form of the warp-specialised kernel a problem runs, host side: the rung's named
// configurations (Options), the form they give per problem (form_of), the one table from a
// form to its kernel instantiation (with_instantiation, used both to launch and to explain),
// and the launch itself.
//
// Configurations (Variant::configs; promoted sums, 3xTF32 and FP8, have fewer: Sums):
//   auto      per problem, as measured on an H100 (form_of): a few tiles spread by K
//             (spread_pays); clusters of 2 where the stream-K tail runs, for 3xTF32 and for
//             a C that TMA cannot address; single blocks elsewhere; the stream-K tail where
//             stream_k::tail_pays;
//   blocks    single blocks, whole rounds;
//   clusters  clusters of 2 along M sharing B by multicast, whole rounds;
//   stream_k  clusters of 2, the stream-K tail wherever units are left over (not 3xTF32, FP8);
//   spread_k  single blocks, every unit cut by K into pieces on as many SMs (stream-K
//             without whole rounds; not 3xTF32); by default for a problem of a few
//             tiles (spread_pays), in as many pieces as stream_k::spread_pieces says pay;
//   free_rounds  auto's form with whole rounds not held in step (lockstep.cuh), to compare.
// Every other configuration holds whole rounds in step.
// Where a configuration cannot apply, the next form runs and explain names it: one row of
// tiles has nothing to share (no cluster); the stream-K tail needs a C that TMA can address
// and clusters of 2.
#pragma once

#include <algorithm>
#include <cstdint>

#include <cuda.h>
#include <cuda_runtime.h>

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "cuda/hopper/kernel.cuh"
#include "cuda/hopper/operands.hpp"
#include "cuda/hopper/stream_k.hpp"
#include "cuda/runtime/check.hpp"
#include "cuda/runtime/device.hpp"
#include "cuda/runtime/kernel_setup.hpp"
#include "cuda/tiles/common.cuh"
#include "gemmlab/variant.hpp"

namespace gemmlab::cuda::hopper {

// ---- named configurations -------------------------------------------------------------------
struct Options {
  bool cluster_auto = true;  // form_of picks single blocks or clusters of 2 per problem
  int cluster_m = 2;         // blocks per cluster along M, where not cluster_auto
  bool auto_tail = true;     // the stream-K tail where stream_k::tail_pays
  bool stream_k = false;     // the stream-K tail wherever units are left over
  bool auto_spread = true;   // units cut by K where spread_pays, into pieces where they pay
  bool spread = false;       // units cut by K wherever they can be, into at least two pieces
  bool lockstep = true;      // whole rounds held in step (lockstep.cuh)
};

// How a rung's sums are formed: in the wgmma accumulators (Plain), or promoted into f32
// registers (consumer.cuh) every stage (FP8: Promoted) or in 3xTF32's last pass over split
// operands (SplitPromoted). Promoted kernels have no warp-stored epilogue; 3xTF32 has no
// stream-K form either (the fix-up beside its sums spilled), and FP8 only the spread one.
enum class Sums : std::uint8_t { Plain, Promoted, SplitPromoted };

// The configurations of a wgmma_ws rung, the default first.
inline std::vector<NamedConfig> configurations(Sums sums) {
  const NamedConfig free_rounds{"free_rounds", "auto's form with its whole rounds not held in step (for comparison)"};
  if (sums == Sums::SplitPromoted)
    return {{"auto", "clusters of 2 along M sharing B by multicast (single blocks ran 6-12 % slower)"},
            {"blocks", "single blocks"},
            free_rounds};
  if (sums == Sums::Promoted)
    return {{"auto", "per problem: K spread over more SMs for a few tiles, else single blocks (clusters of 2 ran "
                     "3-12 % slower at 4096^3 and 8192^3)"},
            {"clusters", "clusters of 2 along M sharing B by multicast"},
            {"spread_k", "single blocks, every tile's K steps cut into pieces on as many SMs"},
            free_rounds};
  return {{"auto", "per problem: K spread over more SMs for a few tiles, clusters of 2 "
                   "with the stream-K tail where it pays, for a C TMA cannot address, else single blocks in whole "
                   "rounds"},
          {"blocks", "single blocks, whole rounds"},
          {"clusters", "clusters of 2 along M sharing B by multicast, whole rounds"},
          {"stream_k", "clusters of 2, the stream-K tail wherever units are left over"},
          {"spread_k", "single blocks, every tile's K steps cut into pieces on as many SMs (stream-K without whole "
                       "rounds)"},
          free_rounds};
}

// The options of configuration `name`; InvalidValue listing the valid names for another.
inline Status options_of(std::string_view name, Sums sums, Options& out) {
  out = Options{};
  const auto listed = [&] {
    for (const NamedConfig& c : configurations(sums))
      if (c.name == name) return true;
    return false;
  };
  if (name == "auto") return Status::ok();
  if (listed() && name == "free_rounds") {
    out.lockstep = false;
    return Status::ok();
  }
  if (listed() && name == "blocks") {
    out = {.cluster_auto = false, .cluster_m = 1, .auto_tail = false, .stream_k = false, .auto_spread = false};
    return Status::ok();
  }
  if (listed() && name == "clusters") {
    out = {.cluster_auto = false, .cluster_m = 2, .auto_tail = false, .stream_k = false, .auto_spread = false};
    return Status::ok();
  }
  if (listed() && name == "stream_k") {
    out = {.cluster_auto = false, .cluster_m = 2, .auto_tail = false, .stream_k = true, .auto_spread = false};
    return Status::ok();
  }
  if (listed() && name == "spread_k") {
    out = {.cluster_auto = false, .cluster_m = 1, .auto_tail = false, .stream_k = false, .auto_spread = false,
           .spread = true};
    return Status::ok();
  }
  std::string valid;
  for (const NamedConfig& c : configurations(sums)) valid += (valid.empty() ? "" : ", ") + c.name;
  return {StatusCode::InvalidValue, "no configuration '" + std::string(name) + "' (the configurations are " + valid + ")"};
}

// ---- the form of one problem ----------------------------------------------------------------
struct Form {
  int cluster_m;       // blocks per cluster along M: 1 or 2
  bool tma_epilogue;   // C through shared memory and TMA (store_tile_tma)
  bool warp_epilogue;  // C warp-stored through shared memory (store_tile_warps); neither: registers
  bool stream_k;       // the stream-K instantiation, which cuts a leftover round by K where there is one
  int spread_pieces;   // > 1: with stream_k and single blocks, every unit cut by K into as many (stream_k::spread)
  bool register_a;     // tf32 A stored k x m, read into registers
  bool c_transposed;   // the kernel computes C^T (kernel_problem)
  bool lockstep;       // whole rounds held in step (lockstep.cuh)
};

// Whether every unit should be cut by K over more SMs (configuration "auto"), as measured
// on an H100 (NT, microseconds, whole tiles against pieces):
//  - one row or one column of at most a quarter as many tiles as SMs, which multiplies a
//    few rows of one operand by all of the other (an LLM's projections at up to 128
//    tokens): 16 tiles in 3-9 pieces ran 1.1-1.9x faster than whole, 4 tiles 1.3-1.7x; 56
//    tiles (N = 14336), two pieces each, 8-29 % slower;
//  - any problem of at most an eighth as many tiles as SMs and a long K loop (32 steps and
//    more): bf16 512 x 1024 x 4096 34.6 against 26.8, 256 x 1024 x 4096 45.3 against 25.8,
//    384 x 384 x 8192 43.1 against 31.2; tf32 alike. Shorter loops or more tiles lost:
//    512^3 12.0 against 15.3, 1000^3 17.2 against 19.6, 256 x 4096 x 4096 (32 tiles) 36.0
//    against 40.1. (Spread over every SM, 1000^3 lost 18 %: docs/what-did-not-pay.md.)
inline bool spread_pays(const RowMajorGemm& g, int sms, int k_steps) {
  const long long tiles_m = ceil_div(g.m, kBM), tiles_n = ceil_div(g.n, kBN), tiles = tiles_m * tiles_n;
  if ((tiles_m == 1 || tiles_n == 1) && 4 * tiles <= sms) return true;
  return 8 * tiles <= sms && k_steps >= 32;
}

// `sums`: how the rung forms its sums; `k_steps`: K steps of one unit of a one-pass run;
// `skips_idle_warpgroups`: the kernel multiplies nothing in a warpgroup without rows of C
// (kSkipsIdleWarpgroups); Out: C's storage type.
template <class Out>
Form form_of(const RowMajorGemm& g, const Options& o, Sums sums, int k_steps, bool register_a, bool c_transposed,
             bool skips_idle_warpgroups) {
  const bool plain = sums == Sums::Plain;
  const bool can_spread = sums != Sums::SplitPromoted;
  Form f;
  f.register_a = register_a;
  f.c_transposed = c_transposed;
  f.lockstep = o.lockstep;
  f.cluster_m = ceil_div(g.m, kBM) >= 2 ? o.cluster_m : 1;  // one row of tiles: nothing to share
  const bool addressable = tma_requirements(c_transposed ? tma_c_transposed(g) : tma_c<Out>(g), "C").is_ok();
  // The stream-K tail: one K pass, clusters of 2, a C the TMA epilogue writes. By default
  // where it pays, from the clusters one block per SM makes (as many as launch_config's
  // grid on an H100: 66).
  const bool has_tail = plain && f.cluster_m == 2 && addressable;
  const bool tail_pays = o.auto_tail && has_tail &&
                         stream_k::tail_pays(static_cast<int>(ceil_div(g.m, kBM * 2) * ceil_div(g.n, kBN)),
                                             device_sm_count() / 2, k_steps);
  f.stream_k = has_tail && (o.stream_k || tail_pays);
  // Spread by K: single blocks (a row of tiles has nothing to share by multicast); by
  // default, as the stream-K tail, for a C the TMA epilogue writes (the stream-K kernels store
  // any other from registers).
  const bool spread =
      can_spread && (o.spread || (o.auto_spread && addressable && spread_pays(g, device_sm_count(), k_steps)));
  // A unit's K step costs half as much where only one warpgroup has rows of C.
  const double step_cost = skips_idle_warpgroups && g.m <= kEpilogueRows ? 0.5 : 1.0;
  const int pieces = stream_k::spread_pieces(k_steps, step_cost);
  f.spread_pieces = !spread ? 0 : o.spread ? std::max(2, pieces) : pieces;
  if (f.spread_pieces > 1) {
    f.cluster_m = 1;
    f.stream_k = true;
  }
  // By default, clusters of 2 only where they pay. Each stage of a cluster waits for both
  // blocks' consumers to hand it back and for both producers' copies, and that coupling
  // costs 1.3-2.2 % of the K loop's cycles (Nsight Compute's locked clock, tf32 and bf16,
  // 4096 x 4096 x K); in whole rounds single blocks ran 1.5-1.9 % faster at 4096^3 and
  // 0.3-7 % at 1000^3, 2048^3 and 6144^3. Clusters stay where the stream-K tail runs (in
  // single blocks its pieces read twice the bytes from DRAM, and with it clusters won 2-8 % at
  // 3072^3, 5120^3 and 8192^3), for
  // 3xTF32 (single blocks 6-12 % slower; likely because its split operands carry twice the
  // bytes per MMA, which multicast halves) and where TMA cannot address C (the warp-stored
  // epilogue: equal for bf16, tf32 1 % slower without). FP8 (promoted sums) ran 3-12 % faster
  // in single blocks at 4096^3 and 8192^3. Measured on an H100.
  const bool keep_clusters = f.stream_k || sums == Sums::SplitPromoted || (plain && !addressable);
  if (o.cluster_auto && f.cluster_m == 2 && !keep_clusters) f.cluster_m = 1;
  f.tma_epilogue = addressable;
  // The warp-stored epilogue: C's rows (not C^T's), in the kernels that have it (kWarpStore).
  f.warp_epilogue = !addressable && !register_a && plain && !f.stream_k && !c_transposed;
  return f;
}

// " (clusters of 2, TMA-store epilogue, 128 blocks)", " (no clusters, A read M-major into
// registers, ...)", "(..., stream-K tail, 132 blocks)", "(..., K spread over every block, 96
// blocks)": the form run() launches, with `plan` its schedule.
inline std::string describe_form(const Form& f, const stream_k::Schedule& plan, unsigned blocks) {
  std::string text = f.cluster_m > 1 ? " (clusters of " + std::to_string(f.cluster_m) + ", " : " (no clusters, ";
  if (f.register_a) text += "A read M-major into registers, ";
  if (f.c_transposed) text += "computing C^T = B^T A^T, ";
  text += f.tma_epilogue ? "TMA-store epilogue, " : f.warp_epilogue ? "warp-stored epilogue, " : "epilogue from registers, ";
  if (plan.has_tail()) text += plan.dp_units == 0 ? "K spread over every block, " : "stream-K tail, ";
  if (!f.lockstep && plan.dp_units > plan.clusters) text += "rounds not held in step, ";
  return text + std::to_string(blocks) + " blocks)";
}

// ---- the one table: form -> instantiation ---------------------------------------------------
// One instantiation of wgmma_ws_kernel, as a type.
template <bool TransA, bool TransB, int ClusterM, bool Promote, bool StreamK>
struct Instance {
  static constexpr bool kTransA = TransA, kTransB = TransB, kPromote = Promote, kStreamK = StreamK;
  static constexpr int kClusterM = ClusterM;
  template <class E>
  static constexpr auto kernel = wgmma_ws_kernel<E, TransA, TransB, ClusterM, Promote, StreamK>;
  using WholeRounds = Instance<TransA, TransB, ClusterM, Promote, false>;  // what runs where no tail is left
};

// How the sums of rung E (Split: 3xTF32) are formed.
template <class E, bool Split>
constexpr Sums kSums = Split ? Sums::SplitPromoted : E::kPromoted ? Sums::Promoted : Sums::Plain;

// Calls f(Instance<...>{}) for the form and the layouts the kernel reads (`trans_a`: A stored
// k x m; `trans_b`: B stored n x k). 16-bit types: any layout; tf32: B K-major, A K-major or
// (one pass) into registers; Split (3xTF32) and FP8: both K-major, sums promoted.
template <class E, bool Split, class F>
Status with_instantiation(const Form& form, bool trans_a, bool trans_b, F&& f) {
  constexpr bool kPromote = kSums<E, Split> != Sums::Plain;
  const auto by_cluster = [&](auto ta, auto tb) -> Status {
    constexpr bool kTa = decltype(ta)::value, kTb = decltype(tb)::value;
    if constexpr (kSums<E, Split> != Sums::SplitPromoted)
      if (form.spread_pieces > 1) return f(Instance<kTa, kTb, 1, kPromote, true>{});
    if (form.cluster_m == 1) return f(Instance<kTa, kTb, 1, kPromote, false>{});
    if constexpr (!kPromote)
      if (form.stream_k) return f(Instance<kTa, kTb, 2, false, true>{});
    return f(Instance<kTa, kTb, 2, kPromote, false>{});
  };
  if constexpr (E::kMnMajor) {
    static_assert(!Split, "3xTF32 splits f32 operands");
    return dispatch_trans(trans_a, trans_b, by_cluster);
  } else {
    if (!trans_b) return {StatusCode::InternalError, "wgmma_ws: a tf32 or FP8 B reached the kernel MN-major"};
    if (!trans_a) return by_cluster(std::false_type{}, std::true_type{});
    if constexpr (kPromote || !E::kRegisterA)
      return {StatusCode::InternalError, "wgmma_ws: an A stored k x m reached a kernel that reads it K-major only"};
    else return by_cluster(std::true_type{}, std::true_type{});
  }
}

// ---- the launch -----------------------------------------------------------------------------
// The persistent grid: the fewest clusters that finish the units (ClusterM tile rows by one
// tile column) in as many rounds as all resident clusters would (2048 tiles of 128 x 256 on
// 132 SMs, one block each: 16 rounds either way, so 128 blocks, each with exactly 16 tiles,
// and every round a whole group of tile rows). Measured on an H100 at 8192^3 NN (no
// clusters): 769-772 TFLOP/s against 759-761 with 132 blocks.
inline int grid_size(int units, int resident_clusters, int cluster_m) {
  const int rounds = ceil_div(units, resident_clusters);
  return ceil_div(units, rounds) * cluster_m;
}

// The launch attributes: the cluster shape, and programmatic stream serialisation (PDL), so
// that the kernel is launched while the operand copy before it drains and waits for it in
// arch::wait_for_dependencies() (repitch_kernel says why).
struct LaunchAttributes {
  cudaLaunchAttribute attrs[2];
};

// What one instantiation needs before its first launch on a device: its shared-memory limit
// raised, then its resident clusters counted (the occupancy query needs the limit). Once per
// context when there is one (a run); each time without (explain's kernel_info).
struct ResidentClusters : KernelSetups {};

template <class E, class I>
Status set_up_kernel(cudaLaunchConfig_t& config, RunContext* context, int& resident) {
  constexpr auto kernel = I::template kernel<E>;
  const void* key = reinterpret_cast<const void*>(kernel);
  if (context)
    if (const int* known = context->get<ResidentClusters>().find(key)) {
      resident = *known;
      return Status::ok();
    }
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  config.gridDim = dim3(I::kClusterM);
  CUDA_CHECK(cudaOccupancyMaxActiveClusters(&resident, kernel, &config));
  if (context) context->get<ResidentClusters>().done.emplace_back(key, resident);
  return Status::ok();
}

// The launch of one instantiation: set up (set_up_kernel), and the persistent grid for `g`.
// `plan` receives
// the clusters' work: with StreamK, whole rounds and a tail cut by K over all resident
// clusters where units are left over; otherwise (or without a leftover) the fewest clusters
// that finish in as many rounds.
template <class E, class I>
Status launch_config(const RowMajorGemm& g, int k_tiles, int spread_pieces, LaunchAttributes& attributes,
                     cudaLaunchConfig_t& config, stream_k::Schedule& plan, RunContext* context) {
  constexpr auto kernel = I::template kernel<E>;
  constexpr int kClusterM = I::kClusterM;
  attributes = {};
  cudaLaunchAttribute& cluster = attributes.attrs[0];
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = kClusterM;
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
  int resident = 0;
  GEMMLAB_TRY((set_up_kernel<E, I>(config, context, resident)));
  if (resident < 1)
    return {StatusCode::ArchMismatch, "wgmma_ws: no cluster of " + std::to_string(kClusterM) +
                                          " blocks fits on this GPU (the configuration 'blocks' runs without)"};
  // A context that leaves SMs to other kernels (Context::set_sm_count_target) caps the grid.
  if (context && context->sm_count_target() > 0)
    resident = std::max(1, std::min(resident, context->sm_count_target() / kClusterM));
  const int units = ceil_div(g.m, kBM * kClusterM) * ceil_div(g.n, kBN);
  if constexpr (I::kStreamK) {
    plan = spread_pieces > 1 ? stream_k::spread(units, resident, k_tiles, spread_pieces)
                             : stream_k::with_tail(units, resident, k_tiles);
    if (plan.has_tail()) {
      config.gridDim = dim3(plan.clusters * kClusterM);
      config.numAttrs = 2;
      return Status::ok();
    }
  }
  config.gridDim = dim3(grid_size(units, resident, kClusterM));
  config.numAttrs = 2;
  plan = stream_k::rounds_only(units, static_cast<int>(config.gridDim.x) / kClusterM, k_tiles);
  return Status::ok();
}

// The kernel's arguments beyond its instantiation.
struct KernelArgs {
  CUtensorMap map_a{}, map_b{}, map_c{};
  Epilogue e{};
  KSchedule schedule{};
  Lockstep lockstep{};    // counters: nullptr where rounds run free
  int spread_pieces = 0;  // Form::spread_pieces: not passed to the kernel; launch() makes the schedule from it
};

template <class E, class I>
Status launch(const RowMajorGemm& g, RunContext& context, const KernelArgs& args, const StreamKWorkspace& tail) {
  LaunchAttributes attributes;
  cudaLaunchConfig_t config;
  StreamKArgs sk;
  GEMMLAB_TRY((launch_config<E, I>(g, args.schedule.k_tiles * args.schedule.segments, args.spread_pieces, attributes,
                                   config, sk.schedule, &context)));
  if constexpr (I::kStreamK) {
    if (!sk.schedule.has_tail()) return launch<E, typename I::WholeRounds>(g, context, args, tail);
    const std::size_t partial_bytes =
        kPartialsPerBlock * static_cast<std::size_t>(config.gridDim.x) * kTileFloats * sizeof(float);
    if (tail.partials.bytes() < partial_bytes ||
        tail.arrived.bytes() < static_cast<std::size_t>(config.gridDim.x) * sizeof(int))
      return {StatusCode::InternalError, "wgmma_ws: run() before prepare() sized the stream-K workspace"};
    sk.partials = static_cast<float*>(tail.partials.data());
    sk.arrived = static_cast<int*>(tail.arrived.data());
  }
  config.stream = static_cast<cudaStream_t>(context.stream());
  CUDA_CHECK(cudaLaunchKernelEx(&config, I::template kernel<E>, args.map_a, args.map_b, args.map_c, args.e,
                                args.schedule, sk, args.lockstep));
  CUDA_CHECK_LAUNCH("wgmma_ws_kernel");
  return Status::ok();
}

}  // namespace gemmlab::cuda::hopper
