// How many ranges split-K cuts a tile's K loop into (split_k.cuh runs them), and the
// workspace that takes: plain C++, so the unit tests check the arithmetic on the host
// (tests/unit/test_split_k.cpp).
#pragma once

#include <algorithm>
#include <cstdint>

namespace gemmlab::cuda {

// The fewest K tiles a range runs: below it the pipeline's fill and the last block's read of
// the partials cost more than the range saves.
inline constexpr int kMinSplitKTiles = 4;

// Ranges per tile for `tiles` tiles of `k_tiles` K steps on a GPU that holds
// `resident_blocks` of them at once: 1 where the tiles fill at least half of it, else as many
// as fill it once, each at least kMinSplitKTiles long.
constexpr int split_k_count(std::int64_t tiles, int k_tiles, int resident_blocks) {
  if (tiles <= 0 || 2 * tiles >= resident_blocks) return 1;
  const std::int64_t fill = resident_blocks / tiles;
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(fill, k_tiles / kMinSplitKTiles)));
}

// Bytes of the workspace for `tiles` tiles in `splits` ranges of `tile_floats` partial sums
// each, with a counter per tile (0 unsplit).
constexpr std::uint64_t split_k_bytes(std::int64_t tiles, int splits, int tile_floats) {
  if (splits <= 1) return 0;
  return static_cast<std::uint64_t>(tiles) *
         (static_cast<std::uint64_t>(splits) * static_cast<std::uint64_t>(tile_floats) * sizeof(float) + sizeof(int));
}

}  // namespace gemmlab::cuda
