// How a consumer warp of wgmma_ws.cuh lays out rows of C in shared memory for cp.async.bulk
// (store_tile_bulk), where TMA tensor maps cannot address C. Plain C++ (the kernel calls it
// through --expt-relaxed-constexpr), so that the host tests (tests/unit/test_bulk_rows.cpp)
// check the kernel's own index arithmetic: every column of a row segment stored once, every
// bulk copy 16-byte aligned at both ends, the bank conflicts of the staging stores.
//
// A warp stages kRows rows by kCols columns at a time (the 8 rows of one half of its 16
// accumulator rows: lanes 4 apart hold rows 1 apart) in a slice of its own. cp.async.bulk
// needs 16-byte aligned addresses and sizes at both ends, but a segment of such a C starts
// `s` = (address / 4) % 4 floats past a 16-byte boundary, s changing from row to row. So each
// segment splits into a head of head(s) = 4 - s columns, an interior of kInterior columns
// starting on a 16-byte boundary, and a tail of s columns: the interior goes by one bulk
// copy, the head and the tail (4 floats per row together) by plain stores of the lanes.
// Every row splits so, also at s = 0 (a head of 4, no tail): one copy of one size per row
// and one layout, whatever the pitch. 64 columns, not the TMA epilogue's 32: each copy costs
// the issuing lane about 8 instructions (uniform datapath), so wider segments halve that,
// and the edge stores with it.
//
// The slice (kSliceFloats, 2 KiB): the rows' interiors end to end (240 bytes each, so each
// starts on 16 bytes), in reverse row order, then each row's four edge floats. Row r + 1's
// interior lies 4 banks after row r's: with wgmma's accumulator order (lanes 4 apart hold
// rows 1 apart, lanes 1 apart columns 2 apart) each staging store of a warp takes two
// wavefronts for every pitch (rows in order: up to 2.25).
#pragma once

namespace gemmlab::cuda::bulk_rows {

inline constexpr int kCols = 64;                     // a row segment: 256 bytes of C
inline constexpr int kRows = 8;                      // staged together
inline constexpr int kAlign = 4;                     // floats per 16 bytes, cp.async.bulk's unit
inline constexpr int kInterior = kCols - kAlign;     // columns per bulk copy
inline constexpr int kInteriorBytes = kInterior * 4;
inline constexpr int kEdgeBase = kRows * kInterior;  // the edge floats follow the interiors
inline constexpr int kSliceFloats = kRows * kCols;
static_assert(kEdgeBase + kRows * kAlign == kSliceFloats, "interiors and edges fill the slice");
static_assert(kInteriorBytes % 16 == 0, "each interior starts on 16 bytes");
static_assert(kRows * kAlign == 32, "one warp-wide store takes the edges of a slice");

// The interior's first column: the first that lies on a 16-byte boundary, or 4 where s = 0.
constexpr int head(int s) { return kAlign - s; }
constexpr bool interior(int s, int c) { return c >= head(s) && c < head(s) + kInterior; }
// Where row r's interior starts in the slice (floats).
constexpr int interior_start(int r) { return (kRows - 1 - r) * kInterior; }
// Where column c of row r goes in the slice (floats), the row's first column lying s floats
// past 16 bytes: the interior in order; the head at edge floats s..3, the tail at 0..s-1, so
// that each float sits at its column's place modulo 16 bytes.
constexpr int edge_slot(int r, int s, int c) { return kEdgeBase + kAlign * r + (c + s) % kAlign; }
constexpr int slot(int r, int s, int c) { return interior(s, c) ? interior_start(r) + c - head(s) : edge_slot(r, s, c); }
// The column that edge float e (0..3) of a row holds: edge_slot's inverse.
constexpr int edge_column(int s, int e) { return (e - s + kCols) % kCols; }

// In global memory, for a segment whose first column is at byte address `start` (a multiple
// of 4): where the interior starts, the first 16-byte boundary after `start` (which is
// start + 4 head(s)); and where edge float e goes, in bytes from the 16-byte boundary at or
// before `start` (the head within those 16 bytes, the tail a segment on).
constexpr unsigned long long aligned_below(unsigned long long address) { return address / 16 * 16; }
constexpr unsigned long long interior_address(unsigned long long start) { return aligned_below(start + 16); }
constexpr int edge_offset(int s, int e) { return 4 * e + (e < s ? 4 * kCols : 0); }

// A segment from column `col` goes through the slice where it lies inside C's n columns;
// one that straddles C's last column goes out from registers, element by element.
constexpr bool staged(int col, int n) { return col + kCols <= n; }

// The columns that are interior for every s: the staging stores them at fixed offsets from
// a per-row base, and decides between interior and edge only outside them.
inline constexpr int kAlwaysInteriorBegin = kAlign, kAlwaysInteriorEnd = kInterior + 1;
constexpr bool always_interior() {
  for (int s = 0; s < kAlign; ++s)
    for (int c = kAlwaysInteriorBegin; c < kAlwaysInteriorEnd; ++c)
      if (!interior(s, c)) return false;
  return true;
}
static_assert(always_interior(), "columns 4..kInterior lie inside every row's interior");

}  // namespace gemmlab::cuda::bulk_rows
