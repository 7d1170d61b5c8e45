// The host link's bandwidth as the out-of-core schedule sees it: pinned memory, one direction
// alone and both directions at once (its copies go up while finished tiles come down); and
// strided copies beside a running kernel, which lose more than one long run does (measured on
// an H200: rows of 8-32 KiB out of longer host rows moved 55 GB/s alone, 46.6-49.3 beside a
// bf16 GEMM, while a contiguous copy kept 55.2).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "cuda/backend.hpp"
#include "cuda/runtime/buffer.hpp"
#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

Status elapsed_ms(cudaEvent_t from, cudaEvent_t to, double& out) {
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, from, to));
  out = ms;
  return Status::ok();
}

// A buffer each way on both sides of the link and a stream per direction.
struct LinkBuffers {
  PinnedMemory up_host, down_host;
  DeviceMemory up_device, down_device;
  StreamOwner up, down;
  Status make(std::size_t bytes) {
    GEMMLAB_TRY(PinnedMemory::allocate(bytes, up_host));
    GEMMLAB_TRY(PinnedMemory::allocate(bytes, down_host));
    GEMMLAB_TRY(DeviceMemory::allocate(bytes, up_device));
    GEMMLAB_TRY(DeviceMemory::allocate(bytes, down_device));
    GEMMLAB_TRY(make_stream(up));
    return make_stream(down);
  }
};

}  // namespace

Status measure_host_link(std::size_t bytes, int reps, HostLinkRates& out) {
  LinkBuffers link;
  GEMMLAB_TRY(link.make(bytes));
  EventOwner start, up_end, down_end;
  GEMMLAB_TRY(make_event(start));
  GEMMLAB_TRY(make_event(up_end));
  GEMMLAB_TRY(make_event(down_end));
  const auto copy_up = [&] {
    return cudaMemcpyAsync(link.up_device.data(), link.up_host.data(), bytes, cudaMemcpyHostToDevice, link.up.get());
  };
  const auto copy_down = [&] {
    return cudaMemcpyAsync(link.down_host.data(), link.down_device.data(), bytes, cudaMemcpyDeviceToHost, link.down.get());
  };
  CUDA_CHECK(cudaMemset(link.up_device.data(), 0, bytes));
  CUDA_CHECK(cudaMemset(link.down_device.data(), 0, bytes));
  std::vector<double> alone_up, alone_down, both_up, both_down;
  for (int r = 0; r < reps + 1; ++r) {  // the first round warms the path up, untimed
    double ms = 0;
    CUDA_CHECK(cudaEventRecord(start.get(), link.up.get()));
    CUDA_CHECK(copy_up());
    CUDA_CHECK(cudaEventRecord(up_end.get(), link.up.get()));
    CUDA_CHECK(cudaEventSynchronize(up_end.get()));
    GEMMLAB_TRY(elapsed_ms(start.get(), up_end.get(), ms));
    if (r > 0) alone_up.push_back(ms);
    CUDA_CHECK(cudaEventRecord(start.get(), link.down.get()));
    CUDA_CHECK(copy_down());
    CUDA_CHECK(cudaEventRecord(down_end.get(), link.down.get()));
    CUDA_CHECK(cudaEventSynchronize(down_end.get()));
    GEMMLAB_TRY(elapsed_ms(start.get(), down_end.get(), ms));
    if (r > 0) alone_down.push_back(ms);
    // Both at once, from one start event.
    CUDA_CHECK(cudaEventRecord(start.get(), link.up.get()));
    CUDA_CHECK(cudaStreamWaitEvent(link.down.get(), start.get()));
    CUDA_CHECK(copy_up());
    CUDA_CHECK(copy_down());
    CUDA_CHECK(cudaEventRecord(up_end.get(), link.up.get()));
    CUDA_CHECK(cudaEventRecord(down_end.get(), link.down.get()));
    CUDA_CHECK(cudaEventSynchronize(up_end.get()));
    CUDA_CHECK(cudaEventSynchronize(down_end.get()));
    double up_ms = 0, down_ms = 0;
    GEMMLAB_TRY(elapsed_ms(start.get(), up_end.get(), up_ms));
    GEMMLAB_TRY(elapsed_ms(start.get(), down_end.get(), down_ms));
    if (r > 0) {
      both_up.push_back(up_ms);
      both_down.push_back(down_ms);
    }
  }
  // Strided: rows of 16 KiB taken from every other 16 KiB of the buffer (half its bytes), as
  // a block of a wider matrix is copied.
  constexpr std::size_t kRow = 16 << 10;
  const std::size_t rows = bytes / (2 * kRow);
  std::vector<double> strided;
  for (int r = 0; r < reps + 1; ++r) {
    CUDA_CHECK(cudaEventRecord(start.get(), link.up.get()));
    CUDA_CHECK(cudaMemcpy2DAsync(link.up_device.data(), kRow, link.up_host.data(), 2 * kRow, kRow, rows, cudaMemcpyHostToDevice,
                                 link.up.get()));
    CUDA_CHECK(cudaEventRecord(up_end.get(), link.up.get()));
    CUDA_CHECK(cudaEventSynchronize(up_end.get()));
    double ms = 0;
    GEMMLAB_TRY(elapsed_ms(start.get(), up_end.get(), ms));
    if (r > 0) strided.push_back(ms);
  }
  const double strided_ms = median(strided);
  out.h2d_strided = strided_ms > 0 ? static_cast<double>(rows * kRow) / (strided_ms * 1e-3) : 0.0;
  const auto rate = [bytes](double ms) { return ms > 0 ? static_cast<double>(bytes) / (ms * 1e-3) : 0.0; };
  out.bytes = bytes;
  out.h2d = rate(median(alone_up));
  out.d2h = rate(median(alone_down));
  out.h2d_both = rate(median(both_up));
  out.d2h_both = rate(median(both_down));
  return Status::ok();
}

Status under_link_traffic(double seconds, const std::function<Status()>& work) {
  // Copies of this size keep both copy engines busy; as many as cover `seconds` at 64 GB/s,
  // so that the link is still busy when the work ends.
  constexpr std::size_t kChunk = std::size_t{64} << 20;
  const int chunks = std::max(1, static_cast<int>(std::ceil(seconds * 64e9 / static_cast<double>(kChunk))));
  LinkBuffers link;
  GEMMLAB_TRY(link.make(kChunk));
  for (int c = 0; c < chunks; ++c) {
    CUDA_CHECK(cudaMemcpyAsync(link.up_device.data(), link.up_host.data(), kChunk, cudaMemcpyHostToDevice, link.up.get()));
    CUDA_CHECK(cudaMemcpyAsync(link.down_host.data(), link.down_device.data(), kChunk, cudaMemcpyDeviceToHost, link.down.get()));
  }
  const Status worked = work();
  // The copies end before their buffers are freed, whatever the work did.
  const cudaError_t up_done = cudaStreamSynchronize(link.up.get());
  const cudaError_t down_done = cudaStreamSynchronize(link.down.get());
  GEMMLAB_TRY(worked);
  CUDA_CHECK(up_done);
  CUDA_CHECK(down_done);
  return Status::ok();
}

Status measure_strided_beside(const std::function<Status()>& product, StridedBesideRates& out) {
  // Each copy moves at most this many bytes and rows, in rows of `row` out of host rows at
  // least four times as long and at least kPitch (a block of a matrix wider than a page: a
  // short row still costs the link a page of its own); the median of this many.
  static constexpr std::size_t kBytes = std::size_t{128} << 20;
  static constexpr std::size_t kRows = 8192;
  static constexpr std::size_t kPitch = std::size_t{32} << 10;
  constexpr int kReps = 3;
  const auto rows_of = [](std::size_t row) { return std::min(kRows, kBytes / row); };
  const auto pitch_of = [](std::size_t row) { return std::max(4 * row, kPitch); };
  std::size_t span = 0;
  for (const double row : OutOfCoreRates::kStridedRowBytes) {
    const auto r = static_cast<std::size_t>(row);
    span = std::max(span, rows_of(r) * pitch_of(r));
  }
  PinnedMemory host;
  DeviceMemory device;
  StreamOwner stream;
  EventOwner start, end;
  GEMMLAB_TRY(PinnedMemory::allocate(span, host));
  GEMMLAB_TRY(DeviceMemory::allocate(kBytes, device));
  GEMMLAB_TRY(make_stream(stream));
  GEMMLAB_TRY(make_event(start));
  GEMMLAB_TRY(make_event(end));
  const auto timed = [&](std::size_t row, cudaMemcpyKind kind, double& rate) -> Status {
    const std::size_t rows = rows_of(row), pitch = pitch_of(row);
    std::vector<double> samples;
    for (int r = 0; r < kReps; ++r) {
      CUDA_CHECK(cudaEventRecord(start.get(), stream.get()));
      if (kind == cudaMemcpyHostToDevice)
        CUDA_CHECK(cudaMemcpy2DAsync(device.data(), row, host.data(), pitch, row, rows, kind, stream.get()));
      else
        CUDA_CHECK(cudaMemcpy2DAsync(host.data(), pitch, device.data(), row, row, rows, kind, stream.get()));
      CUDA_CHECK(cudaEventRecord(end.get(), stream.get()));
      Status worked = Status::ok();
      while (worked && cudaEventQuery(end.get()) == cudaErrorNotReady) worked = product();
      const cudaError_t done = cudaStreamSynchronize(stream.get());  // before the buffers go
      GEMMLAB_TRY(worked);
      CUDA_CHECK(done);
      double ms = 0;
      GEMMLAB_TRY(elapsed_ms(start.get(), end.get(), ms));
      samples.push_back(ms);
    }
    rate = static_cast<double>(rows * row) / (median(samples) * 1e-3);
    return Status::ok();
  };
  for (std::size_t i = 0; i < OutOfCoreRates::kStridedRowBytes.size(); ++i) {
    const auto row = static_cast<std::size_t>(OutOfCoreRates::kStridedRowBytes[i]);
    GEMMLAB_TRY(timed(row, cudaMemcpyHostToDevice, out.h2d[i]));
    GEMMLAB_TRY(timed(row, cudaMemcpyDeviceToHost, out.d2h[i]));
  }
  return Status::ok();
}

}  // namespace gemmlab::cuda
