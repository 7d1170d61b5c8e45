#include "core/out_of_core_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace gemmlab {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
std::int64_t round_up(std::int64_t a, std::int64_t b) { return ceil_div(a, b) * b; }

// On-device traffic of a block product's C (read and written once per block of K), at a
// nominal DRAM rate: what makes thin K blocks cost more than their flops.
constexpr double kDeviceBytesPerSecond = 2.5e12;
// A block product's efficiency: its output in 128 x 128 tiles spread over the SMs in waves (a
// last wave part empty, or a single wave that leaves SMs idle), and each tile's fixed cost of
// filling its pipeline and writing its result, worth about this much of K.
constexpr std::int64_t kBlockTile = 128;
constexpr double kTileOverheadK = 128;
// Each launch also loses about this much of a wave to its ramp up and down (measured on an
// H100, pipelined at 32768 x 32768 x 32768 in blocks: 40.4 TFLOP/s for a block of one wave,
// 47.4 for one of five, 48.9 in core).
constexpr double kKernelRampWaves = 0.2;
constexpr int kNominalMultiprocessors = 132;
// Tiles of C at most this many times longer one way than the other (unless the shorter side
// is the whole dimension): a thin block product runs the in-core rung far below its rate
// (measured on an H200: a 5632 x 256 x 16384 bf16 block at 64 TFLOP/s against 775 in core),
// more than the waves above account for.
constexpr std::int64_t kMaxTileAspect = 4;
// Tiles are ranked with the copies taking this much longer than the rates say: a plan balanced
// on the edge of its link turns copy-bound at the first slow copy (or kernel traffic competing
// with the copy engines), while wider tiles cost only memory.
constexpr double kLinkHeadroom = 1.3;
// Where no strided copy rate was measured, this share of the contiguous one (an H100's PCIe:
// 16 KB rows at about three quarters of the rate of one long run).
constexpr double kNominalStridedShare = 0.75;

// Whether a block's copy is strided: rows shorter than its matrix's (thousands of short runs,
// which a copy engine moves slower than one long run). A's block is op(A)'s rows i0.. and
// columns k0..; stored k x m under T. Likewise B.
bool a_strided(const OutOfCoreShape& s, const OutOfCorePlan& p) { return s.trans_a ? p.tile_m < s.m : p.tile_k < s.k; }
bool b_strided(const OutOfCoreShape& s, const OutOfCorePlan& p) { return s.trans_b ? p.tile_k < s.k : p.tile_n < s.n; }

}  // namespace

double out_of_core_model_seconds(const OutOfCorePlan& p) {
  return std::max(p.fill_seconds + std::max({p.compute_seconds, p.h2d_seconds, p.d2h_seconds}),
                  p.first_tile_seconds + p.d2h_seconds);
}

void set_out_of_core_compute(OutOfCorePlan& p, double compute_seconds) {
  const double tiles = static_cast<double>(std::max<std::int64_t>(1, p.tiles_m * p.tiles_n));
  p.first_tile_seconds += (compute_seconds - p.compute_seconds) / tiles;
  p.compute_seconds = compute_seconds;
  p.model_seconds = out_of_core_model_seconds(p);
}

double out_of_core_rank(const OutOfCoreShape&, const OutOfCorePlan& p) {
  return std::max(p.fill_seconds + std::max({p.compute_seconds, kLinkHeadroom * p.h2d_seconds,
                                             kLinkHeadroom * p.d2h_seconds}),
                  p.first_tile_seconds + kLinkHeadroom * p.d2h_seconds);
}

namespace {

// The rate of a strided copy in rows of `row` bytes: from the curve measured beside the block
// products where there is one (interpolated in the logarithm of the row, held at its ends),
// else `fallback`.
using StridedPoints = std::array<double, OutOfCoreRates::kStridedRowBytes.size()>;
double strided_rate(const StridedPoints& curve, double row, double fallback) {
  if (std::any_of(curve.begin(), curve.end(), [](double r) { return r <= 0; })) return fallback;
  const auto& rows = OutOfCoreRates::kStridedRowBytes;
  if (row <= rows.front()) return curve.front();
  for (std::size_t i = 0; i + 1 < rows.size(); ++i)
    if (row <= rows[i + 1]) {
      const double t = std::log(row / rows[i]) / std::log(rows[i + 1] / rows[i]);
      return curve[i] + t * (curve[i + 1] - curve[i]);
    }
  return curve.back();
}

// What each direction moves, and how long it takes alone (each copy at its own rate).
struct LinkLoad {
  double bytes = 0, seconds = 0;
  void add(double b, double rate) {
    bytes += b;
    seconds += b / rate;
  }
};

// How long each direction's copies take when both start together: at the shared rates while
// both run, then the longer one alone at its own rate. A direction slowed by its strided
// copies is slowed as much while it shares the link.
void link_seconds(const LinkLoad& up, const LinkLoad& down, const OutOfCoreRates& r, double& up_seconds,
                  double& down_seconds) {
  const double up_alone = up.bytes > 0 ? up.bytes / up.seconds : r.h2d_bytes_per_second;
  const double down_alone = down.bytes > 0 ? down.bytes / down.seconds : r.d2h_bytes_per_second;
  const double up_both = up_alone / r.h2d_bytes_per_second *
                         (r.h2d_both_bytes_per_second > 0 ? r.h2d_both_bytes_per_second : r.h2d_bytes_per_second);
  const double down_both = down_alone / r.d2h_bytes_per_second *
                           (r.d2h_both_bytes_per_second > 0 ? r.d2h_both_bytes_per_second : r.d2h_bytes_per_second);
  const double together = std::min(up.bytes / up_both, down.bytes / down_both);
  up_seconds = together + (up.bytes - together * up_both) / up_alone;
  down_seconds = together + (down.bytes - together * down_both) / down_alone;
}

// The rates a plan's copies move at alone: each block's, by whether it is strided and the
// length of its rows.
struct CopyRates {
  double a_up, b_up, c_up, c_down;
};
CopyRates copy_rates(const OutOfCoreShape& s, const OutOfCorePlan& p, const OutOfCoreRates& r) {
  const double strided_up = r.h2d_strided_bytes_per_second > 0 ? r.h2d_strided_bytes_per_second
                                                                 : kNominalStridedShare * r.h2d_bytes_per_second;
  const auto up = [&](bool strided, const OutOfCoreRates::StridedCurve& curve, double row) {
    return strided ? strided_rate(curve.h2d, row, strided_up) : r.h2d_bytes_per_second;
  };
  const double tm = static_cast<double>(std::min(p.tile_m, s.m)), tn = static_cast<double>(std::min(p.tile_n, s.n)),
               tk = static_cast<double>(std::min(p.tile_k, s.k));
  const double in = static_cast<double>(s.input_bytes), out = static_cast<double>(s.output_bytes);
  const bool c_strided = p.tile_n < s.n;
  CopyRates c;
  c.a_up = up(a_strided(s, p), r.a_strided_beside, (s.trans_a ? tm : tk) * in);
  c.b_up = up(b_strided(s, p), r.b_strided_beside, (s.trans_b ? tk : tn) * in);
  c.c_up = up(c_strided, r.c_strided_beside, tn * out);
  c.c_down = c_strided ? strided_rate(r.c_strided_beside.d2h, tn * out, r.d2h_bytes_per_second)
                       : r.d2h_bytes_per_second;
  return c;
}

}  // namespace

double block_efficiency(std::int64_t tm, std::int64_t tn, std::int64_t tk, int multiprocessors, double overhead_k,
                        std::int64_t tile_m, std::int64_t tile_n) {
  const double tiles = static_cast<double>(ceil_div(tm, tile_m > 0 ? tile_m : kBlockTile) *
                                           ceil_div(tn, tile_n > 0 ? tile_n : kBlockTile));
  const double waves = tiles / multiprocessors;
  const double k = static_cast<double>(tk);
  return waves / (std::ceil(waves) + kKernelRampWaves) * k / (k + (overhead_k > 0 ? overhead_k : kTileOverheadK));
}

namespace {

// Balanced cuts of a dimension: `count` pieces of equal size rounded up to the alignment (the
// whole dimension where it is smaller), for counts that grow by about a fifth at a time.
std::vector<std::int64_t> candidate_sizes(std::int64_t extent, std::int64_t fixed) {
  if (fixed > 0) return {std::min(fixed, extent)};
  std::vector<std::int64_t> out;
  for (std::int64_t count = 1;; count = std::max(count + 1, count * 6 / 5)) {
    const std::int64_t size = extent <= kOutOfCoreTileAlign ? extent : round_up(ceil_div(extent, count), kOutOfCoreTileAlign);
    if (out.empty() || size < out.back()) out.push_back(size);
    if (size <= kOutOfCoreTileAlign || count > extent) break;
  }
  return out;
}

}  // namespace

std::string OutOfCorePlan::describe() const {
  const char* residency = a_resident ? "A resident per row of tiles, B streamed"
                          : b_resident ? "B resident per column of tiles, A streamed"
                                       : "A and B streamed";
  return fmt::format("tiles of C {}x{}, blocks of K {} ({}x{}x{}), {}, {:.2f} GB on the device, in-core rung {}{}",
                     tile_m, tile_n, tile_k, tiles_m, tiles_n, blocks_k, residency,
                     static_cast<double>(device_bytes) * 1e-9, variant, config.empty() ? "" : " (" + config + ")");
}

std::int64_t ramp_piece(std::int64_t extent) {
  if (extent < 2 * kOutOfCoreTileAlign) return extent;
  return round_up(ceil_div(extent, kOutOfCoreRamp), kOutOfCoreTileAlign);
}

bool ramp_cuts_a(const OutOfCoreShape& s) { return s.trans_a; }
bool ramp_cuts_b(const OutOfCoreShape& s) { return !s.trans_b; }

std::int64_t device_ld(std::int64_t width) { return round_up(std::max<std::int64_t>(width, 1), kOutOfCoreLdAlign); }

TileElements tile_elements(const OutOfCoreShape& s, std::int64_t tm, std::int64_t tn, std::int64_t tk) {
  TileElements e;
  e.a = s.trans_a ? tk * device_ld(tm) : tm * device_ld(tk);
  e.b = s.trans_b ? tn * device_ld(tk) : tk * device_ld(tn);
  e.c = tm * device_ld(tn);
  return e;
}

GemmProblem block_problem(const OutOfCoreShape& s, DType input, DType output, DType compute, std::int64_t tm,
                          std::int64_t tn, std::int64_t tk, void* a, void* b, void* c, double alpha, double beta) {
  const auto matrix = [](void* data, std::int64_t rows, std::int64_t cols, DType dtype) {
    Matrix x;
    x.data = data;
    x.rows = rows;
    x.cols = cols;
    x.ld = device_ld(cols);
    x.layout = Layout::RowMajor;
    x.dtype = dtype;
    return x;
  };
  GemmProblem p;
  p.m = tm;
  p.n = tn;
  p.k = tk;
  p.op_a = s.trans_a ? Op::T : Op::N;
  p.op_b = s.trans_b ? Op::T : Op::N;
  p.a = s.trans_a ? matrix(a, tk, tm, input) : matrix(a, tm, tk, input);
  p.b = s.trans_b ? matrix(b, tn, tk, input) : matrix(b, tk, tn, input);
  p.c = matrix(c, tm, tn, output);
  p.alpha = alpha;
  p.beta = beta;
  p.compute = compute;
  return p;
}

std::uint64_t tile_buffer_bytes(const OutOfCoreShape& s, std::int64_t tm, std::int64_t tn, std::int64_t tk) {
  const TileElements e = tile_elements(s, tm, tn, tk);
  const auto in = static_cast<std::uint64_t>(s.input_bytes), out = static_cast<std::uint64_t>(s.output_bytes);
  return kOutOfCoreBuffers * (static_cast<std::uint64_t>(e.a + e.b) * in + static_cast<std::uint64_t>(e.c) * out);
}

OutOfCoreRates nominal_rates(DType input, DType compute, bool tensor_cores) {
  OutOfCoreRates r;
  r.h2d_bytes_per_second = 25e9;
  r.d2h_bytes_per_second = 25e9;
  r.multiprocessors = kNominalMultiprocessors;
  if (input == DType::F32 && compute == DType::F32) r.flops_per_second = tensor_cores ? 120e12 : 50e12;
  else if (input == DType::F32) r.flops_per_second = 400e12;
  else r.flops_per_second = 650e12;
  // The tile overhead in units of K, as the bench measures it on an H100 (SIMT 60-140, 3xTF32
  // 80-360, bf16 2,000-4,000); tf32's put at half bf16's, its K loop running at half the rate.
  if (!tensor_cores) r.tile_overhead_k = kTileOverheadK;
  else if (input == DType::F32 && compute == DType::F32) r.tile_overhead_k = 250;
  else if (input == DType::F32) r.tile_overhead_k = 1250;
  else r.tile_overhead_k = 2500;
  return r;
}

void model_out_of_core(const OutOfCoreShape& s, const OutOfCoreRates& rates, OutOfCorePlan& p) {
  p.tiles_m = ceil_div(s.m, p.tile_m);
  p.tiles_n = ceil_div(s.n, p.tile_n);
  p.blocks_k = ceil_div(s.k, p.tile_k);
  if (p.blocks_k > 1) p.a_resident = p.b_resident = false;
  const double m = static_cast<double>(s.m), n = static_cast<double>(s.n), k = static_cast<double>(s.k);
  const double in = static_cast<double>(s.input_bytes), out = static_cast<double>(s.output_bytes);
  // A resident: once; else once per column of tiles. B resident: once; else once per row of
  // tiles. C up (beta != 0) and down once.
  const double a_bytes = m * k * in * (p.a_resident ? 1.0 : static_cast<double>(p.tiles_n));
  const double b_bytes = n * k * in * (p.b_resident ? 1.0 : static_cast<double>(p.tiles_m));
  p.h2d_bytes = a_bytes + b_bytes + (s.reads_c ? m * n * out : 0.0);
  p.d2h_bytes = m * n * out;
  p.flops = 2.0 * m * n * k;
  p.rates = rates;
  const double c_traffic = m * n * out * (2.0 * static_cast<double>(p.blocks_k) - (s.reads_c ? 0.0 : 1.0));
  const int sms = rates.multiprocessors > 0 ? rates.multiprocessors : kNominalMultiprocessors;
  p.compute_seconds = p.flops / (rates.flops_per_second * block_efficiency(std::min(p.tile_m, s.m),
                                                                           std::min(p.tile_n, s.n),
                                                                           std::min(p.tile_k, s.k), sms,
                                                                           rates.tile_overhead_k)) +
                      c_traffic / kDeviceBytesPerSecond;
  const CopyRates copy = copy_rates(s, p, rates);
  LinkLoad up, down;
  up.add(a_bytes, copy.a_up);
  up.add(b_bytes, copy.b_up);
  if (s.reads_c) up.add(m * n * out, copy.c_up);
  down.add(p.d2h_bytes, copy.c_down);
  link_seconds(up, down, rates, p.h2d_seconds, p.d2h_seconds);
  // Never hidden: the first tile's C, its uncut blocks and the first piece of the cut ones going
  // up before anything computes (or, where the pieces take longer to go up than the first
  // product to run, all of them but what the product's pieces hide), likewise the last piece of the last tile coming
  // down after everything has (the ramp; a plan of one step has no last pieces), and what
  // running those products in pieces costs where the products are the longest part.
  const std::int64_t tm = std::min(p.tile_m, s.m), tn = std::min(p.tile_n, s.n), tk = std::min(p.tile_k, s.k);
  const TileElements e = tile_elements(s, tm, tn, tk);
  const double c_tile = static_cast<double>(e.c) * out;
  const auto pieces = [](std::int64_t extent) { return static_cast<double>(ceil_div(extent, ramp_piece(extent))); };
  const double steps = static_cast<double>(p.tiles_m * p.tiles_n * p.blocks_k);
  // The first blocks: those the ramp cuts go up in pieces of K, the others whole before them.
  const double a_up = static_cast<double>(e.a) * in / copy.a_up, b_up = static_cast<double>(e.b) * in / copy.b_up;
  const bool cut_a = ramp_cuts_a(s), cut_b = ramp_cuts_b(s), cut = cut_a || cut_b;
  const double first_whole_up = (cut_a ? 0.0 : a_up) + (cut_b ? 0.0 : b_up);
  const double first_cut_up = (cut_a ? a_up : 0.0) + (cut_b ? b_up : 0.0);
  // A block product's time by the model, and the same product run in the ramp's pieces (of K
  // first, of rows last): each piece pays the tile overhead again and fills fewer waves.
  const auto product_seconds = [&](std::int64_t rows, std::int64_t depth) {
    return 2.0 * static_cast<double>(rows) * static_cast<double>(tn) * static_cast<double>(depth) /
           (rates.flops_per_second * block_efficiency(rows, tn, depth, sms, rates.tile_overhead_k));
  };
  const auto in_pieces = [&](std::int64_t extent, const auto& piece_seconds) {
    const std::int64_t piece = ramp_piece(extent);
    double seconds = 0;
    for (std::int64_t at = 0; at < extent; at += piece) seconds += piece_seconds(std::min(piece, extent - at));
    return seconds;
  };
  const double whole_product = product_seconds(tm, tk);
  const double first_product =
      cut ? in_pieces(tk, [&](std::int64_t depth) { return product_seconds(tm, depth); }) : whole_product;
  const double last_product =
      steps == 1 ? whole_product : in_pieces(tm, [&](std::int64_t rows) { return product_seconds(rows, tk); });
  // The pieces' extra time is exposed where the products are the longest part of the run.
  const double ramp_extra = (first_product - whole_product) + (last_product - whole_product);
  const double ramp_exposed =
      std::max(0.0, p.compute_seconds + ramp_extra - std::max({p.compute_seconds, p.h2d_seconds, p.d2h_seconds}));
  // What of `copy` seconds in `count` pieces a product of `product` seconds, in as many, leaves
  // exposed.
  const auto exposed = [](double copy_seconds, double product, double count) {
    return std::max(copy_seconds / count, copy_seconds - product * (count - 1) / count);
  };
  const double last_down = c_tile / copy.c_down;
  const double first_up = first_whole_up + exposed(first_cut_up, first_product, cut ? pieces(tk) : 1.0) +
                          (s.reads_c ? c_tile / copy.c_up : 0.0);
  p.fill_seconds = first_up + (steps == 1 ? last_down : exposed(last_down, last_product, pieces(tm))) + ramp_exposed;
  // The first tile is final after its first product and its other blocks of K, each as long as
  // the longer of its product and its blocks' copies.
  p.first_tile_seconds = first_up + first_product +
                         static_cast<double>(p.blocks_k - 1) * std::max(whole_product, a_up + b_up);
  p.model_seconds = out_of_core_model_seconds(p);
}

Status choose_out_of_core_tiles(const OutOfCoreShape& s, std::uint64_t budget, const OutOfCoreRates& rates,
                                const WorkspaceBound& workspace, std::int64_t fixed_m, std::int64_t fixed_n,
                                std::int64_t fixed_k, OutOfCorePlan& out) {
  if (s.m <= 0 || s.n <= 0 || s.k <= 0)
    return {StatusCode::InvalidValue, fmt::format("out-of-core tiles of an empty problem ({}x{}x{})", s.m, s.n, s.k)};
  if (rates.flops_per_second <= 0 || rates.h2d_bytes_per_second <= 0 || rates.d2h_bytes_per_second <= 0)
    return {StatusCode::InvalidValue, "out-of-core rates must be positive"};
  bool found = false;
  std::uint64_t least = std::numeric_limits<std::uint64_t>::max();
  for (const std::int64_t tm : candidate_sizes(s.m, fixed_m))
    for (const std::int64_t tn : candidate_sizes(s.n, fixed_n))
      for (const std::int64_t tk : candidate_sizes(s.k, fixed_k)) {
        if ((tm > kMaxTileAspect * tn && tn < s.n) || (tn > kMaxTileAspect * tm && tm < s.m)) continue;
        const std::uint64_t ws = workspace ? workspace(tm, tn, tk) : 0;
        const std::uint64_t bytes = tile_buffer_bytes(s, tm, tn, tk) + ws;
        least = std::min(least, bytes);
        if (bytes > budget) continue;
        // With one block of K, A resident (rows of tiles outer) or B resident (columns outer).
        for (const bool a_first : {true, false}) {
          OutOfCorePlan p;
          p.tile_m = tm;
          p.tile_n = tn;
          p.tile_k = tk;
          p.a_resident = a_first && tk >= s.k;
          p.b_resident = !a_first && tk >= s.k;
          if (!a_first && tk < s.k) continue;  // neither resident: the same plan as a_first's
          p.device_bytes = bytes;
          p.workspace_bytes = ws;
          model_out_of_core(s, rates, p);
          // Ties (within a part in a thousand) go to fewer steps: fewer launches and copies.
          const auto steps = [](const OutOfCorePlan& x) { return x.tiles_m * x.tiles_n * x.blocks_k; };
          const double rank = out_of_core_rank(s, p), best = found ? out_of_core_rank(s, out) : 0;
          if (!found || rank < best * 0.999 || (rank <= best * 1.001 && steps(p) < steps(out))) {
            out = p;
            found = true;
          }
        }
      }
  if (!found)
    return {StatusCode::InvalidValue,
            fmt::format("the device memory limit of {:.3f} GB cannot hold one out-of-core step of {}x{}x{}: the "
                        "smallest needs {:.3f} GB (two blocks each of A and B, two tiles of C and the rung's workspace); "
                        "raise --device-memory-limit{}",
                        static_cast<double>(budget) * 1e-9, s.m, s.n, s.k, static_cast<double>(least) * 1e-9,
                        fixed_m > 0 || fixed_n > 0 || fixed_k > 0 ? " or choose smaller tiles" : "")};
  return Status::ok();
}

}  // namespace gemmlab
