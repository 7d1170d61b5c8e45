// Out-of-core GEMM: A, B and C in host memory, the product computed on one GPU whose memory
// need not hold them (seed 002's "another level of blocking", one level further out). C is cut
// into second-level tiles; each tile's panels of A and B stream host -> device in blocks of K
// while the tile before computes, and each finished tile streams device -> host while the next
// computes, on streams of their own (the copy engines run both directions at once). When K
// fits in one block, the block of A (or of B) stays on the device while the tiles of its row
// (or column) reuse it.
// Each block product is an ordinary in-core GEMM by the rung `in_core` names ("auto": the
// fastest for the dtype). The call returns when C is complete in host memory.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "gemmlab/context.hpp"
#include "gemmlab/gemm.hpp"
#include "gemmlab/problem.hpp"
#include "gemmlab/status.hpp"

namespace gemmlab {

// What the tile choice assumes of the machine (flops and bytes per second). Zero: a nominal
// figure for the precision (out_of_core_plan.cpp); the bench passes what it measured.
struct OutOfCoreRates {
  double flops_per_second = 0;   // the in-core rung on a whole tile
  double h2d_bytes_per_second = 0;  // each direction alone
  double d2h_bytes_per_second = 0;
  // Each direction while the other runs too (0: as alone): a shared link gives each less.
  double h2d_both_bytes_per_second = 0;
  double d2h_both_bytes_per_second = 0;
  // Host to device in strided copies (a block whose rows are shorter than its matrix's), alone
  // in rows of 16 KiB; 0: three quarters of the contiguous rate.
  double h2d_strided_bytes_per_second = 0;
  // Strided copies as the schedule makes them, beside its block products: each operand's
  // blocks in rows of kStridedRowBytes[i] bytes out of that operand's own host rows, each
  // direction's rate (interpolated in the logarithm of the row between the points; held at the
  // ends). Where unmeasured (any point 0), the figures above. A short row loses far more beside
  // a running kernel than one long run does, and more the farther apart the host rows are (on
  // an H100, rows of 2 KiB 32 KiB apart at 23.7 GB/s, 64 KiB apart at 18.7), so each operand's
  // curve is measured at its own pitch. The rate is not monotonic in the row: rows of 3 and
  // 12 KiB move slower than rows of 2 and 8 KiB, hence points at 1.5 x powers of two.
  static constexpr std::array<double, 13> kStridedRowBytes = {512,  768,  1024,  1536,  2048,  3072, 4096,
                                                              6144, 8192, 12288, 16384, 32768, 65536};
  struct StridedCurve {
    std::array<double, kStridedRowBytes.size()> h2d{}, d2h{};
  };
  StridedCurve a_strided_beside, b_strided_beside, c_strided_beside;
  // The device's SMs: a block product with too few output tiles to fill them runs slower.
  int multiprocessors = 0;
  // The rung's fixed cost of an output tile (filling its pipeline, reading and writing C), in
  // units of K: a block product of K k runs at k / (k + this) of the rate (0: a nominal one
  // for the precision). The tensor-core rungs' runs to thousands (the bench measures it), so
  // thin blocks of K cost them most.
  double tile_overhead_k = 0;
};

struct OutOfCoreOptions {
  GemmOptions in_core{};  // the rung (and configuration) that computes each block product
  // The most device memory the call may use, its buffers and the rung's workspace together;
  // 0: what the device has free, less a margin for the libraries.
  std::uint64_t device_memory_limit = 0;
  // Second-level tile of C (tile_m x tile_n) and block of K; 0: chosen by the model.
  std::int64_t tile_m = 0, tile_n = 0, tile_k = 0;
  OutOfCoreRates rates{};
};

// The schedule one call runs, as the model chose it, and what it moves.
struct OutOfCorePlan {
  std::int64_t tile_m = 0, tile_n = 0, tile_k = 0;
  std::int64_t tiles_m = 0, tiles_n = 0, blocks_k = 0;  // tiles of C along m and n; blocks of K
  // With one block of K, one operand's block stays on the device while the tiles that reuse it
  // run (A's along a row of tiles, B's along a column) and the other's streams; which one is
  // the model's choice. Neither with several blocks of K.
  bool a_resident = false, b_resident = false;
  std::uint64_t device_bytes = 0;     // tile buffers and the rung's workspace bound
  std::uint64_t workspace_bytes = 0;  // of which the rung's workspace (bound)
  double h2d_bytes = 0, d2h_bytes = 0;  // over the whole call
  double flops = 0;
  // The model's time and its parts, in seconds, at the rates the plan was made with.
  double compute_seconds = 0, h2d_seconds = 0, d2h_seconds = 0;
  // The first blocks' upload, the last tile's download and what cutting those products into
  // the ramp's pieces costs: never hidden.
  double fill_seconds = 0;
  // When the first tile of C is final (its blocks up, its products run): no download starts
  // before it.
  double first_tile_seconds = 0;
  // fill + max(compute, h2d, d2h), or the first tile and then every download, where longer.
  double model_seconds = 0;
  OutOfCoreRates rates{};    // what the model assumed
  std::string variant, config;  // the in-core rung that computes the blocks
  std::string describe() const;  // "tiles of C 8192x8192, blocks of K 4096 (4x4x8), A and B streamed, ..."
};

// The plan `options` gives `problem` (host operands) in `context` (CUDA), without running it:
// InvalidValue where the limit cannot hold the smallest tile, naming the bytes.
Status plan_out_of_core(Context& context, const GemmProblem& problem, const OutOfCoreOptions& options,
                        OutOfCorePlan& out);

// C <- alpha * op(A) * op(B) + beta * C with A, B and C in host memory (pinned memory lets the
// copies overlap the computation; pageable memory works, its copies serialise), computed on
// the context's device: the block products on its stream, the copies on two streams of the
// context's own. Blocks until C is in host memory. Device pointers are refused (use gemm()).
// `used`, when given, receives the plan that ran.
Status gemm_out_of_core(Context& context, const GemmProblem& problem, const OutOfCoreOptions& options = {},
                        OutOfCorePlan* used = nullptr);

// Frees the device buffers `context` keeps between out-of-core calls (the next call makes them
// again), as before in-core work that needs the memory.
void release_out_of_core_buffers(Context& context);

}  // namespace gemmlab
