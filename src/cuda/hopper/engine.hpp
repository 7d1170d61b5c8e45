// The wgmma_ws rungs' entry points (13_wgmma_ws.cu, 14_wgmma_ws_tf32.cu, 15_wgmma_3xtf32.cu):
// prepare, run and kernel_info of one configuration (Options, forms.hpp), and the variant
// bound to a configuration by name. `E` is the element type, `Split` 3xTF32.
//
// A problem goes through: the kernel's problem (C^T for tf32 row-major NN: kernel_problem),
// the copies of operands TMA cannot read as they are (operands.hpp), the form (form_of), and
// the instantiation of that form (with_instantiation), which run launches and kernel_info
// names.
#pragma once

#include <string>
#include <string_view>

#include "core/traffic.hpp"
#include "cuda/hopper/forms.hpp"
#include "cuda/hopper/operands.hpp"
#include "cuda/runtime/device.hpp"
#include "cuda/tiles/kernel_info.hpp"
#include "gemmlab/variant.hpp"

namespace gemmlab::cuda::hopper {

// One problem's way through the engine, before any copy runs.
struct Setup {
  RowMajorGemm g;  // the kernel's problem (C^T's where c_transposed), on the caller's operands
  bool c_transposed = false;
  Plan plan;       // the copies run() makes first
  Form form;
};

template <class E, bool Split>
Setup setup(const GemmProblem& p, const Options& o) {
  Setup s;
  s.g = kernel_problem<E>(canonicalize(p), Split, s.c_transposed);
  s.plan = make_plan<E>(s.g, Split);
  s.form = form_of<typename E::Output>(s.g, o, kSums<E, Split>, ceil_div(s.g.k, kBK<E>), a_in_registers<E>(s.g, Split),
                                       s.c_transposed, kSkipsIdleWarpgroups<E>);
  return s;
}

template <class E, bool Split>
Status prepare(const GemmProblem& p, const Options& o, RunContext& context) {
  if (p.m == 0 || p.n == 0 || p.k == 0) return Status::ok();
  Workspace& w = context.get<Workspace>();
  const Setup s = setup<E, Split>(p, o);
  if (s.form.stream_k) GEMMLAB_TRY(w.reserve_tail(device_sm_count()));  // a grid of at most one block per SM
  if (s.form.lockstep) GEMMLAB_TRY(w.reserve_lockstep());
  return w.reserve(s.plan.bytes());
}

// What prepare() holds for `p`: its operand copies, the lockstep counters, and the stream-K tail's partials that any
// problem of the rung may reserve (Workspace::reserve_tail: a grid of one block per SM),
// counted whether or not this one's form has a tail, so that of two problems whose operands
// are copied alike, the larger's count bounds the smaller's.
template <class E, bool Split>
std::uint64_t workspace_bytes(const GemmProblem& p) {
  const std::uint64_t tail = static_cast<std::uint64_t>(device_sm_count()) *
                                 (kPartialsPerBlock * kTileFloats * sizeof(float) + sizeof(int)) +
                             kLockstepBytes;
  if (p.m == 0 || p.n == 0 || p.k == 0) return tail;
  bool c_transposed = false;
  const RowMajorGemm g = kernel_problem<E>(canonicalize(p), Split, c_transposed);
  return make_plan<E>(g, Split).bytes() + tail;
}

template <class E, bool Split>
Status run(const GemmProblem& p, const Options& o, RunContext& context) {
  const Workspace& w = context.get<Workspace>();
  const Setup s = setup<E, Split>(p, o);
  RowMajorGemm g = s.g;
  const std::int64_t k = g.k;
  GEMMLAB_TRY(stage_operands<E>(g, s.plan, w, context.stream()));
  KernelArgs args;
  // The K loop, and the K extent of the tensor maps (both segments of a split operand).
  const int segment = s.plan.a.layout.segment;
  args.schedule = Split ? KSchedule{segment / kBK<E>, 3, segment} : KSchedule{ceil_div(k, kBK<E>), 1, 0};
  RowMajorGemm view = g;
  view.k = Split ? 2LL * segment : k;
  GEMMLAB_TRY(encode_tensor_map(tma_a<E>(view), "A", args.map_a));
  GEMMLAB_TRY(encode_tensor_map(tma_b<E>(view, s.form.cluster_m), "B", args.map_b));
  if (s.form.tma_epilogue)
    GEMMLAB_TRY(encode_tensor_map(s.c_transposed ? tma_c_transposed(g) : tma_c<typename E::Output>(g), "C",
                                  args.map_c));
  args.e = {g.c,
            g.ldc,
            static_cast<int>(g.m),
            static_cast<int>(g.n),
            static_cast<float>(g.alpha),
            static_cast<float>(g.beta),
            s.form.tma_epilogue,
            s.c_transposed,
            s.form.warp_epilogue};
  args.spread_pieces = s.form.spread_pieces;
  if (s.form.lockstep) {
    if (w.lockstep.bytes() < kLockstepBytes)
      return {StatusCode::InternalError, "wgmma_ws: run() before prepare() reserved the lockstep counters"};
    args.lockstep.counters = static_cast<int*>(w.lockstep.data());
  }
  return with_instantiation<E, Split>(s.form, g.trans_a, g.trans_b, [&](auto instance) -> Status {
    return launch<E, decltype(instance)>(g, context, args, w.tail);
  });
}

// ", sums promoted to f32 every 128 of K by m64n128 halves": what explain adds for a kernel
// whose sums are promoted (consumer.cuh).
template <class E, bool Split>
std::string describe_promotion() {
  if constexpr (kSums<E, Split> == Sums::Plain) return "";
  else if constexpr (Split) return ", big·big sums promoted by m64n128 halves";
  else
    return ", sums promoted to f32 every " + std::to_string(kPromoteK<E>) + " of K by m64n128 halves";
}

template <class E, bool Split>
Status kernel_info(const GemmProblem& p, const Options& o, KernelInfo& out, const char* name) {
  const Setup s = setup<E, Split>(p, o);
  const int k_tiles = ceil_div(s.g.k, kBK<E>);  // of the one-pass runs the stream-K tail takes
  const std::string copies = describe_copies(s.plan);
  // The kernel run() launches: the stream-K instantiation where a tail is left over, the
  // whole-rounds one otherwise.
  return with_instantiation<E, Split>(
      s.form, s.plan.trans_a(s.g), s.plan.trans_b(s.g), [&](auto instance) -> Status {
        using I = decltype(instance);
        LaunchAttributes attributes;
        cudaLaunchConfig_t config;
        stream_k::Schedule schedule;
        GEMMLAB_TRY((launch_config<E, I>(s.g, k_tiles, s.form.spread_pieces, attributes, config, schedule, nullptr)));
        const bool tail = I::kStreamK && schedule.has_tail();
        const auto kernel = tail ? I::template kernel<E> : I::WholeRounds::template kernel<E>;
        const std::string promote = I::kPromote ? describe_promotion<E, Split>() : "";
        return describe_kernel(out, kernel,
                               kernel_name(name, I::kTransA, I::kTransB) +
                                   describe_form(s.form, schedule, config.gridDim.x) +
                                   copies + promote,
                               kThreads, kSmemBytes);
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

// `v`'s requirements, prepare, run and kernel_info bound to configuration `config` (its
// options captured by value); `kernel` names the kernel for explain. The operand copies'
// workspace is the context's, one for every Hopper rung (the calls of a context are ordered
// on its stream, so one rung's copies never overwrite another's still being read).
template <class E, bool Split>
void bind(Variant& v, std::string_view config, const Options& o, std::string kernel) {
  // sm_90a code, which the library checks before any launch (gemmlab/availability.hpp).
  // (Operands TMA cannot address are copied, tf32 operands that are not K-major rewritten
  // K-major: run().)
  v.min_compute_capability = 90;
  v.arch_specific = "90a";
  v.arch_features = "TMA, wgmma, setmaxnreg and clusters";
  v.can_implement = [types = v.can_implement, rung = v.name](const GemmProblem& p) {
    GEMMLAB_TRY(types(p));
    return require_32bit_extents(p, rung.c_str());
  };
  v.config_name = std::string(config);
  v.configs = configurations(kSums<E, Split>);
  v.prepare = [o](const GemmProblem& p, RunContext& context) { return prepare<E, Split>(p, o, context); };
  v.workspace_bytes = workspace_bytes<E, Split>;
  v.run = [o](const GemmProblem& p, RunContext& context) { return run<E, Split>(p, o, context); };
  v.kernel_info = [o, kernel](const GemmProblem& p, KernelInfo& out) {
    return kernel_info<E, Split>(p, o, out, kernel.c_str());
  };
  v.model = model_of;
}

// A Variant::configure for a rung whose variant `make(name, options)` builds, its sums formed
// as `S` says (kSums).
template <Sums S, class Make>
auto configurer(Make make) {
  return [make](std::string_view name, Variant& out) -> Status {
    Options o;
    GEMMLAB_TRY(options_of(name, S, o));
    out = make(name, o);
    return Status::ok();
  };
}

}  // namespace gemmlab::cuda::hopper
