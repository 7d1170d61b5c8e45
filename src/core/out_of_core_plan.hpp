// The out-of-core schedule's model and tile choice, pure arithmetic (no device): what a tile
// size costs in device memory and moves over the host link, and which sizes the model says
// are fastest within a memory limit. The CUDA schedule (src/cuda/runtime/out_of_core.cpp)
// lays its buffers out exactly as tile_buffer_bytes() counts them.
#pragma once

#include <cstdint>
#include <functional>

#include "gemmlab/out_of_core.hpp"
#include "gemmlab/problem.hpp"
#include "gemmlab/types.hpp"

namespace gemmlab {

// Device rows are padded to this many elements, so every block starts 16-byte aligned for
// the rungs' vector loads and TMA whatever its width.
inline constexpr std::int64_t kOutOfCoreLdAlign = 16;
// Tiles and K blocks are cut at multiples of this (the in-core rungs' tiles divide it), except
// where the whole dimension is smaller.
inline constexpr std::int64_t kOutOfCoreTileAlign = 256;

// The problem as the schedule sees it (row-major, canonicalize()'s form).
struct OutOfCoreShape {
  std::int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  std::size_t input_bytes = 4;   // bytes of an element of A and B
  std::size_t output_bytes = 4;  // of C
  bool reads_c = false;          // beta != 0: every tile of C is uploaded before its first block
};

// Leading dimension of a block `width` elements wide on the device.
std::int64_t device_ld(std::int64_t width);

// Elements of each device buffer for tiles (tm, tn, tk): one block of op(A) (tm x tk, stored
// as the host stores A), one of op(B) (tk x tn) and one tile of C.
struct TileElements {
  std::int64_t a = 0, b = 0, c = 0;
};
TileElements tile_elements(const OutOfCoreShape& s, std::int64_t tm, std::int64_t tn, std::int64_t tk);

// The schedule's block product (tm x tn x tk) as the in-core rung sees it: A's and B's blocks
// stored as the host stores them (row-major, canonicalize()'s form), their rows padded to
// device_ld(), and C's tile, at `a`, `b` and `c` on the device.
GemmProblem block_problem(const OutOfCoreShape& s, DType input, DType output, DType compute, std::int64_t tm,
                          std::int64_t tn, std::int64_t tk, void* a, void* b, void* c, double alpha, double beta);

// The ramp: the first block product runs in pieces of K, each as soon as its part of the first
// blocks is up, and the last tile's last product in pieces of rows, each coming down as soon as
// it is done, so that the pipeline fills and drains in a piece rather than a whole block.
inline constexpr int kOutOfCoreRamp = 4;
// The size of the ramp's pieces of `extent` (K of the first step, rows of the last tile): about
// a kOutOfCoreRamp-th, a multiple of kOutOfCoreTileAlign; the whole extent where it is too
// short to cut.
std::int64_t ramp_piece(std::int64_t extent);
// Which operands' first blocks the ramp cuts into pieces of K: those stored with K the slow
// dimension (A transposed, B not), whose pieces are runs of whole rows of the block. Cut the
// other way a piece is a strided copy of short rows, which beside a running product moves at a
// fraction of the link's rate (an H100: rows of 16 KiB 64 KiB apart at about half), so that
// operand's block goes up whole before the other's pieces.
bool ramp_cuts_a(const OutOfCoreShape& s);
bool ramp_cuts_b(const OutOfCoreShape& s);

// Two buffers each of A's block, B's block and C's tile: one in use while the other is copied.
inline constexpr int kOutOfCoreBuffers = 2;
std::uint64_t tile_buffer_bytes(const OutOfCoreShape& s, std::int64_t tm, std::int64_t tn, std::int64_t tk);

// What the rung computing the blocks keeps on the device for a block product (tm, tn, tk).
using WorkspaceBound = std::function<std::uint64_t(std::int64_t tm, std::int64_t tn, std::int64_t tk)>;

// The nominal rates for a precision, where the caller measured none: an H100's in-core rates
// (float32 SIMT 50, 3xTF32 120, tf32 400, bf16 and f16 650 TFLOP/s), their tile overheads
// (SIMT 128 of K, 3xTF32 250, tf32 1,250, bf16 and f16 2,500) and 25 GB/s each way.
OutOfCoreRates nominal_rates(DType input, DType compute, bool tensor_cores);

// The share of the in-core rate a (tm x tn x tk) block product reaches, by the model: its
// output in 128 x 128 tiles spread over `multiprocessors` SMs in waves (a part-empty last wave,
// and a fifth of a wave lost to each launch's ramp), and each tile's fixed cost of filling its
// pipeline and writing its result, worth about 128 of K.
// `overhead_k`: that fixed cost as measured for the rung (OutOfCoreRates::tile_overhead_k; 0:
// the nominal 128). `tile_m` x `tile_n`: the rung's own output tile where known (0: 128).
double block_efficiency(std::int64_t tm, std::int64_t tn, std::int64_t tk, int multiprocessors,
                        double overhead_k = 0, std::int64_t tile_m = 0, std::int64_t tile_n = 0);

// Fills the counts, bytes and the model's times of `plan` for its tile sizes. The compute time
// is the flops at the in-core rate, discounted for a block product too small to fill the SMs
// or too thin in K to amortise each output tile's fixed cost, plus C's traffic on the device.
void model_out_of_core(const OutOfCoreShape& s, const OutOfCoreRates& rates, OutOfCorePlan& plan);

// The model's time from its parts: the fill and the longest of the three streams, or the first
// tile of C and then all of the downloads, whichever is longer.
double out_of_core_model_seconds(const OutOfCorePlan& plan);

// Puts the model's compute at `compute_seconds` (a rate measured for the plan's very blocks),
// the first tile's share with it, and the model's time after it.
void set_out_of_core_compute(OutOfCorePlan& plan, double compute_seconds);

// What the tile choice minimises: the model's time with the copies given headroom (a plan on
// the edge of its link turns copy-bound at the first slow copy) and strided copies of many
// short rows counted slower than one long run.
double out_of_core_rank(const OutOfCoreShape& s, const OutOfCorePlan& plan);

// The tile sizes (and resident operand) of least rank whose buffers and workspace fit `budget` bytes, among
// balanced cuts of each dimension (fixed_* > 0 fixes that size). InvalidValue when none fits,
// naming the smallest schedule's bytes and the limit.
Status choose_out_of_core_tiles(const OutOfCoreShape& s, std::uint64_t budget, const OutOfCoreRates& rates,
                                const WorkspaceBound& workspace, std::int64_t fixed_m, std::int64_t fixed_n,
                                std::int64_t fixed_k, OutOfCorePlan& out);

}  // namespace gemmlab
