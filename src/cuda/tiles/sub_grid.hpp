// The second level of blocking (seed 002: "For very large N and M dimensions, one will need
// to add another level of blocking and execute the second-level blocks sequentially").
//
// A launch covers C with a grid of tiles, one block each. CUDA caps a grid at 2^31 - 1
// blocks along x and 65,535 along y and z, and the kernels index rows, columns and k in
// 32-bit int (their offsets into A, B and C are 64-bit). A problem past what one launch
// covers is cut into sub-problems, each launched on its own, in sequence on the same stream:
//  - C's rows and columns into spans of whole tiles, the operands' base pointers moved to
//    the span in 64-bit arithmetic, so that inside a launch every index is below 2^31 and
//    the kernel runs as it always does (the hot loops do not change);
//  - K into chunks that accumulate into C: the first applies beta, the later ones add
//    (beta = 1), as the CPU rungs' K blocks do.
// Spans are whole tiles, so moved bases keep the 16-byte alignment the vector paths test.
// At ordinary sizes the plan is one launch on the problem as it is. Plain C++: the unit
// tests check the arithmetic on the host (tests/unit/test_sub_grid.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "gemmlab/problem.hpp"
#include "gemmlab/status.hpp"

namespace gemmlab::cuda {

inline constexpr std::int64_t kMaxGridX = 2147483647;  // blocks along x
inline constexpr std::int64_t kMaxGridYZ = 65535;      // blocks along y and along z
inline constexpr std::int64_t kMaxIndex = std::numeric_limits<int>::max();
// K of one launch of a kernel whose K loop steps k0 += BK in int: k0 + BK and k0 plus a lane
// stay below 2^31.
inline constexpr std::int64_t kMaxKChunk = std::int64_t{1} << 30;
inline constexpr std::int64_t kUnlimited = std::numeric_limits<std::int64_t>::max();

// Tiles of `tile` elements whose int indices (up to tiles x tile - 1) stay below 2^31.
constexpr std::int64_t index_tiles(std::int64_t tile) { return kMaxIndex / tile; }

// What one launch of a rung may hold.
struct GridLimits {
  std::int64_t tile_m = 1, tile_n = 1;            // a block's tile of C
  std::int64_t max_tiles_m = 1, max_tiles_n = 1;  // tile rows and tile columns of one launch
  std::int64_t max_blocks = kUnlimited;           // tiles of one launch in all
  std::int64_t max_k = kMaxIndex;                 // K of one launch
};

// A 2-D grid, tile columns along x and tile rows along y (at most 65,535).
constexpr GridLimits rows_on_y(std::int64_t tile_m, std::int64_t tile_n, std::int64_t max_k = kMaxIndex) {
  return {tile_m, tile_n, kMaxGridYZ, index_tiles(tile_n), kUnlimited, max_k};
}
// A 2-D grid, tile rows along x and tile columns along y (at most 65,535).
constexpr GridLimits cols_on_y(std::int64_t tile_m, std::int64_t tile_n, std::int64_t max_k = kMaxIndex) {
  return {tile_m, tile_n, index_tiles(tile_m), kMaxGridYZ, kUnlimited, max_k};
}
// A 1-D grid of tiles_m x tiles_n blocks along x (in int on host and device).
constexpr GridLimits tiles_on_x(std::int64_t tile_m, std::int64_t tile_n, std::int64_t max_k = kMaxIndex) {
  return {tile_m, tile_n, index_tiles(tile_m), index_tiles(tile_n), kMaxGridX, max_k};
}

// How a problem is cut: spans of rows, columns and K per launch, and how many of each.
struct SubGrids {
  std::int64_t span_m = 1, span_n = 1, span_k = 1;
  std::int64_t parts_m = 1, parts_n = 1, parts_k = 1;
  std::int64_t launches() const { return parts_m * parts_n * parts_k; }
};

namespace detail {
constexpr std::int64_t ceil_div64(std::int64_t x, std::int64_t y) { return (x + y - 1) / y; }
// A span of `extent` (one span if it fits `max_span`, else max_span) and the parts it makes;
// an empty extent is one empty part.
constexpr void cut(std::int64_t extent, std::int64_t max_span, std::int64_t& span, std::int64_t& parts) {
  span = std::max<std::int64_t>(1, std::min(extent, max_span));
  parts = std::max<std::int64_t>(1, ceil_div64(extent, span));
}
}  // namespace detail

// The plan for an m x n x k problem (canonical, row-major C) under `l`.
constexpr SubGrids plan_sub_grids(std::int64_t m, std::int64_t n, std::int64_t k, const GridLimits& l) {
  SubGrids s;
  detail::cut(n, l.max_tiles_n * l.tile_n, s.span_n, s.parts_n);
  // A 1-D grid holds tiles_m x tiles_n blocks: the tile columns of a span bound its rows.
  const std::int64_t tiles_n = detail::ceil_div64(s.span_n, l.tile_n);
  const std::int64_t tiles_m = std::max<std::int64_t>(1, std::min(l.max_tiles_m, l.max_blocks / tiles_n));
  detail::cut(m, tiles_m * l.tile_m, s.span_m, s.parts_m);
  detail::cut(k, l.max_k, s.span_k, s.parts_k);
  return s;
}

inline SubGrids plan_sub_grids(const RowMajorGemm& g, const GridLimits& l) { return plan_sub_grids(g.m, g.n, g.k, l); }

// Launches of a rung's kernel for `problem` (Traffic::launches, which explain shows).
inline std::int64_t launches(const GemmProblem& problem, const GridLimits& l) {
  return plan_sub_grids(canonicalize(problem), l).launches();
}

// Sub-problem (i, j, p) of `g`: rows [i span_m, ...), columns [j span_n, ...) and K
// [p span_k, ...), with A, B and C moved there (`in_bytes`: bytes of an element of A and B,
// `c_bytes` of C). K chunks after the first add to C: beta = 1.
inline RowMajorGemm sub_problem(const RowMajorGemm& g, const SubGrids& s, std::int64_t i, std::int64_t j,
                                std::int64_t p, std::size_t in_bytes, std::size_t c_bytes) {
  const std::int64_t row0 = i * s.span_m, col0 = j * s.span_n, k0 = p * s.span_k;
  const auto in = static_cast<std::int64_t>(in_bytes);
  RowMajorGemm sub = g;
  sub.m = std::min(s.span_m, g.m - row0);
  sub.n = std::min(s.span_n, g.n - col0);
  sub.k = std::min(s.span_k, g.k - k0);
  // op(A)(row, kk) = trans_a ? a[kk * lda + row] : a[row * lda + kk], likewise B.
  const std::int64_t a_offset = g.trans_a ? k0 * g.lda + row0 : row0 * g.lda + k0;
  const std::int64_t b_offset = g.trans_b ? col0 * g.ldb + k0 : k0 * g.ldb + col0;
  const std::int64_t c_offset = row0 * g.ldc + col0;
  sub.a = static_cast<const unsigned char*>(g.a) + a_offset * in;
  sub.b = static_cast<const unsigned char*>(g.b) + b_offset * in;
  sub.c = static_cast<unsigned char*>(g.c) + c_offset * static_cast<std::int64_t>(c_bytes);
  if (p > 0) sub.beta = 1.0;
  return sub;
}

// Calls launch(sub) for every sub-problem of `g` under `l`, the K chunks of a block of C one
// after another; stops at the first failure. Once, on `g` itself, at ordinary sizes.
template <class Launch>
Status for_each_sub_grid(const RowMajorGemm& g, const GridLimits& l, std::size_t in_bytes, std::size_t c_bytes,
                         Launch&& launch) {
  const SubGrids s = plan_sub_grids(g, l);
  for (std::int64_t i = 0; i < s.parts_m; ++i)
    for (std::int64_t j = 0; j < s.parts_n; ++j)
      for (std::int64_t p = 0; p < s.parts_k; ++p) GEMMLAB_TRY(launch(sub_problem(g, s, i, j, p, in_bytes, c_bytes)));
  return Status::ok();
}

}  // namespace gemmlab::cuda
