// The distributed GEMM's NCCL driver (gemmlab/distributed.hpp), panels of K: one thread
// enqueues every GPU's work, then waits for all of it with a deadline. (Slices of C:
// slices.cpp; the stripe: stripe.cpp; what they share: schedule.hpp; the group's state:
// group.hpp.)
//
// Per GPU there are two streams: the context's, which runs the panel products, and a comm
// stream of the group's, which runs every panel's broadcasts in the plan's order (NCCL needs
// the same order of collectives on every member). A GPU first multiplies the panels it needs
// nothing for (it roots them, or the operand never moves on this grid), while the others
// arrive; then the received panels in order, each after an event its broadcast recorded.
// Received panels land in two buffers per operand: a broadcast into a buffer waits for the
// product that read the buffer's previous panel. A root whose part of a panel is not one
// contiguous run packs it into a send buffer first (NCCL moves contiguous bytes); one that
// is contiguous (B's rows of a dense row-major block) is broadcast where it lies.
//
// With copy engines (PanelTransport::CopyEngines, where one operand moves) the panels move in
// rounds instead: round s is one all-gather in which every GPU sends the s-th panel it holds
// (packed into its slot of a receive buffer in NCCL's symmetric window) and receives the
// others'. NCCL runs it on the copy engines, so no broadcast waits for SMs a product holds.
// Two receive buffers, used in turn: the gather of round s waits for the products of round
// s - 2's panels.
#include <algorithm>
#include <array>

#include "cuda/distributed.hpp"
#include "cuda/nccl/schedule.hpp"

namespace gemmlab::cuda {
namespace {

using namespace distributed;

// Each context's SM count target lowered by `ctas` SMs for one call, and set back after it.
class SmTargets {
 public:
  explicit SmTargets(DeviceGroup& group) : group_(group) {}
  ~SmTargets() {
    for (std::size_t g = 0; g < before_.size(); ++g) group_.context(static_cast<int>(g)).set_sm_count_target(before_[g]);
  }
  SmTargets(const SmTargets&) = delete;
  SmTargets& operator=(const SmTargets&) = delete;
  Status leave(int ctas) {
    for (int g = 0; g < group_.size(); ++g) {
      Context& context = group_.context(g);
      GEMMLAB_TRY(make_current(group_.device(g)));
      const int sms = context.sm_count_target() > 0 ? context.sm_count_target() : device_sm_count();
      before_.push_back(context.sm_count_target());
      context.set_sm_count_target(std::max(1, sms - ctas));
    }
    return Status::ok();
  }

 private:
  DeviceGroup& group_;
  std::vector<int> before_;
};

// What GPU g multiplies for one panel, where each operand's panel comes from.
struct Step {
  std::size_t panel = 0;
  bool receives_a = false, receives_b = false;
  int a_buffer = 0, b_buffer = 0;  // which receive buffer, where received
  void* received = nullptr;        // copy engines: where the moving operand's panel lands
};

// One all-gather of the copy-engine transport: the panel each member roots (by its position
// in the communicator), every member's part `bytes` long (the widest of them, packed).
struct Round {
  std::vector<std::size_t> panels;
  std::uint64_t bytes = 0;
};

// The rounds of `plan` where the moving operand's panels (B's on a P x 1 grid, else A's) are
// rooted `members` ways: round s holds each root's s-th panel. False where the roots hold
// different numbers of panels (an all-gather moves as much from every member).
bool make_rounds(const DistributedPlan& plan, bool b_moves, int members, std::vector<Round>& out) {
  std::vector<std::vector<std::size_t>> by_root(static_cast<std::size_t>(members));
  for (std::size_t t = 0; t < plan.panels.size(); ++t) {
    const int root = b_moves ? plan.panels[t].b_root : plan.panels[t].a_root;
    if (root < 0 || root >= members) return false;
    by_root[static_cast<std::size_t>(root)].push_back(t);
  }
  out.assign(by_root.front().size(), Round{});
  for (std::size_t s = 0; s < out.size(); ++s)
    for (const std::vector<std::size_t>& panels : by_root) {
      if (panels.size() != out.size()) return false;
      out[s].panels.push_back(panels[s]);
    }
  return true;
}

}  // namespace

Status run_distributed(DeviceGroup& group, const DistributedGemmProblem& problem, const Variant& variant,
                       const DistributedPlan& plan, const DistributedOptions& options, DistributedRun& run) {
  DeviceGroupState& s = group.state();
  if (!s.broken.empty())
    return {StatusCode::ExecutionFailed, fmt::format("this device group is unusable: {}; make a new one", s.broken)};
  if (plan.cut == DistributedCut::Slices) return run_slices(group, problem, variant, plan, run);
  if (plan.cut == DistributedCut::Stripe) return run_stripe(group, problem, variant, plan, run);
  const ProcessGrid& grid = plan.grid;
  const int gpus = grid.size();
  const auto G = [](int g) { return static_cast<std::size_t>(g); };
  // Copy engines where one operand moves (a grid of one column moves B, of one row A) and its
  // roots hold as many panels each.
  const bool b_moves = grid.only_b_moves();
  std::vector<Round> rounds;
  const bool copy_engines = GEMMLAB_NCCL_COPY_ENGINES && options.transport == PanelTransport::CopyEngines &&
                            grid.one_operand_moves() && make_rounds(plan, b_moves, gpus, rounds);
  Call call{group, s, problem, variant, plan, options.broadcast_ctas, copy_engines};
  std::vector<OperandRole> a, b;
  GEMMLAB_TRY(prepare(call, a, b));
  run.transport = copy_engines ? PanelTransport::CopyEngines : PanelTransport::Broadcasts;
  // Where anything is broadcast by NCCL's kernels, the products leave their SMs free, for this
  // call.
  SmTargets targets(group);
  if (gpus > 1 && !copy_engines && options.broadcast_ctas > 0) GEMMLAB_TRY(targets.leave(options.broadcast_ctas));
  // The copy engines' rounds: each member's part, and a receive slot per member in each of two
  // sets.
  std::uint64_t slot = 0;
  const std::vector<OperandRole>& moving = b_moves ? b : a;
  if (copy_engines) {
    for (Round& round : rounds) {
      for (std::size_t i = 0; i < round.panels.size(); ++i)
        round.bytes = std::max(round.bytes, bytes_of(panel_like(moving[i], plan.panels[round.panels[i]].k.count)));
      slot = std::max(slot, (round.bytes + 255) / 256 * 256);
    }
    GEMMLAB_TRY(make_window(s, *moving.front().comm, kDistributedPanelBuffers * G(gpus) * slot));
  }
  const auto round_base = [&](int g, std::size_t r) {
    return static_cast<std::byte*>(s.window.buffers[G(g)]) + (r % kDistributedPanelBuffers) * G(gpus) * slot;
  };

  // Each GPU's steps: what it needs nothing for first, then what it receives, in plan order
  // (with copy engines, in round order).
  std::vector<std::vector<Step>> steps(G(gpus));
  std::vector<std::vector<Step>> received_by_panel(G(gpus), std::vector<Step>(plan.panels.size()));
  std::vector<std::size_t> round_of(plan.panels.size(), 0);
  for (std::size_t r = 0; r < rounds.size(); ++r)
    for (std::size_t t : rounds[r].panels) round_of[t] = r;
  for (int g = 0; g < gpus && copy_engines; ++g) {
    for (std::size_t t = 0; t < plan.panels.size(); ++t)
      if ((b_moves ? plan.panels[t].b_root : plan.panels[t].a_root) == g) steps[G(g)].push_back(Step{t});
    for (std::size_t r = 0; r < rounds.size(); ++r)
      for (int i = 0; i < gpus; ++i) {
        if (i == g) continue;
        Step step{rounds[r].panels[G(i)]};
        (b_moves ? step.receives_b : step.receives_a) = true;
        step.received = round_base(g, r) + G(i) * rounds[r].bytes;
        steps[G(g)].push_back(step);
      }
  }
  for (int g = 0; g < gpus && !copy_engines; ++g) {
    std::vector<Step> local, remote;
    int ra = 0, rb = 0;
    for (std::size_t t = 0; t < plan.panels.size(); ++t) {
      const Panel& panel = plan.panels[t];
      Step step;
      step.panel = t;
      step.receives_a = a[G(g)].moves && panel.a_root != a[G(g)].position;
      step.receives_b = b[G(g)].moves && panel.b_root != b[G(g)].position;
      if (step.receives_a) step.a_buffer = ra++ % kDistributedPanelBuffers;
      if (step.receives_b) step.b_buffer = rb++ % kDistributedPanelBuffers;
      received_by_panel[G(g)][t] = step;
      (step.receives_a || step.receives_b ? remote : local).push_back(step);
    }
    steps[G(g)] = local;
    steps[G(g)].insert(steps[G(g)].end(), remote.begin(), remote.end());
  }

  const std::size_t panels = plan.panels.size();
  CallEvents events(group, panels);
  GEMMLAB_TRY(events.begin());
  const auto arrived = [&](int g, std::size_t t) { return events.arrived(g, t); };
  const auto freed = [&](int g, std::size_t t) { return events.freed(g, t); };
  const auto stream = [&](int g) { return events.stream(g); };

  // The panel whose product last read each receive buffer (per GPU, operand and buffer): the
  // next broadcast into that buffer waits for that product. Products of received panels run
  // in plan order (steps list them so), as the broadcasts do.
  constexpr std::size_t kNone = ~std::size_t{0};
  std::vector<std::array<std::array<std::size_t, kDistributedPanelBuffers>, 2>> last_reader(G(gpus));
  for (auto& x : last_reader)
    for (auto& y : x) y.fill(kNone);

  // One panel's broadcasts, every GPU's calls in one NCCL group. A GPU receiving into a buffer
  // first waits for the product that last read it (already enqueued: see the order below);
  // roots pack what is not contiguous.
  const auto enqueue_broadcasts = [&](std::size_t t) -> Status {
    const Panel& panel = plan.panels[t];
    struct Part {
      void* data = nullptr;
      std::uint64_t bytes = 0;
    };
    std::vector<std::array<Part, 2>> parts(G(gpus));
    for (int g = 0; g < gpus; ++g) {
      GEMMLAB_TRY(make_current(s.devices[G(g)]));
      const Step& step = received_by_panel[G(g)][t];
      cudaStream_t comm = s.ranks[G(g)].comm.get();
      for (int which = 0; which < 2; ++which) {
        OperandRole& role = which == 0 ? a[G(g)] : b[G(g)];
        if (!role.moves) continue;
        Part& part = parts[G(g)][G(which)];
        part.bytes = bytes_of(panel_like(role, panel.k.count));
        if (which == 0 ? step.receives_a : step.receives_b) {
          const int buffer = which == 0 ? step.a_buffer : step.b_buffer;
          std::size_t& reader = last_reader[G(g)][G(which)][G(buffer)];
          if (reader != kNone) CUDA_CHECK(cudaStreamWaitEvent(comm, freed(g, reader), 0));
          reader = t;
          part.data = role.receive[buffer];
        } else {
          const Matrix mine = k_slice(*role.block, role.k_along_columns, panel.k.first - role.k_first, panel.k.count);
          if (contiguous(mine)) {
            part.data = mine.data;
          } else {
            GEMMLAB_TRY(pack(mine, dense_at(mine, role.send), comm));
            part.data = role.send;
          }
        }
      }
    }
    NCCL_CHECK(ncclGroupStart());
    Status issued = Status::ok();
    for (int g = 0; g < gpus && issued; ++g)
      for (int which = 0; which < 2 && issued; ++which) {
        const OperandRole& role = which == 0 ? a[G(g)] : b[G(g)];
        const Part& part = parts[G(g)][G(which)];
        if (!role.moves || part.bytes == 0) continue;
        issued = nccl_status(ncclBroadcast(part.data, part.data, part.bytes, ncclUint8,
                                           which == 0 ? panel.a_root : panel.b_root,
                                           role.comm->comms[G(role.position)], s.ranks[G(g)].comm.get()),
                             which == 0 ? "ncclBroadcast (a panel of A)" : "ncclBroadcast (a panel of B)", __FILE__,
                             __LINE__);
      }
    const Status ended = nccl_status(ncclGroupEnd(), "ncclGroupEnd (a panel's broadcasts)", __FILE__, __LINE__);
    if (!issued || !ended) {
      s.broken = (!issued ? issued : ended).message();
      return !issued ? issued : ended;
    }
    for (int g = 0; g < gpus; ++g) {
      GEMMLAB_TRY(make_current(s.devices[G(g)]));
      CUDA_CHECK(cudaEventRecord(arrived(g, t), s.ranks[G(g)].comm.get()));
    }
    return Status::ok();
  };

  // One product on GPU g: after its panel's arrival where it receives anything (timed: the
  // wait), C's block scaled by beta in the GPU's first product and accumulated after.
  run.bytes_received.assign(G(gpus), 0.0);
  std::vector<bool> first(G(gpus), true);
  const auto enqueue_product = [&](int g, const Step& step) -> Status {
    GEMMLAB_TRY(make_current(s.devices[G(g)]));
    const Panel& panel = plan.panels[step.panel];
    const bool receives = step.receives_a || step.receives_b;
    if (receives) GEMMLAB_TRY(events.wait_for(g, step.panel));
    const auto view = [&](const OperandRole& role, bool received, int buffer) {
      if (!received) return k_slice(*role.block, role.k_along_columns, panel.k.first - role.k_first, panel.k.count);
      const Matrix panel_matrix =
          dense_at(panel_like(role, panel.k.count), step.received ? step.received : role.receive[buffer]);
      run.bytes_received[G(g)] += static_cast<double>(bytes_of(panel_matrix));
      return panel_matrix;
    };
    const LocalBlocks local = local_blocks(problem.m, problem.n, problem.k, grid, g);
    GemmProblem product;
    product.m = local.rows.count;
    product.n = local.cols.count;
    product.k = panel.k.count;
    product.op_a = problem.op_a;
    product.op_b = problem.op_b;
    product.alpha = problem.alpha;
    product.beta = first[G(g)] ? problem.beta : 1.0;
    product.compute = problem.compute;
    product.a = view(a[G(g)], step.receives_a, step.a_buffer);
    product.b = view(b[G(g)], step.receives_b, step.b_buffer);
    product.c = problem.c[G(g)];
    // The library checked every product shape the plan has against the rung and that the rung
    // runs here; the GPU is current.
    RunContext& resources = group.context(g).resources();
    Status st = variant.prepare ? variant.prepare(product, resources) : Status::ok();
    if (st) st = variant.run(product, resources);
    if (!st)
      return {st.code(), fmt::format("GPU {}'s product of panel {} ({}): {}", s.devices[G(g)], step.panel,
                                     product.describe(), st.message())};
    if (receives) CUDA_CHECK(cudaEventRecord(freed(g, step.panel), stream(g)));
    first[G(g)] = false;
    return Status::ok();
  };

  // One round of the copy engines: every GPU packs the panel it roots into its slot of the
  // round's receive set (after the products of the round that last used the set), then one
  // all-gather per GPU in one NCCL group.
  const auto enqueue_gather = [&](std::size_t r) -> Status {
    const Round& round = rounds[r];
    for (int g = 0; g < gpus; ++g) {
      GEMMLAB_TRY(make_current(s.devices[G(g)]));
      cudaStream_t comm = s.ranks[G(g)].comm.get();
      if (r >= kDistributedPanelBuffers)
        for (int i = 0; i < gpus; ++i)
          if (i != g) CUDA_CHECK(cudaStreamWaitEvent(comm, freed(g, rounds[r - kDistributedPanelBuffers].panels[G(i)]), 0));
      const OperandRole& role = moving[G(g)];
      const Panel& panel = plan.panels[round.panels[G(g)]];
      const Matrix mine = k_slice(*role.block, role.k_along_columns, panel.k.first - role.k_first, panel.k.count);
      GEMMLAB_TRY(pack(mine, dense_at(mine, round_base(g, r) + G(g) * round.bytes), comm));
    }
    GEMMLAB_TRY(all_gather(s, moving, [&](int g) { return round_base(g, r); }, round.bytes,
                           "ncclAllGather (a round of panels)"));
    for (int g = 0; g < gpus; ++g) {
      GEMMLAB_TRY(make_current(s.devices[G(g)]));
      for (std::size_t t : round.panels) CUDA_CHECK(cudaEventRecord(arrived(g, t), s.ranks[G(g)].comm.get()));
    }
    return Status::ok();
  };

  // Enqueued in an order where every wait follows the record it waits for: the first
  // panel's transfer (so that it starts at once), each GPU's local products, then panel by
  // panel (round by round) the transfers and the products of those who received them.
  std::vector<std::size_t> next(G(gpus), 0);  // each GPU's next step
  const auto enqueue_local = [&]() -> Status {
    for (int g = 0; g < gpus; ++g)
      for (; next[G(g)] < steps[G(g)].size(); ++next[G(g)]) {
        const Step& step = steps[G(g)][next[G(g)]];
        if (step.receives_a || step.receives_b) break;
        GEMMLAB_TRY(enqueue_product(g, step));
      }
    return Status::ok();
  };
  for (std::size_t r = 0; r < rounds.size() && copy_engines; ++r) {
    GEMMLAB_TRY(enqueue_gather(r));
    if (r == 0) GEMMLAB_TRY(enqueue_local());
    for (int g = 0; g < gpus; ++g)
      while (next[G(g)] < steps[G(g)].size() && round_of[steps[G(g)][next[G(g)]].panel] == r)
        GEMMLAB_TRY(enqueue_product(g, steps[G(g)][next[G(g)]++]));
  }
  for (std::size_t t = 0; t < panels && !copy_engines; ++t) {
    GEMMLAB_TRY(enqueue_broadcasts(t));
    if (t == 0) GEMMLAB_TRY(enqueue_local());
    for (int g = 0; g < gpus; ++g)
      if (next[G(g)] < steps[G(g)].size() && steps[G(g)][next[G(g)]].panel == t)
        GEMMLAB_TRY(enqueue_product(g, steps[G(g)][next[G(g)]++]));
  }
  return events.end(call, run, [&](int g, std::size_t t) {
    const Step& step = received_by_panel[G(g)][t];
    return copy_engines ? (b_moves ? plan.panels[t].b_root : plan.panels[t].a_root) != g
                        : step.receives_a || step.receives_b;
  });
}

}  // namespace gemmlab::cuda
