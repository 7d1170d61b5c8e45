// The stripe schedule (DistributedCut::Stripe, schedule.hpp): where only one operand moves,
// one all-gather brings it whole in K to every GPU (each packs its own part of K into its
// slot first, and the slots stack into one dense matrix), on the copy engines. Meanwhile each
// GPU multiplies the lead stripe of its block of C (its first plan.lead rows where B moves,
// columns where A moves) by its own part of K, which needs nothing from the others. Then,
// once the gather has landed, the rest of its block whole in K, and last the stripe by the
// other GPUs' parts, adding into it. Only the stripe's products are cut in K.
#include <algorithm>

#include "cuda/nccl/schedule.hpp"

namespace gemmlab::cuda::distributed {

Status run_stripe(DeviceGroup& group, const DistributedGemmProblem& problem, const Variant& variant,
                  const DistributedPlan& plan, DistributedRun& run) {
  DeviceGroupState& s = group.state();
  const ProcessGrid& grid = plan.grid;
  const int gpus = grid.size();
  const auto G = [](int g) { return static_cast<std::size_t>(g); };
  Call call{group, s, problem, variant, plan, 0, true};
  GatherRoles roles;
  GEMMLAB_TRY(prepare_gather(call, roles));
  run.transport = PanelTransport::CopyEngines;
  const bool b_moves = roles.b_moves;
  const std::vector<OperandRole>& moving = roles.moving();
  const std::vector<OperandRole>& staying = roles.staying();
  const std::size_t element = roles.element;
  const std::vector<Range>& part = roles.part;
  const std::int64_t longest = roles.longest;
  const std::int64_t other = b_moves ? problem.n : problem.m;  // the moving operand's other side
  const std::uint64_t count = static_cast<std::uint64_t>(longest) * static_cast<std::uint64_t>(other) * element;
  GEMMLAB_TRY(make_window(s, *moving.front().comm, G(gpus) * ((count + 255) / 256 * 256)));
  const auto base = [&](int g) { return static_cast<std::byte*>(s.window.buffers[G(g)]); };

  CallEvents events(group, 1);
  GEMMLAB_TRY(events.begin());
  // The gather, on each GPU's comm stream.
  for (int g = 0; g < gpus; ++g) {
    GEMMLAB_TRY(make_current(s.devices[G(g)]));
    const Matrix& mine = *moving[G(g)].block;
    GEMMLAB_TRY(pack(mine, dense_at(mine, base(g) + G(g) * count), s.ranks[G(g)].comm.get()));
  }
  GEMMLAB_TRY(all_gather(s, moving, base, count, "ncclAllGather (the moving operand whole)"));

  run.bytes_received.assign(G(gpus), 0.0);
  for (int g = 0; g < gpus; ++g) {
    GEMMLAB_TRY(make_current(s.devices[G(g)]));
    CUDA_CHECK(cudaEventRecord(events.arrived(g, 0), s.ranks[G(g)].comm.get()));
    run.bytes_received[G(g)] =
        static_cast<double>(problem.k - part[G(g)].count) * static_cast<double>(other) * static_cast<double>(element);
    const Matrix& c = problem.c[G(g)];
    const bool staying_k_along_columns = staying[G(g)].k_along_columns;
    const std::int64_t side = b_moves ? c.rows : c.cols;
    // The staying operand's block, C's block and their `first`.. `count` of the side, as
    // stored: rows of A (stored m x k, or k x m) and of C where B moves; columns of B and of C
    // where A moves.
    const auto staying_side = [&](std::int64_t first, std::int64_t n) {
      const Matrix& x = *staying[G(g)].block;
      return staying_k_along_columns ? sub_matrix(x, first, 0, n, x.cols) : sub_matrix(x, 0, first, x.rows, n);
    };
    const auto c_side = [&](std::int64_t first, std::int64_t n) {
      return b_moves ? sub_matrix(c, first, 0, n, c.cols) : sub_matrix(c, 0, first, c.rows, n);
    };
    // The moving operand whole in K, gathered: its block's shape with all of K, dense.
    Matrix gathered = *moving[G(g)].block;
    (moving[G(g)].k_along_columns ? gathered.cols : gathered.rows) = problem.k;
    gathered = dense_at(gathered, base(g));
    // One product: `n` of the side from `first` by K range `k` of `from` (the moving
    // operand's K range, as stored), adding where `adds`.
    const auto multiply = [&](std::int64_t first, std::int64_t n, const Matrix& from, Range k, bool adds,
                              const char* what) -> Status {
      if (n == 0) return Status::ok();
      GemmProblem product;
      product.op_a = problem.op_a;
      product.op_b = problem.op_b;
      product.alpha = problem.alpha;
      product.beta = adds ? 1.0 : problem.beta;
      product.compute = problem.compute;
      product.k = k.count;
      const Matrix side_block = k_slice(staying_side(first, n), staying_k_along_columns, k.first, k.count);
      product.c = c_side(first, n);
      if (b_moves) {
        product.m = n;
        product.n = c.cols;
        product.a = side_block;
        product.b = from;
      } else {
        product.m = c.rows;
        product.n = n;
        product.a = from;
        product.b = side_block;
      }
      RunContext& resources = group.context(g).resources();
      Status st = variant.prepare ? variant.prepare(product, resources) : Status::ok();
      if (st) st = variant.run(product, resources);
      if (!st)
        return {st.code(), fmt::format("GPU {}'s product of {} ({}): {}", s.devices[G(g)], what, product.describe(),
                                       st.message())};
      return Status::ok();
    };
    // The lead stripe by this GPU's own part of K, as it lies; the rest once the gather landed;
    // the stripe by the other parts, from the gathered operand.
    GEMMLAB_TRY(multiply(0, plan.lead, *moving[G(g)].block, part[G(g)], false, "the lead stripe by its own part"));
    GEMMLAB_TRY(events.wait_for(g, 0));
    GEMMLAB_TRY(multiply(plan.lead, side - plan.lead, gathered, Range{0, problem.k}, false, "the rest whole in K"));
    for (int q = 0; q < gpus && plan.lead > 0; ++q)
      if (q != g)
        GEMMLAB_TRY(multiply(0, plan.lead, k_slice(gathered, moving[G(g)].k_along_columns, part[G(q)].first,
                                                   part[G(q)].count),
                             part[G(q)], true, "the lead stripe by another GPU's part"));
  }
  return events.end(call, run, [](int, std::size_t) { return true; });
}

}  // namespace gemmlab::cuda::distributed
