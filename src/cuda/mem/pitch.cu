// 2D arrays whose width is not a multiple of 32 (seed 001, "Memory padding"): thread
// (x, y) of a 32 x 8 block copies element (y, x) of a width x height array. Unpadded, row
// y starts at y * width floats, so most rows start off a 128-byte boundary and every warp
// straddles one more sector (EX1's offset, row by row). cudaMallocPitch pads each row to
// the driver's pitch, so every row starts aligned and the same kernel, with ld = pitch,
// touches only the sectors it needs. Width 4096 (a multiple of 32) is the control.
#include <algorithm>
#include <string>

#include "cuda/mem/check.cuh"
#include "cuda/mem/experiment.hpp"

namespace gemmlab::cuda::mem {
namespace {

constexpr int kBlockX = 32, kBlockY = 8;
constexpr unsigned kMaxGridY = 65535;  // gridDim.y limit of every CUDA device
constexpr std::uint32_t kSeed = 0x917C4u;
constexpr int kWidths[] = {4096, 4095, 4097, 1023, 1025, 3000};

__global__ void __launch_bounds__(kBlockX * kBlockY)
    copy_2d(const float* __restrict__ in, long long ld_in, float* __restrict__ out, long long ld_out, int width,
            int height) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x < width && y < height) out[y * ld_out + x] = in[y * ld_in + x];
}

struct Words2d {  // element (y, x) of the logical array at y * ld + x; padding 0
  std::uint32_t seed;
  long long ld;
  int width;
  __device__ std::uint32_t operator()(long long i) const {
    const long long y = i / ld, x = i % ld;
    return x < width ? pattern_word(static_cast<std::uint64_t>(y * width + x), seed) : 0u;
  }
};
struct Copied2d {  // the same elements; padding left poisoned
  std::uint32_t seed;
  long long ld;
  int width;
  __device__ bool operator()(long long i, std::uint32_t w) const {
    const long long y = i / ld, x = i % ld;
    return w == (x < width ? pattern_word(static_cast<std::uint64_t>(y * width + x), seed) : kPoison);
  }
};

// One layout of one width: in and out with leading dimension ld (floats).
Status layout_row(MemContext& ctx, std::vector<MemRow>& rows, const char* variant, int width, int height,
                  float* in, float* out, long long ld) {
  const long long words = ld * height;
  GEMMLAB_TRY(fill(in, words, Words2d{kSeed, ld, width}, ctx.stream));
  MemRow row;
  row.variant = variant;
  row.param_name = "width";
  row.param = width;
  row.bytes = 2.0 * width * static_cast<double>(height) * sizeof(float);
  row.note = std::to_string(width) + " x " + std::to_string(height) + " floats, row pitch " +
             std::to_string(ld * sizeof(float)) + " bytes; useful bytes read + written";
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid((width + kBlockX - 1) / kBlockX, (height + kBlockY - 1) / kBlockY);
  const auto op = [&]() -> Status {
    copy_2d<<<grid, block, 0, ctx.stream>>>(in, ld, out, ld, width, height);
    CUDA_CHECK_LAUNCH("copy_2d");
    return Status::ok();
  };
  CUDA_CHECK(cudaMemsetAsync(out, 0xFF, static_cast<std::size_t>(words) * sizeof(float), ctx.stream));
  GEMMLAB_TRY(op());
  long long bad = 0;
  GEMMLAB_TRY(ctx.checker.count(out, words, Copied2d{kSeed, ld, width}, ctx.stream, bad));
  record_check(row, bad);
  GEMMLAB_TRY(time_row(ctx, row, op));
  rows.push_back(row);
  return Status::ok();
}

Status pitched_alloc(Owner<DeviceMemoryTraits>& owner, std::size_t& pitch, int width, int height) {
  void* p = nullptr;
  CUDA_CHECK(cudaMallocPitch(&p, &pitch, static_cast<std::size_t>(width) * sizeof(float),
                             static_cast<std::size_t>(height)));
  owner = Owner<DeviceMemoryTraits>(p);
  return Status::ok();
}

Status run(MemContext& ctx, std::vector<MemRow>& rows) {
  for (int width : kWidths) {
    // Rows fill the buffer, but no more than a grid's y extent covers (kMaxGridY blocks of
    // kBlockY rows): an 8 GiB buffer of 4096-float rows would need one block too many.
    const int height = static_cast<int>(std::min<std::size_t>(
        ctx.buffer_bytes / (static_cast<std::size_t>(width) * sizeof(float)), std::size_t{kMaxGridY} * kBlockY));
    {
      DeviceMemory in, out;
      const std::size_t bytes = static_cast<std::size_t>(width) * height * sizeof(float);
      GEMMLAB_TRY(DeviceMemory::allocate(bytes, in));
      GEMMLAB_TRY(DeviceMemory::allocate(bytes, out));
      GEMMLAB_TRY(layout_row(ctx, rows, "unpadded", width, height, in.as<float>(), out.as<float>(), width));
    }
    Owner<DeviceMemoryTraits> in, out;
    std::size_t pitch_in = 0, pitch_out = 0;
    GEMMLAB_TRY(pitched_alloc(in, pitch_in, width, height));
    GEMMLAB_TRY(pitched_alloc(out, pitch_out, width, height));
    if (pitch_in != pitch_out || pitch_in % sizeof(float) != 0)
      return {StatusCode::InternalError, "pitch: cudaMallocPitch gave different pitches for equal shapes"};
    GEMMLAB_TRY(layout_row(ctx, rows, "pitched", width, height, static_cast<float*>(in.get()),
                           static_cast<float*>(out.get()), static_cast<long long>(pitch_in / sizeof(float))));
  }
  return Status::ok();
}

}  // namespace

Experiment pitch_experiment() {
  return {"pitch", "2D copy, width not a multiple of 32: unpadded rows vs cudaMallocPitch",
          "rows that start off a 128-byte boundary cost an extra sector per warp; pitched rows do not "
          "(seed 001: pad the leading dimension to a multiple of 16 elements)",
          run};
}

}  // namespace gemmlab::cuda::mem
