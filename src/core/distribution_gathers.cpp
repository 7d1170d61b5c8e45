// The schedules that gather the one moving operand whole in K (gemmlab/distribution.hpp):
// slices of C, and the lead stripe. Both need DistributedShape::slices_possible.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/distribution_parts.hpp"
#include "core/out_of_core_plan.hpp"
#include "gemmlab/distribution.hpp"

namespace gemmlab {

using namespace distribution_parts;

namespace {

Status check_gathered(const DistributedShape& s, const ProcessGrid& grid, const char* what) {
  if (!s.slices_possible || !grid.one_operand_moves() || s.k < 1)
    return {StatusCode::InvalidValue,
            fmt::format("no {} schedule on a {}x{} grid: it needs one moving operand gathered whole in K", what,
                        grid.rows, grid.cols)};
  return Status::ok();
}

}  // namespace

Status plan_slices(const DistributedShape& s, Decomposition decomposition, int gpus, std::int64_t slices,
                   const DistributedRates& rates, DistributedPlan& out) {
  GEMMLAB_TRY(check_shape(s));
  DistributedPlan p;
  p.decomposition = decomposition;
  GEMMLAB_TRY(decomposition_grid(decomposition, gpus, s.m, s.n, p.grid));
  const ProcessGrid& grid = p.grid;
  const bool b_moves = grid.only_b_moves();
  GEMMLAB_TRY(check_gathered(s, grid, "slice"));
  const std::int64_t extent = b_moves ? s.n : s.m;  // C's columns, or its rows
  if (slices < 1 || slices > extent)
    return {StatusCode::InvalidValue, fmt::format("{} slices of {} {}", slices, extent, b_moves ? "columns" : "rows")};
  GEMMLAB_TRY(check_rates(rates, grid));
  p.cut = DistributedCut::Slices;
  for (std::int64_t i = 0; i < slices; ++i) p.slices.push_back(balanced_part(extent, slices, i));
  GEMMLAB_TRY(summa_panels(s.k, s.k, grid, p.panels));  // each GPU's part of K
  for (const Panel& panel : p.panels) p.panel_width = std::max(p.panel_width, panel.k.count);
  const int sms = rates.multiprocessors > 0 ? rates.multiprocessors : kNominalMultiprocessors;
  const double element = static_cast<double>(s.input_bytes), k = static_cast<double>(s.k);
  DistributedModel& m = p.model;
  for (int gpu = 0; gpu < grid.size(); ++gpu) {
    const LocalBlocks local = local_blocks(s.m, s.n, s.k, grid, gpu);
    const std::int64_t own_k = b_moves ? local.b_k.count : local.a_k.count;
    const std::int64_t side = b_moves ? local.rows.count : local.cols.count;  // the product's other side
    // The comm stream gathers slice after slice, each into the buffer the slice two before
    // was multiplied from; each product waits for its slice and the product before.
    double product_end = 0, comm_end = 0, comm = 0, fill = 0, wait = 0, received = 0, compute = 0;
    std::vector<double> ends;
    for (std::size_t i = 0; i < p.slices.size(); ++i) {
      const Range& slice = p.slices[i];
      const double bytes = static_cast<double>(s.k - own_k) * static_cast<double>(slice.count) * element;
      const double seconds = rates.broadcast_seconds + bytes / rates.link_bytes_per_second;
      comm += seconds;
      received += bytes;
      m.panel_bytes_received_max = std::max(m.panel_bytes_received_max, bytes);
      const double buffer_free = i >= kDistributedPanelBuffers ? ends[i - kDistributedPanelBuffers] : 0.0;
      comm_end = std::max(comm_end, buffer_free) + seconds;
      if (i == 0) fill = comm_end;
      const double start = std::max(product_end, comm_end);
      wait += start - product_end;
      const std::int64_t tm = b_moves ? side : slice.count, tn = b_moves ? slice.count : side;
      const double product = 2.0 * static_cast<double>(tm) * static_cast<double>(tn) * k /
                             (rates.flops_per_second * block_efficiency(tm, tn, s.k, sms, rates.tile_overhead_k, rates.tile_m, rates.tile_n));
      compute += product;
      product_end = start + product;
      ends.push_back(product_end);
    }
    fold(m, {2.0 * static_cast<double>(local.rows.count) * static_cast<double>(local.cols.count) * k, received, compute,
             comm, fill, wait, product_end});
  }
  // Two buffers, each a slot per GPU as long as the longest part of K (the all-gather moves as
  // much from each), one slice wide.
  p.panel_buffer_bytes = kDistributedPanelBuffers * static_cast<std::uint64_t>(grid.size()) *
                         static_cast<std::uint64_t>(p.panel_width) * static_cast<std::uint64_t>(p.slices.front().count) *
                         s.input_bytes;
  out = std::move(p);
  return Status::ok();
}

Status choose_slices(const DistributedShape& s, Decomposition decomposition, int gpus, std::uint64_t budget,
                     const DistributedRates& rates, DistributedPlan& out) {
  GEMMLAB_TRY(check_shape(s));
  ProcessGrid grid;
  GEMMLAB_TRY(decomposition_grid(decomposition, gpus, s.m, s.n, grid));
  const std::int64_t extent = grid.cols == 1 ? s.n : s.m;
  // Counts about an eighth more than the last, no slice narrower than the alignment (a thin
  // product runs far below the rung's rate) unless one slice is all there is.
  bool found = false;
  std::uint64_t least = 0;
  for (std::int64_t count = 1; count == 1 || (count <= extent && ceil_div(extent, count) >= kPanelWidthAlign);
       count = std::max(count + 1, count * 9 / 8)) {
    DistributedPlan p;
    GEMMLAB_TRY(plan_slices(s, decomposition, gpus, count, rates, p));
    least = least == 0 ? p.panel_buffer_bytes : std::min(least, p.panel_buffer_bytes);
    if (p.panel_buffer_bytes > budget) continue;
    if (!found || p.model.model_seconds < out.model.model_seconds * 0.999) {
      out = std::move(p);
      found = true;
    }
  }
  if (!found)
    return {StatusCode::InvalidValue,
            fmt::format("slice buffers of {} bytes per GPU at the least exceed the budget of {} bytes", least, budget)};
  return Status::ok();
}

Status plan_stripe(const DistributedShape& s, Decomposition decomposition, int gpus, std::int64_t lead,
                   const DistributedRates& rates, DistributedPlan& out) {
  GEMMLAB_TRY(check_shape(s));
  DistributedPlan p;
  p.decomposition = decomposition;
  GEMMLAB_TRY(decomposition_grid(decomposition, gpus, s.m, s.n, p.grid));
  const ProcessGrid& grid = p.grid;
  GEMMLAB_TRY(check_gathered(s, grid, "stripe"));
  GEMMLAB_TRY(check_rates(rates, grid));
  const bool b_moves = grid.only_b_moves();
  // The shortest block side the stripe cuts (the last block of a balanced cut).
  const std::int64_t shortest = block_range(b_moves ? s.m : s.n, grid.size(), grid.size() - 1).count;
  if (lead < 0 || lead >= shortest)
    return {StatusCode::InvalidValue, fmt::format("a lead stripe of {} {} in blocks of C of {}: it must leave a rest",
                                                  lead, b_moves ? "rows" : "columns", shortest)};
  p.cut = DistributedCut::Stripe;
  p.lead = lead;
  GEMMLAB_TRY(summa_panels(s.k, s.k, grid, p.panels));  // each GPU's part of K
  for (const Panel& panel : p.panels) p.panel_width = std::max(p.panel_width, panel.k.count);
  const int sms = rates.multiprocessors > 0 ? rates.multiprocessors : kNominalMultiprocessors;
  const double dram = rates.device_bytes_per_second > 0 ? rates.device_bytes_per_second : kNominalDeviceBytesPerSecond;
  const double element = static_cast<double>(s.input_bytes);
  // The moving operand's other side: C's columns where B moves, its rows where A moves (the
  // grid has one column, or one row, so every GPU holds all of it).
  const std::int64_t other = b_moves ? s.n : s.m;
  for (int gpu = 0; gpu < grid.size(); ++gpu) {
    const LocalBlocks local = local_blocks(s.m, s.n, s.k, grid, gpu);
    const Range own = b_moves ? local.b_k : local.a_k;
    const std::int64_t side = b_moves ? local.rows.count : local.cols.count;
    // A product of `rows` of the side by `depth` of K; after the first on its part of C, it
    // re-reads and re-writes that part (beta = 1).
    const auto product = [&](std::int64_t rows, std::int64_t depth, bool adds) {
      const std::int64_t tm = b_moves ? rows : other, tn = b_moves ? other : rows;
      const double area = static_cast<double>(tm) * static_cast<double>(tn);
      return 2.0 * area * static_cast<double>(depth) /
                 (rates.flops_per_second * block_efficiency(tm, tn, depth, sms, rates.tile_overhead_k, rates.tile_m, rates.tile_n)) +
             (adds ? area * static_cast<double>(s.output_bytes) * 2.0 / dram : 0.0);
    };
    // The comm stream packs the GPU's own part into its slot (a device copy), then gathers.
    const double own_bytes = static_cast<double>(own.count) * static_cast<double>(other) * element;
    const double received = static_cast<double>(s.k - own.count) * static_cast<double>(other) * element;
    const double comm = 2.0 * own_bytes / dram + rates.broadcast_seconds + received / rates.link_bytes_per_second;
    const double lead_own = lead > 0 ? product(lead, own.count, false) : 0.0;
    const double start = std::max(lead_own, comm);  // the rest waits for the whole operand
    double others = 0;
    for (const Panel& part : p.panels)
      if (lead > 0 && part.k != own) others += product(lead, part.k.count, true);
    const double rest = product(side - lead, s.k, false);
    fold(p.model, {2.0 * static_cast<double>(local.rows.count) * static_cast<double>(local.cols.count) *
                       static_cast<double>(s.k),
                   received, lead_own + rest + others, comm, lead > 0 ? 0.0 : comm, start - lead_own,
                   start + rest + others});
    p.model.panel_bytes_received_max = std::max(p.model.panel_bytes_received_max, received);
  }
  // One buffer: a slot per GPU as long as the longest part of K, the moving operand's other
  // side wide.
  p.panel_buffer_bytes = static_cast<std::uint64_t>(grid.size()) * static_cast<std::uint64_t>(p.panel_width) *
                         static_cast<std::uint64_t>(other) * s.input_bytes;
  out = std::move(p);
  return Status::ok();
}

Status choose_stripe(const DistributedShape& s, Decomposition decomposition, int gpus, std::uint64_t budget,
                     const DistributedRates& rates, DistributedPlan& out) {
  GEMMLAB_TRY(check_shape(s));
  ProcessGrid grid;
  GEMMLAB_TRY(decomposition_grid(decomposition, gpus, s.m, s.n, grid));
  GEMMLAB_TRY(check_gathered(s, grid, "stripe"));
  const std::int64_t shortest = block_range(grid.cols == 1 ? s.m : s.n, grid.size(), grid.size() - 1).count;
  // No stripe, then multiples of the alignment about an eighth apart up to half the block:
  // ties (within a part in a thousand) go to the shorter stripe, which cuts less of C in K.
  bool found = false;
  for (std::int64_t j = 0; j == 0 || j * kPanelWidthAlign <= shortest / 2; j = std::max(j + 1, j * 9 / 8)) {
    DistributedPlan p;
    GEMMLAB_TRY(plan_stripe(s, decomposition, gpus, j * kPanelWidthAlign, rates, p));
    if (p.panel_buffer_bytes > budget)
      return {StatusCode::InvalidValue,
              fmt::format("the stripe's buffer of {} bytes per GPU (the moving operand whole) exceeds the budget of "
                          "{} bytes",
                          p.panel_buffer_bytes, budget)};
    if (!found || p.model.model_seconds < out.model.model_seconds * 0.999) {
      out = std::move(p);
      found = true;
    }
  }
  return Status::ok();
}

}  // namespace gemmlab
