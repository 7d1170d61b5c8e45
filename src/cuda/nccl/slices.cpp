// The slice schedule (DistributedCut::Slices, schedule.hpp): slices of C, each product whole
// in K.
#include <algorithm>

#include "cuda/nccl/schedule.hpp"

namespace gemmlab::cuda::distributed {

// The slice schedule (DistributedCut::Slices): where only one operand moves, each round
// all-gathers one slice of it whole in K (every GPU packs its part of K of the slice into its
// slot, and the slots stack into one dense matrix), and every GPU multiplies its block of the
// other operand by it into that slice of its block of C: each product whole in K, C written
// once. Two receive buffers, used in turn, as for the rounds of panels.
Status run_slices(DeviceGroup& group, const DistributedGemmProblem& problem, const Variant& variant,
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
  const std::size_t element = roles.element;
  const std::vector<Range>& part = roles.part;
  const std::int64_t longest = roles.longest;
  std::int64_t widest = 0;
  for (const Range& slice : plan.slices) widest = std::max(widest, slice.count);
  const std::uint64_t slot = (static_cast<std::uint64_t>(longest) * static_cast<std::uint64_t>(widest) * element + 255) /
                             256 * 256;
  GEMMLAB_TRY(make_window(s, *moving.front().comm, kDistributedPanelBuffers * G(gpus) * slot));

  // A slice of the moving operand, rows (or columns) `x0..` of op(B) (or op(A)), `k` of K,
  // stored as the operand's blocks are; dense at `data`, or a view of `block` at K offset 0.
  const auto slice_of = [&](const Matrix& block, std::int64_t x0, std::int64_t w, std::int64_t k) {
    // B moves: op(B) is K x n, stored k x n (N) or n x k (T); A moves: op(A) is m x K, stored
    // m x k (N) or k x m (T). K is the stored rows where op is N for B, T for A.
    const bool k_rows = b_moves ? problem.op_b == Op::N : problem.op_a == Op::T;
    return k_rows ? sub_matrix(block, 0, x0, k, w) : sub_matrix(block, x0, 0, w, k);
  };
  const auto base = [&](int g, std::size_t r) {
    return static_cast<std::byte*>(s.window.buffers[G(g)]) + (r % kDistributedPanelBuffers) * G(gpus) * slot;
  };

  const std::size_t slices = plan.slices.size();
  CallEvents events(group, slices);
  GEMMLAB_TRY(events.begin());

  run.bytes_received.assign(G(gpus), 0.0);
  for (std::size_t r = 0; r < slices; ++r) {
    const Range& slice = plan.slices[r];
    const std::uint64_t count = static_cast<std::uint64_t>(longest) * static_cast<std::uint64_t>(slice.count) * element;
    // The gather: each GPU packs its part after the products that read this buffer last.
    for (int g = 0; g < gpus; ++g) {
      GEMMLAB_TRY(make_current(s.devices[G(g)]));
      cudaStream_t comm = s.ranks[G(g)].comm.get();
      if (r >= kDistributedPanelBuffers)
        CUDA_CHECK(cudaStreamWaitEvent(comm, events.freed(g, r - kDistributedPanelBuffers), 0));
      const Matrix mine = slice_of(*moving[G(g)].block, slice.first, slice.count, part[G(g)].count);
      GEMMLAB_TRY(pack(mine, dense_at(mine, base(g, r) + G(g) * count), comm));
    }
    GEMMLAB_TRY(all_gather(s, moving, [&](int g) { return base(g, r); }, count, "ncclAllGather (a slice)"));
    // The products: every GPU's block of the other operand times the whole-K slice.
    for (int g = 0; g < gpus; ++g) {
      GEMMLAB_TRY(make_current(s.devices[G(g)]));
      CUDA_CHECK(cudaEventRecord(events.arrived(g, r), s.ranks[G(g)].comm.get()));
      GEMMLAB_TRY(events.wait_for(g, r));
      const Matrix whole = dense_at(slice_of(*moving[G(g)].block, slice.first, slice.count, problem.k), base(g, r));
      run.bytes_received[G(g)] += static_cast<double>((problem.k - part[G(g)].count) * slice.count) *
                                  static_cast<double>(element);
      const Matrix& c = problem.c[G(g)];
      GemmProblem product;
      product.op_a = problem.op_a;
      product.op_b = problem.op_b;
      product.alpha = problem.alpha;
      product.beta = problem.beta;
      product.compute = problem.compute;
      product.k = problem.k;
      if (b_moves) {
        product.m = c.rows;
        product.n = slice.count;
        product.a = problem.a[G(g)];
        product.b = whole;
        product.c = sub_matrix(c, 0, slice.first, c.rows, slice.count);
      } else {
        product.m = slice.count;
        product.n = c.cols;
        product.a = whole;
        product.b = problem.b[G(g)];
        product.c = sub_matrix(c, slice.first, 0, slice.count, c.cols);
      }
      RunContext& resources = group.context(g).resources();
      Status st = variant.prepare ? variant.prepare(product, resources) : Status::ok();
      if (st) st = variant.run(product, resources);
      if (!st)
        return {st.code(), fmt::format("GPU {}'s product of slice {} ({}): {}", s.devices[G(g)], r, product.describe(),
                                       st.message())};
      CUDA_CHECK(cudaEventRecord(events.freed(g, r), events.stream(g)));
    }
  }
  return events.end(call, run, [](int, std::size_t) { return true; });
}

}  // namespace gemmlab::cuda::distributed
