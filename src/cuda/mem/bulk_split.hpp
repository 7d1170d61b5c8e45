// How the bulk read of the memory lab (streaming.cu) deals a buffer to its blocks: plain
// C++, so that the unit tests check it where there is no GPU.
#pragma once

namespace gemmlab::cuda::mem {

// The bulk read: 7 stages of 32 KiB per SM, 512 threads summing them. Of the shapes swept
// on one H100, 32 KiB x 7 read
// 94.4-94.8 % of theoretical against 93.8-94.2 % for 48 KiB x 4; 24, 40 and 56 KiB tiles
// or fewer bytes in flight (32 KiB x 4-5) read 92.8-93.5 %.
inline constexpr int kBulkStages = 7;
inline constexpr int kBulkTileBytes = 32 * 1024;
inline constexpr int kBulkThreads = 512;
// Bulk copies start and end on 128-byte lines: 4 GB in equal tiles of 49,104 bytes (16-byte
// multiples) read at 87.4 % of theoretical, in 49,024-byte ones at 93.0-93.5 % (on an H100,
// with 48 KiB tiles).
inline constexpr int kBulkAlign = 128;

// How read_bulk deals `bytes` to `blocks`: `rounds` whole tiles each (tile t of block b at
// (b + t blocks) kBulkTileBytes), then one slice each of what is left, `slice_bytes` (whole
// lines, under a tile); what the slices leave, under a line per block, is read with ordinary
// loads. Every block reads the same bytes, and the ordinary loads are down to one round
// (the 7.6 MB that 4 GB in equal 49,024-byte tiles left cost about 10 us in them).
struct BulkPlan {
  long long rounds = 0;      // whole kBulkTileBytes tiles per block
  int slice_bytes = 0;       // then one slice per block
  long long bulk_bytes = 0;  // read by bulk copies: rounds and slices of all blocks
};
constexpr BulkPlan bulk_plan(long long bytes, int blocks) {
  if (bytes <= 0 || blocks < 1) return {};
  const long long rounds = bytes / (static_cast<long long>(blocks) * kBulkTileBytes);
  const long long rest = bytes - rounds * blocks * kBulkTileBytes;
  const long long slice = rest / blocks / kBulkAlign * kBulkAlign;
  return {rounds, static_cast<int>(slice), (rounds * kBulkTileBytes + slice) * blocks};
}

}  // namespace gemmlab::cuda::mem
