// Transpose vs copy (seed 001's coalescing, applied to a 2D access pattern): out = in^T.
// naive: reads along rows (coalesced), writes down columns (each lane of a warp to a
// different row: 32 sectors per warp store). tiled: a block reads a 32 x 32 tile into
// shared memory along rows and writes it out along rows of the result, so both global
// accesses are coalesced; but reading a column of an unpadded [32][32] tile hits one
// shared-memory bank 32 times. tiled_padded: rows of 33 words put consecutive rows one
// bank apart, so the column read is conflict-free. copy: the same tiles without the
// transposition, the ceiling for this access shape. The second size is not a multiple of
// 32, so every kernel's edge handling is checked too.
#include "cuda/mem/check.cuh"
#include "cuda/mem/experiment.hpp"

namespace gemmlab::cuda::mem {
namespace {

constexpr int kTile = 32;
constexpr int kRowsPerPass = 8;  // a 32 x 8 block covers a tile in 4 passes
constexpr std::uint32_t kSeed = 0x7245u;

// in: rows x cols, row-major (ld = cols); out: cols x rows (ld = rows), or rows x cols for copy.
__global__ void __launch_bounds__(kTile * kRowsPerPass)
    copy_tiles(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  const int x = blockIdx.x * kTile + threadIdx.x;
  for (int r = 0; r < kTile; r += kRowsPerPass) {
    const int y = blockIdx.y * kTile + threadIdx.y + r;
    if (x < cols && y < rows) out[static_cast<long long>(y) * cols + x] = in[static_cast<long long>(y) * cols + x];
  }
}

__global__ void __launch_bounds__(kTile * kRowsPerPass)
    transpose_naive(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  const int x = blockIdx.x * kTile + threadIdx.x;
  for (int r = 0; r < kTile; r += kRowsPerPass) {
    const int y = blockIdx.y * kTile + threadIdx.y + r;
    if (x < cols && y < rows) out[static_cast<long long>(x) * rows + y] = in[static_cast<long long>(y) * cols + x];
  }
}

template <int Pad>
__global__ void __launch_bounds__(kTile * kRowsPerPass)
    transpose_tiled(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  __shared__ float tile[kTile][kTile + Pad];  // (32 rows of in, 32 columns of in)
  const int x = blockIdx.x * kTile + threadIdx.x;
  for (int r = 0; r < kTile; r += kRowsPerPass) {
    const int y = blockIdx.y * kTile + threadIdx.y + r;
    if (x < cols && y < rows) tile[threadIdx.y + r][threadIdx.x] = in[static_cast<long long>(y) * cols + x];
  }
  __syncthreads();
  // Row oy of out is column oy of in; a warp writes 32 consecutive elements of it and
  // reads them down a column of the tile.
  const int ox = blockIdx.y * kTile + threadIdx.x;
  for (int r = 0; r < kTile; r += kRowsPerPass) {
    const int oy = blockIdx.x * kTile + threadIdx.y + r;
    if (ox < rows && oy < cols) out[static_cast<long long>(oy) * rows + ox] = tile[threadIdx.x][threadIdx.y + r];
  }
}

struct Transposed {  // out (cols x rows): element (r', c') = in (c', r')
  std::uint32_t seed;
  int rows, cols;
  __device__ bool operator()(long long i, std::uint32_t w) const {
    const long long r = i / rows, c = i % rows;
    return w == pattern_word(static_cast<std::uint64_t>(c * cols + r), seed);
  }
};

Status run(MemContext& ctx, std::vector<MemRow>& rows_out) {
  DeviceMemory in, out;
  GEMMLAB_TRY(DeviceMemory::allocate(ctx.buffer_bytes, in));
  GEMMLAB_TRY(DeviceMemory::allocate(ctx.buffer_bytes, out));
  int n = 1;
  while (static_cast<std::size_t>(n + 1) * (n + 1) * sizeof(float) <= ctx.buffer_bytes) ++n;
  n = n / kTile * kTile;
  const int sizes[] = {n, n - 1};
  for (int size : sizes) {
    const int rows = size, cols = size;
    const long long words = static_cast<long long>(rows) * cols;
    GEMMLAB_TRY(fill(in.data(), words, PatternWords{kSeed}, ctx.stream));
    const dim3 block(kTile, kRowsPerPass);
    const dim3 grid((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile);
    struct Case {
      const char* name;
      void (*kernel)(const float*, float*, int, int);
      bool transposes;
      const char* note;
    };
    const Case cases[] = {
        {"copy", copy_tiles, false, "the same tiles, not transposed: the ceiling for this shape"},
        {"naive", transpose_naive, true, "coalesced reads, stores 32 rows apart"},
        {"tiled", transpose_tiled<0>, true, "through a [32][32] shared tile: column reads conflict 32-way"},
        {"tiled_padded", transpose_tiled<1>, true, "through a [32][33] shared tile: conflict-free"},
    };
    for (const Case& c : cases) {
      MemRow row = make_row(c.name, "n", size, 2.0 * static_cast<double>(words) * sizeof(float),
                            std::string(c.note) + "; bytes read + written");
      const auto op = [&]() -> Status {
        c.kernel<<<grid, block, 0, ctx.stream>>>(in.as<float>(), out.as<float>(), rows, cols);
        CUDA_CHECK_LAUNCH("transpose experiment kernel");
        return Status::ok();
      };
      CUDA_CHECK(cudaMemsetAsync(out.data(), 0xFF, out.bytes(), ctx.stream));
      GEMMLAB_TRY(op());
      long long bad = 0;
      if (c.transposes)
        GEMMLAB_TRY(ctx.checker.count(out.data(), words, Transposed{kSeed, rows, cols}, ctx.stream, bad));
      else
        GEMMLAB_TRY(ctx.checker.count(out.data(), words, SameAsPattern{kSeed}, ctx.stream, bad));
      record_check(row, bad);
      GEMMLAB_TRY(time_row(ctx, row, op));
      rows_out.push_back(row);
    }
  }
  return Status::ok();
}

}  // namespace

Experiment transpose_experiment() {
  return {"transpose", "matrix transpose: naive, shared-memory tiled, tiled with a padded column, vs copy",
          "staging through shared memory makes both sides coalesced; one column of padding removes "
          "the 32-way bank conflict of reading the tile by columns",
          run};
}

}  // namespace gemmlab::cuda::mem
