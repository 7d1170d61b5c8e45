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

Status measure_strided_beside(const std::function<Status()>& product, std::size_t pitch_bytes,
                              OutOfCoreRates::StridedCurve& out) {
  // Each sample moves kBytes, as copies of at most kRows rows whose host rows span at most
  // kSpan (at least kMinRows rows) repeated back to back; the median of kReps. Past kMaxPitch
  // rows far apart behave alike (on an H100 rows of 2 KiB 64 and 96 KiB apart moved at 18.6
  // and 17.1 GB/s beside the products, 32 KiB apart at 23.3), so wider pitches are measured
  // at it.
  static constexpr std::size_t kBytes = std::size_t{64} << 20;
  static constexpr std::size_t kSpan = std::size_t{256} << 20;
  static constexpr std::size_t kRows = 8192, kMinRows = 64;
  static constexpr std::size_t kMaxPitch = std::size_t{1} << 20;
  constexpr int kReps = 3;
  if (pitch_bytes == 0) return {StatusCode::InvalidValue, "strided copies need a host pitch"};
  const std::size_t host_pitch = std::min(pitch_bytes, kMaxPitch);
  const auto pitch_of = [&](std::size_t row) { return std::max(row, host_pitch); };
  const auto rows_of = [&](std::size_t row) {
    return std::max(kMinRows, std::min({kRows, kBytes / row, kSpan / pitch_of(row)}));
  };
  std::size_t span = 0, longest = 0;
  for (const double row : OutOfCoreRates::kStridedRowBytes) {
    const auto r = static_cast<std::size_t>(row);
    span = std::max(span, rows_of(r) * pitch_of(r));
    longest = std::max(longest, rows_of(r) * r);
  }
  PinnedMemory host;
  DeviceMemory device;
  StreamOwner stream;
  GEMMLAB_TRY(PinnedMemory::allocate(span, host));
  GEMMLAB_TRY(DeviceMemory::allocate(longest, device));
  GEMMLAB_TRY(make_stream(stream));
  // Every sample is queued on the copy stream at once, an event between each two, and the
  // products run until the last is done: all of them run beside a product, however long one
  // product takes.
  const std::size_t points = OutOfCoreRates::kStridedRowBytes.size();
  std::vector<EventOwner> marks(2 * points * kReps + 1);
  for (EventOwner& mark : marks) GEMMLAB_TRY(make_event(mark));
  const auto row_of = [](std::size_t point) { return static_cast<std::size_t>(OutOfCoreRates::kStridedRowBytes[point]); };
  const auto repeats_of = [&](std::size_t row) { return std::max<std::size_t>(1, kBytes / (rows_of(row) * row)); };
  CUDA_CHECK(cudaEventRecord(marks[0].get(), stream.get()));
  std::size_t mark = 1;
  for (std::size_t point = 0; point < points; ++point)
    for (const cudaMemcpyKind kind : {cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost})
      for (int r = 0; r < kReps; ++r, ++mark) {
        const std::size_t row = row_of(point), rows = rows_of(row), pitch = pitch_of(row);
        for (std::size_t i = 0; i < repeats_of(row); ++i) {
          if (kind == cudaMemcpyHostToDevice)
            CUDA_CHECK(cudaMemcpy2DAsync(device.data(), row, host.data(), pitch, row, rows, kind, stream.get()));
          else
            CUDA_CHECK(cudaMemcpy2DAsync(host.data(), pitch, device.data(), row, row, rows, kind, stream.get()));
        }
        CUDA_CHECK(cudaEventRecord(marks[mark].get(), stream.get()));
      }
  Status worked = Status::ok();
  while (worked && cudaEventQuery(marks.back().get()) == cudaErrorNotReady) worked = product();
  const cudaError_t done = cudaStreamSynchronize(stream.get());  // before the buffers go
  GEMMLAB_TRY(worked);
  CUDA_CHECK(done);
  mark = 0;
  for (std::size_t point = 0; point < points; ++point)
    for (auto* rate : {&out.h2d[point], &out.d2h[point]}) {
      std::vector<double> samples(kReps);
      for (int r = 0; r < kReps; ++r, ++mark) GEMMLAB_TRY(elapsed_ms(marks[mark].get(), marks[mark + 1].get(), samples[r]));
      const std::size_t row = row_of(point);
      *rate = static_cast<double>(repeats_of(row) * rows_of(row) * row) / (median(samples) * 1e-3);
    }
  return Status::ok();
}

}  // namespace gemmlab::cuda
