// How the bulk read of the memory lab (streaming.cu) deals a buffer to its blocks: plain
// C++, so that the unit tests check it where there is no GPU.
#pragma once

namespace gemmlab::cuda::mem {

// The bulk read: 4 stages of up to 48 KiB per SM, 512 threads summing them.
inline constexpr int kBulkStages = 4;
inline constexpr int kBulkTileBytes = 48 * 1024;
inline constexpr int kBulkThreads = 512;

// How read_bulk deals `bytes` to `blocks`: `rounds` tiles each, all of `tile_bytes` (a
// multiple of 16, at most kBulkTileBytes); the rest, under 17 bytes per tile, is read with
// ordinary loads. Blocks that finish together leave no SM idle at the end.
struct BulkSplit {
  int rounds = 0;
  int tile_bytes = 0;
};
constexpr BulkSplit bulk_split(long long bytes, int blocks) {
  if (bytes < 16 || blocks < 1) return {};
  const long long per_block = bytes / blocks;
  const long long rounds = (per_block + kBulkTileBytes - 1) / kBulkTileBytes;
  const long long tile = rounds > 0 ? per_block / rounds / 16 * 16 : 0;
  if (tile == 0) return {};  // too little to tile: all of it through ordinary loads
  return {static_cast<int>(rounds), static_cast<int>(tile)};
}

}  // namespace gemmlab::cuda::mem
