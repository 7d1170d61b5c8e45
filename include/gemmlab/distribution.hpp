// The distributed GEMM's decomposition, panel schedule and model, pure arithmetic (no device,
// no NCCL): how C = alpha A B + beta C is spread over the P GPUs of one host, which GPU roots
// each broadcast of a panel of A or B, what every GPU receives, and what the model says that
// costs. The NCCL driver runs exactly the panels summa_panels() lists, in that order.
//
// Layout (both decompositions are a pr x pc grid of GPUs; GPU g sits at grid row g / pc and
// grid column g % pc):
//   C (m x n)  block (i, j) of a pr x pc cut of rows and columns lives on GPU (i, j);
//   A (m x k)  its rows cut like C's over grid rows, its K over grid columns: block (i, j);
//   B (k x n)  its K cut over grid rows, its columns like C's over grid columns: block (i, j).
// A panel of K is broadcast from the grid column owning it to every GPU of each grid row
// (A's part) and from the grid row owning it to every GPU of each grid column (B's part); each
// GPU then adds its (rows x panel) x (panel x columns) product into its block of C (SUMMA).
// The 1-D decomposition is the same schedule on a P x 1 grid: row blocks of A and C stay put,
// B is cut by rows of K over the GPUs and broadcast to all in panels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gemmlab/status.hpp"

namespace gemmlab {

// A run of indices [first, first + count).
struct Range {
  std::int64_t first = 0, count = 0;
  std::int64_t end() const { return first + count; }
  bool operator==(const Range&) const = default;
};

// Part `index` of `extent` cut into `parts` balanced parts: the first extent % parts parts
// one longer than the rest. Needs parts >= 1, 0 <= index < parts, extent >= 0 (the planning
// functions below check their inputs before they cut).
Range block_range(std::int64_t extent, int parts, int index);
// The part of that cut holding `position` (0 <= position < extent).
int block_owner(std::int64_t extent, int parts, std::int64_t position);

enum class Decomposition : std::uint8_t {
  RowBlocks,  // 1-D: a P x 1 grid; only B moves
  Summa,      // 2-D: the grid process_grid() chooses; A moves along grid rows, B along columns
};
std::string_view to_string(Decomposition decomposition);                  // "rows" | "summa"
std::optional<Decomposition> parse_decomposition(std::string_view text);  // as to_string writes

struct ProcessGrid {
  int rows = 1, cols = 1;
  int size() const { return rows * cols; }
  // Which operand moves between the GPUs: B alone on a P x 1 grid, A alone on 1 x P (what
  // the copy-engine transport and slices of C need), both on larger grids, none on 1 x 1.
  bool only_b_moves() const { return rows > 1 && cols == 1; }
  bool only_a_moves() const { return cols > 1 && rows == 1; }
  bool one_operand_moves() const { return only_a_moves() || only_b_moves(); }
  bool operator==(const ProcessGrid&) const = default;
};

// The pr x pc = `gpus` grid for an m x n C: the one whose largest local block of C has the
// least rows + columns, which is the least A-panel plus B-panel elements per unit of panel
// width a GPU holds and, for blocks of a given area, the most square block. Ties go to more
// grid rows: P x 1 is the 1-D decomposition (A never moves) and, in row-major storage, a
// block of rows is one contiguous run. Every GPU gets a non-empty block of C (pr <= m,
// pc <= n); InvalidValue when no factorisation of `gpus` allows that, or gpus < 1.
Status process_grid(int gpus, std::int64_t m, std::int64_t n, ProcessGrid& out);
// The grid a decomposition puts `gpus` GPUs on: P x 1 for RowBlocks (needs m >= P), else
// process_grid().
Status decomposition_grid(Decomposition decomposition, int gpus, std::int64_t m, std::int64_t n,
                          ProcessGrid& out);

// What GPU `gpu` of `grid` holds: its block of C (rows x cols), A's (rows x a_k) and B's
// (b_k x cols). a_k or b_k is empty where K is shorter than the grid's side.
struct LocalBlocks {
  Range rows, cols, a_k, b_k;
};
LocalBlocks local_blocks(std::int64_t m, std::int64_t n, std::int64_t k, const ProcessGrid& grid, int gpu);

// One step of the schedule: the K range it covers, the grid column whose GPUs hold A's
// columns of it (each roots the broadcast along its grid row) and the grid row whose GPUs hold
// B's rows of it (each roots the broadcast along its grid column).
struct Panel {
  Range k;
  int a_root = 0;
  int b_root = 0;
  bool operator==(const Panel&) const = default;
};

// The panels of [0, k) in order: K is first cut where the owner of A's or B's part changes (so
// each panel is one broadcast from one root per grid row and per grid column), then each such
// run into the fewest panels no wider than `kb`, of balanced widths (no sliver panel whose
// broadcast its own tiny product cannot hide). InvalidValue for kb < 1, k < 0 or an empty grid.
Status summa_panels(std::int64_t k, std::int64_t kb, const ProcessGrid& grid, std::vector<Panel>& out);
// The 1-D schedule: summa_panels() on a `gpus` x 1 grid (b_root is the GPU holding B's rows).
Status row_block_panels(std::int64_t k, std::int64_t kb, int gpus, std::vector<Panel>& out);

// The problem as the distribution sees it.
struct DistributedShape {
  std::int64_t m = 0, n = 0, k = 0;
  std::size_t input_bytes = 4;   // bytes of an element of A and B (what the broadcasts move)
  std::size_t output_bytes = 4;  // bytes of an element of C (what each panel product re-reads)
  // Whether a slice schedule can run (DistributedCut::Slices): only one operand moves, by
  // all-gather (the copy-engine transport), and its GPUs' parts stack into one dense matrix
  // whole in K (K its storage's slow dimension, every part but the last as long as the
  // first). The library decides it from the problem and the options.
  bool slices_possible = false;
};

// What the model assumes of the machine, per GPU.
struct DistributedRates {
  // The in-core rung's rate on a block that fills the SMs, without the per-tile cost below (the
  // bench measures it on a whole local block and divides by that block's block_efficiency).
  double flops_per_second = 0;
  double link_bytes_per_second = 0;  // what one GPU receives per second over NVLink (measured)
  double broadcast_seconds = 0;      // fixed cost of a panel's broadcasts (launch, handshake)
  int multiprocessors = 0;           // the GPU's SMs (0: an H100's 132), for thin products
  // The GPU's DRAM rate, at which each panel product after the first re-reads and re-writes
  // the GPU's block of C (0: 3.0e12, an H100 SXM's measured copy rate).
  double device_bytes_per_second = 0;
  // The rung's fixed cost of an output tile in units of K (as OutOfCoreRates::tile_overhead_k):
  // a panel product of k runs at k / (k + this) of the rate, so cutting K into panels costs the
  // tensor-core rungs most (0: 128).
  double tile_overhead_k = 0;
  // The rung's output tile (its configuration's BM x BN; 0: 128 x 128): how many waves of the
  // SMs a product fills. A lead stripe of 768 x 8192 is 1.45 waves of 128 x 256 tiles on 132
  // SMs, which the 3xTF32 rung pays as two.
  std::int64_t tile_m = 0, tile_n = 0;
};

// The model's counts and times: each field the largest over the GPUs (not necessarily all the
// same GPU's).
//
// It simulates each GPU g as the NCCL driver runs it. g's comm stream runs every panel's
// broadcasts in schedule order (collectives go in the same order on every GPU); a panel costs
// broadcast_seconds on it when there is more than one GPU, plus what g receives of it over the
// link. A panel is local to g when g receives nothing of it (g's grid column roots A's part or
// A never moves, and likewise B). g multiplies its local panels first, in schedule order (they
// need no wait), then the received ones in schedule order, each once it has arrived and the
// product before has ended. Received panels land in kDistributedPanelBuffers buffers per
// operand, used in turn, so a receive starts no earlier than the end of the product of the
// panel received into the same buffer (for each operand it brings, the panel that brought it
// two receives ago). Each product after g's first also re-reads and re-writes g's block of C
// (beta = 1). Not modelled: a broadcast held up by a peer that reaches it late (each GPU is
// simulated alone), and a root's packing of a panel that is not contiguous.
struct DistributedModel {
  double flops_per_gpu_max = 0;           // 2 * rows * cols * k of the largest local block
  double bytes_received_per_gpu_max = 0;  // A and B panels, a root's own panel not counted
  double panel_bytes_received_max = 0;    // the most one GPU receives for one panel
  double bytes_received_total = 0;        // over all GPUs: what the broadcasts deliver
  // Seconds. compute: the sum of g's products, each its flops at the rung's rate discounted as
  // block_efficiency() says for a thin K, plus the C re-read at the DRAM rate. comm: the time
  // g's comm stream is busy (not the time it waits for a free buffer). fill: the time before
  // g's first product can start (0 for a GPU with a local panel, whose products hide the first
  // broadcasts). wait: the total time g's products sat idle waiting for a panel, fill included.
  double compute_seconds = 0, comm_seconds = 0, fill_seconds = 0, wait_seconds = 0;
  double model_seconds = 0;  // when g's last product ends (its compute + its wait)
};

// The schedule one run follows, as planned.
// How a plan cuts the work.
enum class DistributedCut : std::uint8_t {
  // Panels of K: every GPU multiplies each panel into its block of C, adding from the second
  // on (the SUMMA schedule).
  KPanels,
  // Slices of C: where only one operand moves, it is gathered whole in K one slice at a time
  // (B's columns on a P x 1 grid, A's rows on a 1 x P grid), and each GPU multiplies each
  // slice once: every product whole in K, C written once. The first slice's gather is
  // waited for.
  Slices,
  // A lead stripe, then the rest whole in K: where only one operand moves, it is gathered
  // whole in K in one all-gather, while each GPU multiplies the first `lead` rows of its
  // block of C (columns where A moves) by its own part of K; then the rest of its block whole
  // in K, and last the stripe by the other GPUs' parts. Only the stripe's products are cut in
  // K, and the gather is hidden behind the first of them.
  Stripe,
};

std::string_view to_string(DistributedCut cut);                  // "k-panels" | "slices" | "stripe"
std::optional<DistributedCut> parse_cut(std::string_view text);  // as to_string writes

struct DistributedPlan {
  Decomposition decomposition = Decomposition::Summa;
  ProcessGrid grid;
  DistributedCut cut = DistributedCut::KPanels;
  // Slices: the slices of C's columns (B moves) or rows (A moves), in order. `panels` then
  // lists each GPU's part of K, one panel per GPU, for the bytes and the description.
  std::vector<Range> slices;
  // Stripe: the rows of each GPU's block of C (columns where A moves), from its first, that
  // are multiplied part by part of K (0: none; the gather is then waited for). `panels` lists
  // each GPU's part of K, as for slices.
  std::int64_t lead = 0;
  // kb: no panel is wider. choose_panel_width() gives the widest panel's width, the least kb
  // that lists the same panels.
  std::int64_t panel_width = 0;
  std::vector<Panel> panels;
  std::uint64_t panel_buffer_bytes = 0;  // per GPU, panel_buffer_bytes() of these panels
  DistributedModel model;
  std::string describe() const;  // "summa on a 2x2 grid, 24 panels of K up to 2048, ..."
};

// Receive buffers per moving operand, each for its widest panel, densely packed (NCCL moves
// contiguous buffers): one being received while the other is multiplied.
inline constexpr int kDistributedPanelBuffers = 2;
// Per GPU: kDistributedPanelBuffers + 1 buffers of each moving operand's widest panel, the
// extra one where a root packs its panel to send when the panel is not contiguous in its block
// (an operand that never moves needs none); where only one operand moves, among P GPUs, at
// least kDistributedPanelBuffers x P, what the copy engines' all-gather rounds hold (a slot
// per GPU in each buffer), so that the plan fits either transport.
std::uint64_t panel_buffer_bytes(const DistributedShape& s, const ProcessGrid& grid,
                                 const std::vector<Panel>& panels);

// The model of `panels` on `grid` at `rates`. InvalidValue for a bad shape, grid or rate.
Status model_distribution(const DistributedShape& s, const ProcessGrid& grid, const std::vector<Panel>& panels,
                          const DistributedRates& rates, DistributedModel& out);

// The whole plan for a given panel width kb.
Status plan_distribution(const DistributedShape& s, Decomposition decomposition, int gpus, std::int64_t kb,
                         const DistributedRates& rates, DistributedPlan& out);

// The slice plan of `s` (slices_possible) cut into `slices` balanced slices: its model, and its
// buffers (two of the moving operand's whole-K slice, the widest). InvalidValue where slices
// cannot run, or for a slice count out of range.
Status plan_slices(const DistributedShape& s, Decomposition decomposition, int gpus, std::int64_t slices,
                   const DistributedRates& rates, DistributedPlan& out);

// The slice plan whose count the model ranks fastest among those whose buffers fit `budget`
// bytes per GPU (more slices wait less for the first, each product is thinner).
// InvalidValue where slices cannot run or none fits.
Status choose_slices(const DistributedShape& s, Decomposition decomposition, int gpus, std::uint64_t budget,
                     const DistributedRates& rates, DistributedPlan& out);

// The stripe plan of `s` (slices_possible) with a lead stripe of `lead` rows of each GPU's
// block of C (columns where A moves): its model, and its buffer (the moving operand whole, a
// slot per GPU). InvalidValue where it cannot run, or for a lead stripe as long as a block.
Status plan_stripe(const DistributedShape& s, Decomposition decomposition, int gpus, std::int64_t lead,
                   const DistributedRates& rates, DistributedPlan& out);

// The stripe plan whose lead the model ranks fastest (the shortest stripe whose own product
// hides the gather, unless cutting K costs more), its buffer within `budget` bytes per GPU.
// InvalidValue where it cannot run or does not fit.
Status choose_stripe(const DistributedShape& s, Decomposition decomposition, int gpus, std::uint64_t budget,
                     const DistributedRates& rates, DistributedPlan& out);

// The plan whose panel width the model ranks fastest among those whose panel buffers fit
// `budget` bytes per GPU (what is left beside the resident blocks of A, B and C). Narrow panels
// lose to thin products, per-broadcast costs and C's re-reads, wide ones to the fill (a GPU
// without a local panel waits for a whole first panel). InvalidValue when even the narrowest
// candidate does not fit, naming its bytes and the budget.
Status choose_panel_width(const DistributedShape& s, Decomposition decomposition, int gpus, std::uint64_t budget,
                          const DistributedRates& rates, DistributedPlan& out);

}  // namespace gemmlab
