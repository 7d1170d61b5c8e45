// The distributed GEMM's checks and plans (gemmlab/distributed.hpp): the group of GPUs, the
// blocks checked against the grid, the panel width under each GPU's memory, and the host-
// operand form (one out-of-core GEMM per GPU). The NCCL schedule runs in src/cuda/nccl/.
#include "gemmlab/distributed.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "core/out_of_core_plan.hpp"
#include "cuda/backend.hpp"
#include "cuda/distributed.hpp"
#include "cuda/runtime/device.hpp"
#include "gemmlab/availability.hpp"
#include "library/workspace.hpp"

namespace gemmlab {
namespace {

// Left free on each GPU below what it reports: the CUDA libraries' and NCCL's own buffers.
constexpr std::uint64_t kDeviceMargin = std::uint64_t{1} << 30;
// Where the caller gives no link rate: what NCCL's broadcast moved between two H100s over
// NVLink in the memory lab, rounded down (a PCIe-connected pair gets far less: measure).
constexpr double kNominalLinkBytesPerSecond = 300e9;
// A panel's broadcasts: NCCL's launch and handshake, tens of microseconds.
constexpr double kNominalBroadcastSeconds = 20e-6;
// The panel width the rung is chosen for before the plan exists.
constexpr std::int64_t kRepresentativePanel = 4096;

std::string gpu_list(const std::vector<int>& devices) {
  std::string out;
  for (int d : devices) out += fmt::format("{}{}", out.empty() ? "" : ",", d);
  return out;
}

// The stored shape op(X)'s block must have: (outer x k_count), transposed for Op::T.
Status check_block(const char* name, const Matrix& block, Op op, std::int64_t outer, std::int64_t k_count, int gpu,
                   int device) {
  const std::int64_t rows = op == Op::N ? outer : k_count, cols = op == Op::N ? k_count : outer;
  if (block.rows != rows || block.cols != cols)
    return {StatusCode::InvalidValue,
            fmt::format("GPU {} (rank {}): its block of {} is {}x{}; the grid places a {}x{} block there", device, gpu,
                        name, block.rows, block.cols, rows, cols)};
  if (block.empty()) return Status::ok();
  if (block.data == nullptr)
    return {StatusCode::InvalidValue, fmt::format("GPU {} (rank {}): its block of {} has no data", device, gpu, name)};
  if (block.ld < block.contiguous_extent())
    return {StatusCode::InvalidValue, fmt::format("GPU {} (rank {}): its block of {} has ld {} below its {} {}", device,
                                                  gpu, name, block.ld, block.layout == Layout::RowMajor ? "columns" : "rows",
                                                  block.contiguous_extent())};
  return Status::ok();
}

Status check_blocks(DeviceGroup& group, const DistributedGemmProblem& p, const ProcessGrid& grid) {
  const auto P = static_cast<std::size_t>(group.size());
  if (p.a.size() != P || p.b.size() != P || p.c.size() != P)
    return {StatusCode::InvalidValue, fmt::format("the problem has {}, {} and {} blocks of A, B and C for a group of {} GPUs",
                                                  p.a.size(), p.b.size(), p.c.size(), P)};
  for (const auto& [name, blocks] : {std::pair{"A", &p.a}, std::pair{"B", &p.b}, std::pair{"C", &p.c}})
    for (const Matrix& x : *blocks)
      if (x.dtype != blocks->front().dtype || x.layout != blocks->front().layout)
        return {StatusCode::InvalidValue,
                fmt::format("the blocks of {} differ in dtype or layout: every GPU's block of {} must share one", name,
                            name)};
  for (int g = 0; g < group.size(); ++g) {
    const LocalBlocks local = local_blocks(p.m, p.n, p.k, grid, g);
    const auto G = static_cast<std::size_t>(g);
    GEMMLAB_TRY(check_block("A", p.a[G], p.op_a, local.rows.count, local.a_k.count, g, group.device(g)));
    GEMMLAB_TRY(check_block("B", p.b[G], p.op_b == Op::N ? Op::T : Op::N, local.cols.count, local.b_k.count, g,
                            group.device(g)));
    GEMMLAB_TRY(check_block("C", p.c[G], Op::N, local.rows.count, local.cols.count, g, group.device(g)));
  }
  return Status::ok();
}

// A panel product GPU `g` runs, as the rung is asked for it; its pointers are never read.
GemmProblem product_shape(const DistributedGemmProblem& p, const LocalBlocks& local, std::int64_t width) {
  void* aligned = reinterpret_cast<void*>(std::uintptr_t{256});
  GemmProblem q;
  q.m = local.rows.count;
  q.n = local.cols.count;
  q.k = width;
  q.op_a = p.op_a;
  q.op_b = p.op_b;
  q.alpha = p.alpha;
  q.beta = 1.0;
  q.compute = p.compute;
  const auto dense = [aligned](const Matrix& like, std::int64_t rows, std::int64_t cols) {
    Matrix m = like;
    m.data = aligned;
    m.rows = rows;
    m.cols = cols;
    m.ld = std::max<std::int64_t>(m.contiguous_extent(), 1);
    return m;
  };
  q.a = p.op_a == Op::N ? dense(p.a.front(), q.m, width) : dense(p.a.front(), width, q.m);
  q.b = p.op_b == Op::N ? dense(p.b.front(), width, q.n) : dense(p.b.front(), q.n, width);
  q.c = dense(p.c.front(), q.m, q.n);
  return q;
}

// Whether the slice schedule can run `p` on `grid` (DistributedShape::slices_possible): one
// operand moves, on the copy engines, and its parts stack along K into one dense matrix.
bool slices_possible(const DistributedGemmProblem& p, const ProcessGrid& grid, const DistributedOptions& options) {
  if (options.transport != PanelTransport::CopyEngines || !cuda::nccl_copy_engines() || p.k < 1) return false;
  if (!grid.one_operand_moves()) return false;
  const bool b_moves = grid.only_b_moves();
  // K runs along the stored rows of op(B) = B and of op(A) = A^T; it must be the slow dimension.
  const Matrix& moving = b_moves ? p.b.front() : p.a.front();
  const bool k_along_rows = b_moves ? p.op_b == Op::N : p.op_a == Op::T;
  if (k_along_rows != (moving.layout == Layout::RowMajor)) return false;
  // The all-gather puts part i at i times the longest part: only the last may be shorter.
  const int parts = grid.size();
  for (int i = 1; i + 1 < parts; ++i)
    if (block_range(p.k, parts, i).count != block_range(p.k, parts, 0).count) return false;
  return true;
}

Status plan_with(DeviceGroup& group, const DistributedGemmProblem& p, const DistributedOptions& options,
                 Variant& variant, DistributedPlan& out) {
  if (p.m < 0 || p.n < 0 || p.k < 0)
    return {StatusCode::InvalidValue, fmt::format("m, n and k ({}, {}, {}) must not be negative", p.m, p.n, p.k)};
  if (options.broadcast_ctas < 0)
    return {StatusCode::InvalidValue, fmt::format("broadcast_ctas ({}) must not be negative", options.broadcast_ctas)};
  if (options.panel_width < 0)
    return {StatusCode::InvalidValue, fmt::format("the panel width ({}) must not be negative", options.panel_width)};
  if (options.slices < 0)
    return {StatusCode::InvalidValue, fmt::format("the slice count ({}) must not be negative", options.slices)};
  if ((options.slices > 0 || options.cut == DistributedCut::Slices) && options.panel_width > 0)
    return {StatusCode::InvalidValue, "a panel width and slices of C: give one or the other"};
  if (options.stripe_lead && options.panel_width > 0)
    return {StatusCode::InvalidValue, "a panel width and a lead stripe: give one or the other"};
  if (options.stripe_lead && (options.slices > 0 || options.cut == DistributedCut::Slices))
    return {StatusCode::InvalidValue, "slices of C and a lead stripe: give one or the other"};
  for (const std::vector<Matrix>* blocks : {&p.a, &p.b})
    if (!blocks->empty() && is_fp8(blocks->front().dtype))
      return {StatusCode::NotSupported,
              fmt::format("the distributed GEMM does not take {} operands: its panel products carry no per-tensor "
                          "scales (gemm() computes FP8 on one GPU)",
                          to_string(blocks->front().dtype))};
  out = DistributedPlan{};
  out.decomposition = p.decomposition;
  if (p.m == 0 || p.n == 0) return Status::ok();
  GEMMLAB_TRY(decomposition_grid(p.decomposition, group.size(), p.m, p.n, out.grid));
  GEMMLAB_TRY(check_blocks(group, p, out.grid));

  const LocalBlocks first = local_blocks(p.m, p.n, p.k, out.grid, 0);
  GEMMLAB_TRY(resolve_variant(group.context(0), product_shape(p, first, std::min(p.k, kRepresentativePanel)),
                              options.local, variant));
  if (variant.anchor)
    return {StatusCode::InvalidValue,
            fmt::format("the distributed GEMM's panel products run on gemmlab's rungs; {} is an anchor", variant.name)};

  DistributedShape shape{p.m, p.n, p.k, storage_bytes(p.a.front().dtype)};
  shape.output_bytes = storage_bytes(p.c.front().dtype);
  shape.slices_possible = slices_possible(p, out.grid, options);
  DistributedRates rates = options.rates;
  const OutOfCoreRates nominal = nominal_rates(variant.input, variant.compute, variant.tensor_cores);
  if (!(rates.flops_per_second > 0)) rates.flops_per_second = nominal.flops_per_second;
  if (!(rates.tile_overhead_k > 0)) rates.tile_overhead_k = nominal.tile_overhead_k;
  if (rates.tile_m <= 0 || rates.tile_n <= 0) {
    rates.tile_m = variant.config.get("BM", 0);
    rates.tile_n = variant.config.get("BN", 0);
  }
  if (!(rates.link_bytes_per_second > 0)) rates.link_bytes_per_second = kNominalLinkBytesPerSecond;
  if (!(rates.broadcast_seconds > 0)) rates.broadcast_seconds = kNominalBroadcastSeconds;
  if (rates.multiprocessors <= 0) {
    GEMMLAB_TRY(cuda::make_current(group.device(0)));
    rates.multiprocessors = cuda::device_sm_count();
  }

  if (p.k == 0 || p.alpha == 0.0) return Status::ok();  // C <- beta C: no panels
  if (options.panel_width > 0) {
    GEMMLAB_TRY(plan_distribution(shape, p.decomposition, group.size(), options.panel_width, rates, out));
  } else if (options.slices > 0 || options.stripe_lead) {
    if (!shape.slices_possible)
      return {StatusCode::InvalidValue,
              fmt::format("{} asked for, but it needs one moving operand (a grid of one row or column: this one is "
                          "{}x{}) with K the slow dimension of its storage, the copy-engine transport and NCCL 2.28 "
                          "or later",
                          options.stripe_lead ? fmt::format("a lead stripe of {}", *options.stripe_lead)
                                              : fmt::format("{} slices of C", options.slices),
                          out.grid.rows, out.grid.cols)};
    if (options.stripe_lead)
      GEMMLAB_TRY(plan_stripe(shape, p.decomposition, group.size(), *options.stripe_lead, rates, out));
    else
      GEMMLAB_TRY(plan_slices(shape, p.decomposition, group.size(), options.slices, rates, out));
  } else {
    // Slices where asked for (and possible): the model ranks them above panels where
    // measurements do not (gemmlab/distributed.hpp, DistributedOptions::cut).
    const bool gathers = shape.slices_possible && options.cut != DistributedCut::KPanels;
    // Each GPU's budget: what it has free (less a margin) or the caller's limit, less the
    // rung's workspace for its largest product; the tightest GPU decides.
    std::uint64_t budget = ~std::uint64_t{0};
    for (int g = 0; g < group.size(); ++g) {
      std::uint64_t free = 0;
      GEMMLAB_TRY(cuda::free_device_bytes(group.device(g), free));
      std::uint64_t mine = free > kDeviceMargin ? free - kDeviceMargin : 0;
      if (options.device_memory_limit > 0) mine = std::min(mine, options.device_memory_limit);
      const LocalBlocks local = local_blocks(p.m, p.n, p.k, out.grid, g);
      const std::uint64_t workspace = workspace_bound(variant, local.rows.count, local.cols.count, p.k);
      budget = std::min(budget, mine > workspace ? mine - workspace : 0);
    }
    // A stripe whose buffer does not fit the budget falls back to panels.
    const bool striped = gathers && options.cut == DistributedCut::Stripe &&
                         choose_stripe(shape, p.decomposition, group.size(), budget, rates, out).is_ok();
    if (gathers && options.cut == DistributedCut::Slices)
      GEMMLAB_TRY(choose_slices(shape, p.decomposition, group.size(), budget, rates, out));
    else if (!striped)
      GEMMLAB_TRY(choose_panel_width(shape, p.decomposition, group.size(), budget, rates, out));
  }
  // Every product shape the schedule hands the rung: each GPU's block with each panel width,
  // or each slice of its block with all of K.
  for (int g = 0; g < group.size() && out.cut == DistributedCut::Slices; ++g)
    for (const Range& slice : out.slices) {
      LocalBlocks local = local_blocks(p.m, p.n, p.k, out.grid, g);
      (out.grid.cols == 1 ? local.cols : local.rows).count = slice.count;
      if (const Status why = variant.can_implement(product_shape(p, local, p.k)); !why)
        return {why.code(), fmt::format("GPU {}'s {}x{}x{} slice product with {}: {}", group.device(g),
                                        local.rows.count, local.cols.count, p.k, variant.name, why.message())};
    }
  // The stripe's: its lead by each part of K, and the rest with all of K.
  for (int g = 0; g < group.size() && out.cut == DistributedCut::Stripe; ++g) {
    const LocalBlocks whole = local_blocks(p.m, p.n, p.k, out.grid, g);
    std::vector<std::pair<std::int64_t, std::int64_t>> shapes;  // (side, depth)
    const std::int64_t extent = out.grid.cols == 1 ? whole.rows.count : whole.cols.count;
    shapes.emplace_back(extent - out.lead, p.k);
    for (const Panel& part : out.panels)
      if (out.lead > 0) shapes.emplace_back(out.lead, part.k.count);
    for (const auto& [length, depth] : shapes) {
      LocalBlocks local = whole;
      (out.grid.cols == 1 ? local.rows : local.cols).count = length;
      if (const Status why = variant.can_implement(product_shape(p, local, depth)); !why)
        return {why.code(), fmt::format("GPU {}'s {}x{}x{} stripe product with {}: {}", group.device(g),
                                        local.rows.count, local.cols.count, depth, variant.name, why.message())};
    }
  }
  for (int g = 0; g < group.size() && out.cut == DistributedCut::KPanels; ++g) {
    const LocalBlocks local = local_blocks(p.m, p.n, p.k, out.grid, g);
    std::vector<std::int64_t> widths;
    for (const Panel& panel : out.panels)
      if (std::find(widths.begin(), widths.end(), panel.k.count) == widths.end()) widths.push_back(panel.k.count);
    for (const std::int64_t w : widths)
      if (const Status why = variant.can_implement(product_shape(p, local, w)); !why)
        return {why.code(), fmt::format("GPU {}'s {}x{}x{} panel product with {}: {}", group.device(g),
                                        local.rows.count, local.cols.count, w, variant.name, why.message())};
  }
  return Status::ok();
}

}  // namespace

bool distributed_available(std::string* why) {
  if (!cuda::nccl_built()) {
    if (why) *why = "this build of gemmlab has no NCCL (or no CUDA backend)";
    return false;
  }
  return true;
}

std::string nccl_version() { return cuda::nccl_built() ? cuda::nccl_library_version() : std::string{}; }

std::string_view to_string(PanelTransport transport) {
  return transport == PanelTransport::CopyEngines ? "copy-engines" : "broadcasts";
}

std::optional<PanelTransport> parse_panel_transport(std::string_view text) {
  for (const PanelTransport t : {PanelTransport::CopyEngines, PanelTransport::Broadcasts})
    if (text == to_string(t)) return t;
  return std::nullopt;
}

// ---- the group --------------------------------------------------------------------------

Status DeviceGroup::create(const DeviceGroupOptions& options, std::unique_ptr<DeviceGroup>& out) {
  if (!(options.collective_timeout_seconds > 0))
    return {StatusCode::InvalidValue,
            fmt::format("the collective timeout ({} s) must be positive", options.collective_timeout_seconds)};
  const int visible = cuda::device_count();
  if (visible == 0)
    return {StatusCode::NotSupported, "a device group needs CUDA GPUs; this process sees none (or the build has no CUDA)"};
  std::vector<int> devices = options.devices;
  if (devices.empty())
    for (int d = 0; d < visible; ++d) devices.push_back(d);
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (devices[i] < 0 || devices[i] >= visible)
      return {StatusCode::InvalidValue,
              fmt::format("GPU {} was asked for; {} CUDA device{} visible (ordinals 0 to {})", devices[i], visible,
                          visible == 1 ? " is" : "s are", visible - 1)};
    for (std::size_t j = 0; j < i; ++j)
      if (devices[j] == devices[i])
        return {StatusCode::InvalidValue, fmt::format("GPU {} is listed twice in {}", devices[i], gpu_list(devices))};
  }
  if (options.require_peer_access)
    for (const int from : devices)
      for (const int to : devices) {
        if (from == to) continue;
        bool can = false;
        GEMMLAB_TRY(cuda::can_access_peer(from, to, can));
        if (!can)
          return {StatusCode::NotSupported,
                  fmt::format("GPU {} cannot access GPU {}'s memory (no peer access between them), which the "
                              "distributed GEMM's broadcasts need",
                              from, to)};
      }

  std::unique_ptr<DeviceGroup> group(new DeviceGroup);
  group->devices_ = devices;
  group->timeout_ = options.collective_timeout_seconds;
  for (const int d : devices) {
    ContextOptions context;
    context.backend = Backend::Cuda;
    context.device = d;
    std::unique_ptr<Context> c;
    GEMMLAB_TRY(Context::create(context, c));
    group->contexts_.push_back(std::move(c));
  }
  DeviceGroupState* state = nullptr;
  GEMMLAB_TRY(cuda::make_group_state(devices, options.collective_timeout_seconds, state));
  group->state_ = std::unique_ptr<DeviceGroupState, void (*)(DeviceGroupState*)>(state, cuda::destroy_group_state);
  out = std::move(group);
  return Status::ok();
}

DeviceGroup::~DeviceGroup() {
  state_.reset();  // communicators and panel buffers before the contexts
  contexts_.clear();
}

std::string DistributedGemmProblem::describe() const {
  const char* ops[] = {"N", "T"};
  return fmt::format("{}x{}x{} {}{} over {} GPU{} ({})", m, n, k, ops[op_a == Op::T], ops[op_b == Op::T], c.size(),
                     c.size() == 1 ? "" : "s", to_string(decomposition));
}

// ---- the blocks on the devices ----------------------------------------------------------

namespace {

// Where GPU g's block of `which` lies in the whole stored matrix: its first stored row and
// column and its stored shape.
struct Placement {
  std::int64_t row = 0, col = 0, rows = 0, cols = 0;
};

Placement placement(const DistributedGemmProblem& p, const ProcessGrid& grid, int g, Operand which) {
  const LocalBlocks local = local_blocks(p.m, p.n, p.k, grid, g);
  switch (which) {
    case Operand::A:
      return p.op_a == Op::N ? Placement{local.rows.first, local.a_k.first, local.rows.count, local.a_k.count}
                             : Placement{local.a_k.first, local.rows.first, local.a_k.count, local.rows.count};
    case Operand::B:
      return p.op_b == Op::N ? Placement{local.b_k.first, local.cols.first, local.b_k.count, local.cols.count}
                             : Placement{local.cols.first, local.b_k.first, local.cols.count, local.b_k.count};
    case Operand::C: break;
  }
  return {local.rows.first, local.cols.first, local.rows.count, local.cols.count};
}

Status check_whole(const DistributedGemmProblem& p, Operand which, const Matrix& whole) {
  const char* name = which == Operand::A ? "A" : which == Operand::B ? "B" : "C";
  std::int64_t rows = p.m, cols = p.n;
  if (which == Operand::A) std::tie(rows, cols) = p.op_a == Op::N ? std::pair{p.m, p.k} : std::pair{p.k, p.m};
  if (which == Operand::B) std::tie(rows, cols) = p.op_b == Op::N ? std::pair{p.k, p.n} : std::pair{p.n, p.k};
  if (whole.rows != rows || whole.cols != cols)
    return {StatusCode::InvalidValue,
            fmt::format("the whole matrix {} is {}x{}; the problem's is {}x{}", name, whole.rows, whole.cols, rows, cols)};
  if (!whole.empty() && (whole.data == nullptr || whole.ld < whole.contiguous_extent()))
    return {StatusCode::InvalidValue, fmt::format("the whole matrix {} has no data or an ld below its extent", name)};
  return Status::ok();
}

// Copies between GPU g's block and its place in the whole host matrix.
Status copy_block(DeviceGroup& group, const DistributedGemmProblem& p, Operand which, const Matrix& whole,
                  const Matrix& block, int g, bool to_device) {
  ProcessGrid grid;
  GEMMLAB_TRY(decomposition_grid(p.decomposition, group.size(), p.m, p.n, grid));
  const Placement at = placement(p, grid, g, which);
  if (at.rows == 0 || at.cols == 0) return Status::ok();
  const std::size_t e = storage_bytes(whole.dtype);
  auto* host = static_cast<std::byte*>(whole.data) + whole.offset(at.row, at.col) * static_cast<std::int64_t>(e);
  const std::size_t extent = static_cast<std::size_t>(whole.layout == Layout::RowMajor ? at.cols : at.rows) * e;
  const std::size_t lines = static_cast<std::size_t>(whole.layout == Layout::RowMajor ? at.rows : at.cols);
  const std::size_t host_pitch = static_cast<std::size_t>(whole.ld) * e;
  const std::size_t block_pitch = static_cast<std::size_t>(block.ld) * e;
  return to_device ? cuda::copy_2d(group.device(g), block.data, block_pitch, host, host_pitch, extent, lines)
                   : cuda::copy_2d(group.device(g), host, host_pitch, block.data, block_pitch, extent, lines);
}

const Matrix& block_of(const DistributedGemmProblem& p, Operand which, int g) {
  const auto G = static_cast<std::size_t>(g);
  return which == Operand::A ? p.a[G] : which == Operand::B ? p.b[G] : p.c[G];
}

}  // namespace

DistributedBuffers::~DistributedBuffers() { release(); }
DistributedBuffers::DistributedBuffers(DistributedBuffers&& other) noexcept : blocks_(std::move(other.blocks_)) {
  other.blocks_.clear();
}
DistributedBuffers& DistributedBuffers::operator=(DistributedBuffers&& other) noexcept {
  if (this != &other) {
    release();
    blocks_ = std::move(other.blocks_);
    other.blocks_.clear();
  }
  return *this;
}

void DistributedBuffers::release() {
  for (Block& b : blocks_) cuda::free_on_device(b.device, b.data);
  blocks_.clear();
}

std::uint64_t DistributedBuffers::bytes(int rank) const {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < 3; ++i) total += blocks_.at(static_cast<std::size_t>(rank) * 3 + i).bytes;
  return total;
}

Status DistributedBuffers::allocate(DeviceGroup& group, DistributedGemmProblem& problem, const Matrix& host_a,
                                    const Matrix& host_b, const Matrix& host_c, DistributedBuffers& out) {
  GEMMLAB_TRY(check_whole(problem, Operand::A, host_a));
  GEMMLAB_TRY(check_whole(problem, Operand::B, host_b));
  GEMMLAB_TRY(check_whole(problem, Operand::C, host_c));
  ProcessGrid grid;
  GEMMLAB_TRY(decomposition_grid(problem.decomposition, group.size(), problem.m, problem.n, grid));
  DistributedBuffers made;
  problem.a.assign(static_cast<std::size_t>(group.size()), {});
  problem.b = problem.a;
  problem.c = problem.a;
  for (int g = 0; g < group.size(); ++g)
    for (const Operand which : {Operand::A, Operand::B, Operand::C}) {
      const Matrix& like = which == Operand::A ? host_a : which == Operand::B ? host_b : host_c;
      const Placement at = placement(problem, grid, g, which);
      Matrix block = like;
      block.rows = at.rows;
      block.cols = at.cols;
      block.ld = std::max<std::int64_t>(block.contiguous_extent(), 1);
      const std::uint64_t bytes =
          static_cast<std::uint64_t>(at.rows) * static_cast<std::uint64_t>(at.cols) * storage_bytes(like.dtype);
      Block owned{group.device(g), nullptr, bytes};
      if (const Status st = cuda::allocate_on_device(owned.device, bytes, owned.data); !st)
        return {StatusCode::AllocFailed,
                fmt::format("GPU {}: its block of {} ({} bytes): {}", owned.device,
                            which == Operand::A ? "A" : which == Operand::B ? "B" : "C", bytes, st.message())};
      made.blocks_.push_back(owned);
      block.data = owned.data;
      (which == Operand::A ? problem.a : which == Operand::B ? problem.b : problem.c)[static_cast<std::size_t>(g)] = block;
    }
  out = std::move(made);
  return Status::ok();
}

Status DistributedBuffers::upload(DeviceGroup& group, const DistributedGemmProblem& problem, Operand which,
                                  const Matrix& whole) const {
  GEMMLAB_TRY(check_whole(problem, which, whole));
  for (int g = 0; g < group.size(); ++g)
    GEMMLAB_TRY(copy_block(group, problem, which, whole, block_of(problem, which, g), g, true));
  return Status::ok();
}

Status DistributedBuffers::download(DeviceGroup& group, const DistributedGemmProblem& problem, Operand which,
                                    const Matrix& whole) const {
  GEMMLAB_TRY(check_whole(problem, which, whole));
  for (int g = 0; g < group.size(); ++g)
    GEMMLAB_TRY(copy_block(group, problem, which, whole, block_of(problem, which, g), g, false));
  return Status::ok();
}

// ---- the calls --------------------------------------------------------------------------

Status plan_distributed(DeviceGroup& group, const DistributedGemmProblem& problem, const DistributedOptions& options,
                        DistributedPlan& out) {
  Variant variant;
  return plan_with(group, problem, options, variant, out);
}

Status gemm_distributed(DeviceGroup& group, const DistributedGemmProblem& problem, const DistributedOptions& options,
                        DistributedRun* run) {
  Variant variant;
  DistributedRun ran;
  GEMMLAB_TRY(plan_with(group, problem, options, variant, ran.plan));
  ran.variant = variant.name;
  ran.config = variant.config_name;
  if (problem.m == 0 || problem.n == 0) {
    if (run) *run = ran;
    return Status::ok();
  }
  GEMMLAB_TRY(check_runs_here(variant));
  if (problem.k == 0 || problem.alpha == 0.0) {
    // C <- beta C, each GPU its own block: no panels move.
    for (int g = 0; g < group.size(); ++g) {
      const LocalBlocks local = local_blocks(problem.m, problem.n, problem.k, ran.plan.grid, g);
      GemmProblem scale = product_shape(problem, local, 0);
      scale.beta = problem.beta;
      scale.alpha = problem.alpha;
      scale.a.data = scale.b.data = nullptr;
      scale.c = problem.c[static_cast<std::size_t>(g)];
      GEMMLAB_TRY(gemm(group.context(g), scale, variant));
    }
    for (int g = 0; g < group.size(); ++g)
      GEMMLAB_TRY(cuda::synchronize_stream(group.device(g), group.context(g).stream()));
    ran.seconds.assign(static_cast<std::size_t>(group.size()), 0.0);
    ran.wait_seconds = ran.bytes_received = ran.seconds;
    if (run) *run = ran;
    return Status::ok();
  }
  if (!distributed_available()) {
    std::string why;
    distributed_available(&why);
    return {StatusCode::NotSupported, fmt::format("gemm_distributed on device operands needs NCCL: {}", why)};
  }
  GEMMLAB_TRY(cuda::run_distributed(group, problem, variant, ran.plan, options, ran));
  if (run) *run = std::move(ran);
  return Status::ok();
}

Status gemm_distributed_host(DeviceGroup& group, const GemmProblem& problem, const OutOfCoreOptions& options,
                             std::vector<OutOfCorePlan>* plans) {
  GEMMLAB_TRY(validate(problem));
  const auto P = static_cast<std::size_t>(group.size());
  if (plans) plans->assign(P, OutOfCorePlan{});
  if (problem.m == 0 || problem.n == 0) return Status::ok();
  // Blocks of C as square as the GPUs allow: the least host traffic (each GPU reads its rows
  // of A and its columns of B once per tile of its own).
  ProcessGrid grid;
  GEMMLAB_TRY(process_grid(group.size(), problem.m, problem.n, grid));
  std::vector<Status> status(P);
  std::vector<std::thread> threads;
  for (int g = 0; g < group.size(); ++g)
    threads.emplace_back([&, g] {
      const LocalBlocks local = local_blocks(problem.m, problem.n, problem.k, grid, g);
      GemmProblem mine = problem;
      mine.m = local.rows.count;
      mine.n = local.cols.count;
      // Views of this GPU's rows of op(A), columns of op(B) and block of C.
      const auto view = [](Matrix x, std::int64_t row, std::int64_t col, std::int64_t rows, std::int64_t cols) {
        x.data = static_cast<std::byte*>(x.data) + x.offset(row, col) * static_cast<std::int64_t>(storage_bytes(x.dtype));
        x.rows = rows;
        x.cols = cols;
        return x;
      };
      mine.a = problem.op_a == Op::N ? view(problem.a, local.rows.first, 0, local.rows.count, problem.k)
                                     : view(problem.a, 0, local.rows.first, problem.k, local.rows.count);
      mine.b = problem.op_b == Op::N ? view(problem.b, 0, local.cols.first, problem.k, local.cols.count)
                                     : view(problem.b, local.cols.first, 0, local.cols.count, problem.k);
      mine.c = view(problem.c, local.rows.first, local.cols.first, local.rows.count, local.cols.count);
      OutOfCorePlan plan;
      const auto G = static_cast<std::size_t>(g);
      status[G] = gemm_out_of_core(group.context(g), mine, options, &plan);
      if (!status[G])
        status[G] = {status[G].code(), fmt::format("GPU {}: {}", group.device(g), status[G].message())};
      if (plans) (*plans)[G] = plan;
    });
  for (std::thread& t : threads) t.join();
  for (const Status& s : status) GEMMLAB_TRY(s);
  return Status::ok();
}

}  // namespace gemmlab
