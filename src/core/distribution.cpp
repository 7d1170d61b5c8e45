#include "gemmlab/distribution.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <tuple>
#include <utility>

#include "core/distribution_parts.hpp"
#include "core/out_of_core_plan.hpp"

namespace gemmlab {

using namespace distribution_parts;

namespace distribution_parts {

// For a >= 0, b >= 1, without overflow for any b (kb may be anything a caller passes).
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// block_range() for counts of parts past int (a run of K cut into panels).
Range balanced_part(std::int64_t extent, std::int64_t parts, std::int64_t index) {
  const std::int64_t base = extent / parts, longer = extent % parts;
  return {index * base + std::min(index, longer), base + (index < longer ? 1 : 0)};
}

Status check_gpus(int gpus) {
  if (gpus < 1) return {StatusCode::InvalidValue, fmt::format("the number of GPUs ({}) must be at least 1", gpus)};
  return Status::ok();
}

Status check_extents(std::int64_t m, std::int64_t n) {
  if (m < 1) return {StatusCode::InvalidValue, fmt::format("m ({}) must be >= 1 to distribute C", m)};
  if (n < 1) return {StatusCode::InvalidValue, fmt::format("n ({}) must be >= 1 to distribute C", n)};
  return Status::ok();
}

Status check_shape(const DistributedShape& s) {
  GEMMLAB_TRY(check_extents(s.m, s.n));
  if (s.k < 0) return {StatusCode::InvalidValue, fmt::format("k ({}) must be >= 0", s.k)};
  if (s.input_bytes < 1) return {StatusCode::InvalidValue, "the element size of A and B must be at least 1 byte"};
  if (s.output_bytes < 1) return {StatusCode::InvalidValue, "the element size of C must be at least 1 byte"};
  // Byte offsets within A, B and C must fit 64-bit arithmetic.
  const auto in = static_cast<std::int64_t>(s.input_bytes), out = static_cast<std::int64_t>(s.output_bytes);
  std::int64_t elements = 0, span = 0;
  for (const auto& [rows, cols, bytes, name] :
       {std::tuple{s.m, s.k, in, 'A'}, std::tuple{s.k, s.n, in, 'B'}, std::tuple{s.m, s.n, out, 'C'}})
    if (__builtin_mul_overflow(rows, cols, &elements) || __builtin_mul_overflow(elements, bytes, &span))
      return {StatusCode::InvalidValue, fmt::format("{} ({}x{}) overflows 64-bit byte offsets", name, rows, cols)};
  return Status::ok();
}

Status check_grid(const ProcessGrid& grid, std::int64_t m, std::int64_t n) {
  if (grid.rows < 1 || grid.cols < 1)
    return {StatusCode::InvalidValue, fmt::format("a {}x{} grid of GPUs is empty", grid.rows, grid.cols)};
  if (grid.rows > m || grid.cols > n)
    return {StatusCode::InvalidValue, fmt::format("a {}x{} grid of GPUs leaves some without a block of C ({}x{})",
                                                  grid.rows, grid.cols, m, n)};
  return Status::ok();
}

Status check_rates(const DistributedRates& r, const ProcessGrid& grid) {
  if (!(r.flops_per_second > 0))
    return {StatusCode::InvalidValue, fmt::format("the flop rate ({}) must be positive", r.flops_per_second)};
  // One GPU receives nothing: its link rate is never used (nor measurable).
  if (grid.size() > 1 && !(r.link_bytes_per_second > 0))
    return {StatusCode::InvalidValue,
            fmt::format("the link rate ({} bytes/s) must be positive for {} GPUs", r.link_bytes_per_second,
                        grid.size())};
  if (!(r.broadcast_seconds >= 0))
    return {StatusCode::InvalidValue,
            fmt::format("the cost of a broadcast ({} s) must not be negative", r.broadcast_seconds)};
  if (r.multiprocessors < 0)
    return {StatusCode::InvalidValue, fmt::format("the SM count ({}) must not be negative", r.multiprocessors)};
  if (!(r.device_bytes_per_second >= 0))
    return {StatusCode::InvalidValue,
            fmt::format("the DRAM rate ({} bytes/s) must not be negative", r.device_bytes_per_second)};
  return Status::ok();
}

// Panels must tile [0, k) in order, each rooted on the grid.
Status check_panels(const std::vector<Panel>& panels, std::int64_t k, const ProcessGrid& grid) {
  std::int64_t next = 0;
  for (std::size_t t = 0; t < panels.size(); ++t) {
    const Panel& p = panels[t];
    if (p.k.first != next || p.k.count < 1)
      return {StatusCode::InvalidValue, fmt::format("panel {} covers [{}, {}) but should start at {} and be non-empty",
                                                    t, p.k.first, p.k.end(), next)};
    if (p.a_root < 0 || p.a_root >= grid.cols || p.b_root < 0 || p.b_root >= grid.rows)
      return {StatusCode::InvalidValue, fmt::format("panel {}'s roots (A: column {}, B: row {}) lie off the {}x{} grid",
                                                    t, p.a_root, p.b_root, grid.rows, grid.cols)};
    next = p.k.end();
  }
  if (next != k)
    return {StatusCode::InvalidValue, fmt::format("the panels cover [0, {}) but K is {}", next, k)};
  return Status::ok();
}

void fold(DistributedModel& m, const GpuFigures& g) {
  m.flops_per_gpu_max = std::max(m.flops_per_gpu_max, g.flops);
  m.bytes_received_per_gpu_max = std::max(m.bytes_received_per_gpu_max, g.received);
  m.bytes_received_total += g.received;
  m.compute_seconds = std::max(m.compute_seconds, g.compute);
  m.comm_seconds = std::max(m.comm_seconds, g.comm);
  m.fill_seconds = std::max(m.fill_seconds, g.fill);
  m.wait_seconds = std::max(m.wait_seconds, g.wait);
  m.model_seconds = std::max(m.model_seconds, g.end);
}

}  // namespace distribution_parts


Range block_range(std::int64_t extent, int parts, int index) { return balanced_part(extent, parts, index); }

int block_owner(std::int64_t extent, int parts, std::int64_t position) {
  const std::int64_t base = extent / parts, longer = extent % parts;
  const std::int64_t in_longer = longer * (base + 1);  // indices held by the longer parts
  const std::int64_t owner = position < in_longer ? position / (base + 1) : longer + (position - in_longer) / base;
  return static_cast<int>(owner);
}

std::string_view to_string(DistributedCut cut) {
  switch (cut) {
    case DistributedCut::Slices: return "slices";
    case DistributedCut::Stripe: return "stripe";
    case DistributedCut::KPanels: break;
  }
  return "k-panels";
}

std::optional<DistributedCut> parse_cut(std::string_view text) {
  for (const DistributedCut c : {DistributedCut::KPanels, DistributedCut::Slices, DistributedCut::Stripe})
    if (text == to_string(c)) return c;
  return std::nullopt;
}

std::string_view to_string(Decomposition decomposition) {
  return decomposition == Decomposition::RowBlocks ? "rows" : "summa";
}

std::optional<Decomposition> parse_decomposition(std::string_view text) {
  for (const Decomposition d : {Decomposition::RowBlocks, Decomposition::Summa})
    if (text == to_string(d)) return d;
  return std::nullopt;
}

Status process_grid(int gpus, std::int64_t m, std::int64_t n, ProcessGrid& out) {
  GEMMLAB_TRY(check_gpus(gpus));
  GEMMLAB_TRY(check_extents(m, n));
  std::int64_t best = std::numeric_limits<std::int64_t>::max();
  // Ascending rows, ties accepted: the last of equal cost has the most rows.
  for (int rows = 1; rows <= gpus; ++rows) {
    const int cols = gpus / rows;
    if (rows * cols != gpus || rows > m || cols > n) continue;
    const std::int64_t cost = ceil_div(m, rows) + ceil_div(n, cols);
    if (cost <= best) {
      best = cost;
      out = {rows, cols};
    }
  }
  if (best == std::numeric_limits<std::int64_t>::max())
    return {StatusCode::InvalidValue,
            fmt::format("{} GPUs cannot each hold a block of C ({}x{}): every grid of {} GPUs has more rows than m "
                        "or more columns than n",
                        gpus, m, n, gpus)};
  return Status::ok();
}

Status decomposition_grid(Decomposition decomposition, int gpus, std::int64_t m, std::int64_t n, ProcessGrid& out) {
  if (decomposition == Decomposition::Summa) return process_grid(gpus, m, n, out);
  GEMMLAB_TRY(check_gpus(gpus));
  GEMMLAB_TRY(check_extents(m, n));
  if (m < gpus)
    return {StatusCode::InvalidValue,
            fmt::format("row blocks of C for {} GPUs need m >= {} (m = {}): fewer GPUs, or the summa decomposition",
                        gpus, gpus, m)};
  out = {gpus, 1};
  return Status::ok();
}

LocalBlocks local_blocks(std::int64_t m, std::int64_t n, std::int64_t k, const ProcessGrid& grid, int gpu) {
  const int row = gpu / grid.cols, col = gpu % grid.cols;
  return {block_range(m, grid.rows, row), block_range(n, grid.cols, col), block_range(k, grid.cols, col),
          block_range(k, grid.rows, row)};
}

Status summa_panels(std::int64_t k, std::int64_t kb, const ProcessGrid& grid, std::vector<Panel>& out) {
  if (kb < 1) return {StatusCode::InvalidValue, fmt::format("the panel width kb ({}) must be at least 1", kb)};
  if (k < 0) return {StatusCode::InvalidValue, fmt::format("k ({}) must be >= 0", k)};
  if (grid.rows < 1 || grid.cols < 1)
    return {StatusCode::InvalidValue, fmt::format("a {}x{} grid of GPUs is empty", grid.rows, grid.cols)};
  if (ceil_div(k, kb) > kMaxPanels)
    return {StatusCode::InvalidValue,
            fmt::format("the panel width kb ({}) cuts K ({}) into more than {} panels", kb, k, kMaxPanels)};
  out.clear();
  for (std::int64_t start = 0; start < k;) {
    // The run of K from `start` whose A part one grid column holds and whose B part one grid
    // row holds: it ends at the nearer of the two owners' ends.
    const int a_root = block_owner(k, grid.cols, start), b_root = block_owner(k, grid.rows, start);
    const std::int64_t end = std::min(block_range(k, grid.cols, a_root).end(), block_range(k, grid.rows, b_root).end());
    const std::int64_t panels = ceil_div(end - start, kb);
    for (std::int64_t t = 0; t < panels; ++t) {
      const Range width = balanced_part(end - start, panels, t);
      out.push_back({{start + width.first, width.count}, a_root, b_root});
    }
    start = end;
  }
  return Status::ok();
}

Status row_block_panels(std::int64_t k, std::int64_t kb, int gpus, std::vector<Panel>& out) {
  GEMMLAB_TRY(check_gpus(gpus));
  return summa_panels(k, kb, {gpus, 1}, out);
}

std::uint64_t panel_buffer_bytes(const DistributedShape& s, const ProcessGrid& grid, const std::vector<Panel>& panels) {
  std::int64_t widest = 0;
  for (const Panel& p : panels) widest = std::max(widest, p.k.count);
  // The first part of a balanced cut is the longest. An operand that never moves (A on a
  // P x 1 grid, B on a 1 x P grid) is multiplied where it lies and needs no buffer.
  const std::int64_t a = grid.cols > 1 ? block_range(s.m, grid.rows, 0).count : 0;
  const std::int64_t b = grid.rows > 1 ? block_range(s.n, grid.cols, 0).count : 0;
  // The receive buffers, and one where a root packs a panel that is not contiguous to send it;
  // where one operand moves, the all-gather rounds' slots if more (gemmlab/distributed.hpp).
  std::uint64_t buffers = kDistributedPanelBuffers + 1;
  if (grid.one_operand_moves())
    buffers = std::max<std::uint64_t>(buffers, kDistributedPanelBuffers * static_cast<std::uint64_t>(grid.size()));
  return buffers * static_cast<std::uint64_t>(a + b) * static_cast<std::uint64_t>(widest) * s.input_bytes;
}

Status model_distribution(const DistributedShape& s, const ProcessGrid& grid, const std::vector<Panel>& panels,
                          const DistributedRates& rates, DistributedModel& out) {
  GEMMLAB_TRY(check_shape(s));
  GEMMLAB_TRY(check_grid(grid, s.m, s.n));
  GEMMLAB_TRY(check_rates(rates, grid));
  GEMMLAB_TRY(check_panels(panels, s.k, grid));
  const int sms = rates.multiprocessors > 0 ? rates.multiprocessors : kNominalMultiprocessors;
  const double dram = rates.device_bytes_per_second > 0 ? rates.device_bytes_per_second : kNominalDeviceBytesPerSecond;
  const double element = static_cast<double>(s.input_bytes);
  // Every GPU takes part in each panel's broadcasts (its grid row's and its column's) as soon
  // as there is more than one GPU, even where it only sends or receives nothing.
  const double broadcast = grid.size() > 1 ? rates.broadcast_seconds : 0.0;
  DistributedModel m;
  // Per GPU and operand (A, B): when the product of each panel received into its buffers ends.
  std::array<std::vector<double>, 2> reader_ends;
  for (int gpu = 0; gpu < grid.size(); ++gpu) {
    const int row = gpu / grid.cols, col = gpu % grid.cols;
    const LocalBlocks local = local_blocks(s.m, s.n, s.k, grid, gpu);
    const auto rows = static_cast<double>(local.rows.count), cols = static_cast<double>(local.cols.count);
    // Every product after g's first adds into C (beta = 1): one read and one write of the block.
    const double c_pass = rows * cols * static_cast<double>(s.output_bytes) * 2.0 / dram;
    const auto product_seconds = [&](const Panel& p, bool is_first) {
      const double flops = 2.0 * rows * cols * static_cast<double>(p.k.count);
      return flops / (rates.flops_per_second * block_efficiency(local.rows.count, local.cols.count, p.k.count, sms,
                                                                rates.tile_overhead_k, rates.tile_m, rates.tile_n)) +
             (is_first ? 0.0 : c_pass);
    };
    // What g receives of a panel: A's part unless A never moves or g's grid column roots it,
    // likewise B's. A panel g receives nothing of is local.
    const auto receives = [&](const Panel& p) {
      return std::array<bool, 2>{grid.cols > 1 && p.a_root != col, grid.rows > 1 && p.b_root != row};
    };
    const auto is_local = [&](const Panel& p) {
      const auto [a, b] = receives(p);
      return !a && !b;
    };
    // The local panels, back to back from the start: nothing to wait for.
    double compute = 0;
    bool first = true;
    for (const Panel& p : panels)
      if (is_local(p)) {
        compute += product_seconds(p, first);
        first = false;
      }
    // The comm stream in schedule order; each received panel is multiplied once it has arrived
    // and the product before has ended.
    double product_end = compute, comm_end = 0, comm = 0, fill = 0, wait = 0, received = 0;
    for (auto& ends : reader_ends) ends.clear();
    for (const Panel& p : panels) {
      if (is_local(p)) {  // g only sends, or takes part in broadcasts that bring it nothing
        comm += broadcast;
        comm_end += broadcast;
        continue;
      }
      const std::array<bool, 2> gets = receives(p);
      const double bytes = ((gets[0] ? rows : 0.0) + (gets[1] ? cols : 0.0)) * static_cast<double>(p.k.count) * element;
      const double seconds = broadcast + bytes / rates.link_bytes_per_second;
      comm += seconds;
      received += bytes;
      m.panel_bytes_received_max = std::max(m.panel_bytes_received_max, bytes);
      // Each operand's buffers are used in turn: the one this panel lands in is free once the
      // product of the panel received into it before (two receives of that operand ago) ends.
      double buffer_free = 0;
      for (std::size_t which = 0; which < 2; ++which) {
        const std::vector<double>& ends = reader_ends[which];
        if (gets[which] && ends.size() >= kDistributedPanelBuffers)
          buffer_free = std::max(buffer_free, ends[ends.size() - kDistributedPanelBuffers]);
      }
      comm_end = std::max(comm_end, buffer_free) + seconds;
      if (first) fill = comm_end;
      const double start = std::max(product_end, comm_end);
      wait += start - product_end;
      const double product = product_seconds(p, first);
      first = false;
      compute += product;
      product_end = start + product;
      for (std::size_t which = 0; which < 2; ++which)
        if (gets[which]) reader_ends[which].push_back(product_end);
    }
    fold(m, {2.0 * rows * cols * static_cast<double>(s.k), received, compute, comm, fill, wait, product_end});
  }
  out = m;
  return Status::ok();
}

Status plan_distribution(const DistributedShape& s, Decomposition decomposition, int gpus, std::int64_t kb,
                         const DistributedRates& rates, DistributedPlan& out) {
  GEMMLAB_TRY(check_shape(s));
  DistributedPlan p;
  p.decomposition = decomposition;
  p.panel_width = kb;
  GEMMLAB_TRY(decomposition_grid(decomposition, gpus, s.m, s.n, p.grid));
  GEMMLAB_TRY(summa_panels(s.k, kb, p.grid, p.panels));
  GEMMLAB_TRY(model_distribution(s, p.grid, p.panels, rates, p.model));
  p.panel_buffer_bytes = panel_buffer_bytes(s, p.grid, p.panels);
  out = std::move(p);
  return Status::ok();
}

Status choose_panel_width(const DistributedShape& s, Decomposition decomposition, int gpus, std::uint64_t budget,
                          const DistributedRates& rates, DistributedPlan& out) {
  GEMMLAB_TRY(check_shape(s));
  ProcessGrid grid;
  GEMMLAB_TRY(decomposition_grid(decomposition, gpus, s.m, s.n, grid));
  // The longest run of K with one owner: the panels of a width this large are those runs.
  std::vector<Panel> runs;
  GEMMLAB_TRY(summa_panels(s.k, std::max<std::int64_t>(s.k, 1), grid, runs));
  std::int64_t longest = 1;
  for (const Panel& p : runs) longest = std::max(longest, p.k.count);
  // Multiples of the alignment, each about an eighth wider than the last, then the longest run.
  std::vector<std::int64_t> widths;
  for (std::int64_t j = 1; j * kPanelWidthAlign < longest; j = std::max(j + 1, j * 9 / 8))
    widths.push_back(j * kPanelWidthAlign);
  widths.push_back(longest);

  bool found = false;
  std::int64_t narrowest = 0;
  std::uint64_t narrowest_bytes = 0;
  const auto consider = [&](std::int64_t kb) -> Status {
    DistributedPlan p;
    GEMMLAB_TRY(plan_distribution(s, decomposition, gpus, kb, rates, p));
    narrowest = kb;
    narrowest_bytes = p.panel_buffer_bytes;
    if (p.panel_buffer_bytes > budget) return Status::ok();
    // Ties (within a part in a thousand) go to fewer panels: fewer launches and broadcasts.
    const double best = found ? out.model.model_seconds : 0;
    if (!found || p.model.model_seconds < best * 0.999 ||
        (p.model.model_seconds <= best * 1.001 && p.panels.size() < out.panels.size())) {
      out = std::move(p);
      found = true;
    }
    return Status::ok();
  };
  for (auto w = widths.rbegin(); w != widths.rend(); ++w) GEMMLAB_TRY(consider(*w));
  // Narrower than the alignment only where memory forces it (thin products run far below the
  // rung's rate): halving until one fits, while the panels stay few enough to list.
  for (std::int64_t kb = widths.front() / 2; !found && kb >= 1 && ceil_div(s.k, kb) <= kMaxPanels; kb /= 2)
    GEMMLAB_TRY(consider(kb));
  if (!found)
    return {StatusCode::InvalidValue,
            fmt::format("panel buffers of {} bytes per GPU ({} each of A's and B's panels {} wide, where they move) "
                        "exceed the budget of {} bytes",
                        narrowest_bytes, kDistributedPanelBuffers + 1, narrowest, budget)};
  // Every kb from the widest panel up to the one tried gives these panels: report the least.
  if (!out.panels.empty() && out.cut == DistributedCut::KPanels) {
    out.panel_width = 0;
    for (const Panel& p : out.panels) out.panel_width = std::max(out.panel_width, p.k.count);
  }
  return Status::ok();
}

std::string DistributedPlan::describe() const {
  const DistributedModel& m = model;
  std::string cut_text;
  if (cut == DistributedCut::Slices)
    cut_text = fmt::format("{} gathered whole in K, {} slice{} of C's {} at most {} wide", grid.cols == 1 ? "B" : "A",
                           slices.size(), slices.size() == 1 ? "" : "s", grid.cols == 1 ? "columns" : "rows",
                           slices.empty() ? 0 : slices.front().count);
  else if (cut == DistributedCut::Stripe)
    cut_text = fmt::format("{} gathered whole in K behind a lead stripe of {} {} of each block of C, the rest whole in K",
                           grid.cols == 1 ? "B" : "A", lead, grid.cols == 1 ? "rows" : "columns");
  else
    cut_text = fmt::format("{} panel{} of K at most {} wide", panels.size(), panels.size() == 1 ? "" : "s", panel_width);
  return fmt::format(
      "{} on a {}x{} grid: {}, {:.3f} GB of panel buffers per GPU; per GPU at most "
      "{:.3g} flops and {:.3f} GB received ({:.3f} GB in all); model {:.3f} ms (when the slowest GPU's last product "
      "ends); at most compute {:.3f} ms, communication {:.3f} ms, waiting for panels {:.3f} ms, of which before the "
      "first product {:.3f} ms",
      to_string(decomposition), grid.rows, grid.cols, cut_text, static_cast<double>(panel_buffer_bytes) * 1e-9, m.flops_per_gpu_max, m.bytes_received_per_gpu_max * 1e-9,
      m.bytes_received_total * 1e-9, m.model_seconds * 1e3, m.compute_seconds * 1e3, m.comm_seconds * 1e3,
      m.wait_seconds * 1e3, m.fill_seconds * 1e3);
}

}  // namespace gemmlab
