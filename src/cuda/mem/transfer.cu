// Host <-> device transfers (seed 001, "Host-Device Data Transfers"): PCIe or NVLink-C2C
// bandwidth is a small fraction of device memory bandwidth, so how data crosses matters.
// pageable vs pinned: from pageable memory the driver first copies into a pinned staging
// buffer; pinned memory is DMA'd directly. one large vs many small: every cudaMemcpy has a
// fixed cost, so many small transfers ("group transfers", seed 001) waste the link.
// both at once: PCIe is full duplex and each direction has its own copy engine, so an
// upload and a download started together should each keep most of their one-way rate
// (the out-of-core GEMM streams operands up while C comes down).
// overlap: with the data split into chunks on several streams, the copy engines move one
// chunk while the SMs compute on another, hiding the shorter of transfer and compute.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/mem/check.cuh"
#include "cuda/mem/experiment.hpp"

namespace gemmlab::cuda::mem {
namespace {

constexpr std::uint32_t kSeed = 0x7A45u;
constexpr std::uint32_t kDownSeed = 0x7A46u;  // both_*: unlike the upload's pattern, so a crossed copy shows
constexpr std::size_t kKiB = 1024, kMiB = 1024 * 1024;
constexpr std::size_t kSizes[] = {4 * kKiB, 64 * kKiB, kMiB, 16 * kMiB, 256 * kMiB};
constexpr std::size_t kBothSizes[] = {16 * kMiB, 256 * kMiB};
constexpr std::size_t kChunkedTotal = 64 * kMiB;
constexpr std::size_t kChunks[] = {64 * kMiB, 4 * kMiB, 256 * kKiB, 16 * kKiB};
constexpr std::size_t kOverlapBytes = 128 * kMiB;
constexpr int kOverlapChunks = 16;
constexpr int kStreamCounts[] = {1, 2, 4, 8};
constexpr int kMaxStreams = 8;
constexpr int kThreads = 256;

// x <- x * a + b, `reps` times, per element: compute to overlap with the transfers.
__global__ void __launch_bounds__(kThreads) bump(float* __restrict__ x, long long n, int reps, float a, float b) {
  const long long i = blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int r = 0; r < reps; ++r) v = fmaf(v, a, b);
  x[i] = v;
}

void host_pattern(std::uint32_t* data, std::size_t words, std::uint32_t seed = kSeed) {
  for (std::size_t i = 0; i < words; ++i) data[i] = pattern_word(i, seed);
}

long long host_mismatches(const std::uint32_t* data, std::size_t words, std::uint32_t seed = kSeed) {
  long long bad = 0;
  for (std::size_t i = 0; i < words; ++i)
    if (data[i] != pattern_word(i, seed)) ++bad;
  return bad;
}

// Pageable and pinned, both directions, across sizes.
Status sizes(MemContext& ctx, std::vector<MemRow>& rows, std::uint32_t* pageable, const PinnedMemory& pinned,
             const DeviceMemory& dev) {
  struct Host {
    const char* name;
    void* data;
  };
  const Host hosts[] = {{"pageable", pageable}, {"pinned", pinned.data()}};
  for (const Host& h : hosts)
    for (std::size_t bytes : kSizes) {
      MemRow row = make_row(std::string("h2d_") + h.name, "bytes", bytes, static_cast<double>(bytes),
                            "host to device, cudaMemcpyAsync");
      const auto op = [&]() -> Status {
        CUDA_CHECK(cudaMemcpyAsync(dev.data(), h.data, bytes, cudaMemcpyHostToDevice, ctx.stream));
        return Status::ok();
      };
      CUDA_CHECK(cudaMemsetAsync(dev.data(), 0xFF, bytes, ctx.stream));
      GEMMLAB_TRY(op());
      long long bad = 0;
      GEMMLAB_TRY(ctx.checker.count(dev.data(), static_cast<long long>(bytes / 4), SameAsPattern{kSeed}, ctx.stream, bad));
      record_check(row, bad);
      GEMMLAB_TRY(time_row(ctx, row, op));
      rows.push_back(row);
    }
  GEMMLAB_TRY(fill(dev.data(), static_cast<long long>(dev.bytes() / 4), PatternWords{kSeed}, ctx.stream));
  for (const Host& h : hosts)
    for (std::size_t bytes : kSizes) {
      MemRow row = make_row(std::string("d2h_") + h.name, "bytes", bytes, static_cast<double>(bytes),
                            "device to host, cudaMemcpyAsync");
      const auto op = [&]() -> Status {
        CUDA_CHECK(cudaMemcpyAsync(h.data, dev.data(), bytes, cudaMemcpyDeviceToHost, ctx.stream));
        return Status::ok();
      };
      CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
      std::memset(h.data, 0xFF, bytes);
      GEMMLAB_TRY(op());
      CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
      record_check(row, host_mismatches(static_cast<const std::uint32_t*>(h.data), bytes / 4));
      GEMMLAB_TRY(time_row(ctx, row, op));
      rows.push_back(row);
    }
  return Status::ok();
}

// Median, fastest and slowest of per-repetition times (at least one), as EventTimer reports them.
Timing timing_of(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  const std::size_t n = ms.size();
  return {static_cast<int>(n), 0.5 * (ms[(n - 1) / 2] + ms[n / 2]), ms.front(), ms.back()};
}

// An upload from `pinned` and a download from `dev` of the same size, started together on
// two streams (one copy engine each). The both_pinned row times the pair to the later
// end, bytes up + down; each direction's row times its own copy from the common start to
// its end, in the same repetitions: that direction's rate while the other runs.
Status both_ways(MemContext& ctx, std::vector<MemRow>& rows, const PinnedMemory& pinned, const DeviceMemory& dev) {
  const std::size_t max_bytes = kBothSizes[std::size(kBothSizes) - 1];
  DeviceMemory up;    // the upload's destination
  PinnedMemory down;  // the download's destination
  GEMMLAB_TRY(DeviceMemory::allocate(max_bytes, up));
  GEMMLAB_TRY(PinnedMemory::allocate(max_bytes, down));
  host_pattern(pinned.as<std::uint32_t>(), max_bytes / 4);
  GEMMLAB_TRY(fill(dev.data(), static_cast<long long>(max_bytes / 4), PatternWords{kDownSeed}, ctx.stream));
  StreamOwner up_stream, down_stream;
  GEMMLAB_TRY(make_stream(up_stream));
  GEMMLAB_TRY(make_stream(down_stream));
  // Events for every call of the work: the timer runs the warm-ups and all repetitions
  // before the per-direction times can be read.
  struct Marks {
    EventOwner start, up_done, down_done;
  };
  std::vector<Marks> marks(static_cast<std::size_t>(std::max(0, ctx.timing.warmup) + std::max(1, ctx.timing.reps)));
  for (Marks& m : marks) {
    GEMMLAB_TRY(make_event(m.start));
    GEMMLAB_TRY(make_event(m.up_done));
    GEMMLAB_TRY(make_event(m.down_done));
  }
  for (std::size_t bytes : kBothSizes) {
    std::size_t calls = 0;
    // The second copy is enqueued a few us after the first starts: small beside 16 MiB.
    const auto op = [&]() -> Status {
      if (calls == marks.size())
        return {StatusCode::InternalError, "transfer: more repetitions than events for the both_* rows"};
      const Marks& m = marks[calls++];
      CUDA_CHECK(cudaEventRecord(m.start.get(), ctx.stream));
      CUDA_CHECK(cudaStreamWaitEvent(up_stream.get(), m.start.get(), 0));
      CUDA_CHECK(cudaStreamWaitEvent(down_stream.get(), m.start.get(), 0));
      CUDA_CHECK(cudaMemcpyAsync(up.data(), pinned.data(), bytes, cudaMemcpyHostToDevice, up_stream.get()));
      CUDA_CHECK(cudaMemcpyAsync(down.data(), dev.data(), bytes, cudaMemcpyDeviceToHost, down_stream.get()));
      CUDA_CHECK(cudaEventRecord(m.up_done.get(), up_stream.get()));
      CUDA_CHECK(cudaEventRecord(m.down_done.get(), down_stream.get()));
      CUDA_CHECK(cudaStreamWaitEvent(ctx.stream, m.up_done.get(), 0));
      CUDA_CHECK(cudaStreamWaitEvent(ctx.stream, m.down_done.get(), 0));
      return Status::ok();
    };
    const std::string during = " while the same size goes the other way (started together, two streams); "
                               "from the common start to this copy's end";
    MemRow h2d = make_row("both_h2d_pinned", "bytes", bytes, static_cast<double>(bytes), "host to device" + during);
    MemRow d2h = make_row("both_d2h_pinned", "bytes", bytes, static_cast<double>(bytes), "device to host" + during);
    MemRow both = make_row("both_pinned", "bytes", bytes, 2.0 * bytes,
                           "host to device and device to host at once, two streams; bytes up + down");
    CUDA_CHECK(cudaMemsetAsync(up.data(), 0xFF, bytes, ctx.stream));
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    std::memset(down.data(), 0xFF, bytes);
    GEMMLAB_TRY(op());
    long long bad_up = 0;  // counting synchronises ctx.stream, which waited for both copies
    GEMMLAB_TRY(
        ctx.checker.count(up.data(), static_cast<long long>(bytes / 4), SameAsPattern{kSeed}, ctx.stream, bad_up));
    const long long bad_down = host_mismatches(down.as<std::uint32_t>(), bytes / 4, kDownSeed);
    record_check(h2d, bad_up);
    record_check(d2h, bad_down);
    record_check(both, bad_up + bad_down);
    calls = 0;
    GEMMLAB_TRY(time_row(ctx, both, op));
    // The timed repetitions are the last calls (warm-ups first); all have completed.
    std::vector<double> up_ms, down_ms;
    for (std::size_t c = calls - static_cast<std::size_t>(both.time.reps); c < calls; ++c) {
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, marks[c].start.get(), marks[c].up_done.get()));
      up_ms.push_back(ms);
      CUDA_CHECK(cudaEventElapsedTime(&ms, marks[c].start.get(), marks[c].down_done.get()));
      down_ms.push_back(ms);
    }
    const auto finish = [&](MemRow& row, const std::vector<double>& ms) {  // the figures time_row fills
      row.time = timing_of(ms);
      row.gbs = row.time.median_ms > 0 ? row.bytes / (row.time.median_ms * 1e-3) * 1e-9 : 0;
      row.ratio_to_copy = ctx.copy_ceiling_gbs > 0 ? row.gbs / ctx.copy_ceiling_gbs : 0;
      row.pct_of_theoretical =
          ctx.facts.theoretical_bandwidth_gbs > 0 ? 100.0 * row.gbs / ctx.facts.theoretical_bandwidth_gbs : 0;
    };
    finish(h2d, up_ms);
    finish(d2h, down_ms);
    rows.push_back(h2d);
    rows.push_back(d2h);
    rows.push_back(both);
  }
  return Status::ok();
}

// kChunkedTotal bytes host to device from pinned memory, in chunks of each size.
Status chunked(MemContext& ctx, std::vector<MemRow>& rows, const PinnedMemory& pinned, const DeviceMemory& dev) {
  host_pattern(pinned.as<std::uint32_t>(), kChunkedTotal / 4);
  for (std::size_t chunk : kChunks) {
    const std::size_t count = kChunkedTotal / chunk;
    MemRow row = make_row("h2d_pinned_chunked", "chunk_bytes", chunk, static_cast<double>(kChunkedTotal),
                          std::to_string(count) + " cudaMemcpyAsync calls of " + std::to_string(chunk) +
                              " bytes, 64 MiB in all");
    const auto op = [&]() -> Status {
      for (std::size_t c = 0; c < count; ++c)
        CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dev.data()) + c * chunk,
                                   static_cast<const char*>(pinned.data()) + c * chunk, chunk, cudaMemcpyHostToDevice,
                                   ctx.stream));
      return Status::ok();
    };
    CUDA_CHECK(cudaMemsetAsync(dev.data(), 0xFF, kChunkedTotal, ctx.stream));
    GEMMLAB_TRY(op());
    long long bad = 0;
    GEMMLAB_TRY(ctx.checker.count(dev.data(), static_cast<long long>(kChunkedTotal / 4), SameAsPattern{kSeed},
                                  ctx.stream, bad));
    record_check(row, bad);
    GEMMLAB_TRY(time_row(ctx, row, op));
    rows.push_back(row);
  }
  return Status::ok();
}

// Upload, compute, download: whole on one stream, then in chunks over 1..8 streams.
Status overlap(MemContext& ctx, std::vector<MemRow>& rows) {
  const long long n = static_cast<long long>(kOverlapBytes / sizeof(float));
  PinnedMemory host_in, host_out;
  DeviceMemory dev;
  GEMMLAB_TRY(PinnedMemory::allocate(kOverlapBytes, host_in));
  GEMMLAB_TRY(PinnedMemory::allocate(kOverlapBytes, host_out));
  GEMMLAB_TRY(DeviceMemory::allocate(kOverlapBytes, dev));
  float* in = host_in.as<float>();
  for (long long i = 0; i < n; ++i) in[i] = pattern_float(static_cast<std::uint64_t>(i), kSeed);
  StreamOwner workers[kMaxStreams];
  EventOwner fork, joins[kMaxStreams];
  GEMMLAB_TRY(make_event(fork));
  for (int s = 0; s < kMaxStreams; ++s) {
    GEMMLAB_TRY(make_stream(workers[s]));
    GEMMLAB_TRY(make_event(joins[s]));
  }
  int reps = 64;
  const auto pipeline = [&](int streams, int chunks, bool upload, bool compute, bool download) -> Status {
    CUDA_CHECK(cudaEventRecord(fork.get(), ctx.stream));
    for (int s = 0; s < streams; ++s) CUDA_CHECK(cudaStreamWaitEvent(workers[s].get(), fork.get(), 0));
    const long long chunk = (n + chunks - 1) / chunks;
    for (int c = 0; c < chunks; ++c) {
      const cudaStream_t s = workers[c % streams].get();
      const long long first = c * chunk, len = std::min(chunk, n - first);
      if (len <= 0) break;
      const std::size_t bytes = static_cast<std::size_t>(len) * sizeof(float);
      if (upload) CUDA_CHECK(cudaMemcpyAsync(dev.as<float>() + first, in + first, bytes, cudaMemcpyHostToDevice, s));
      if (compute) {
        bump<<<static_cast<unsigned>((len + kThreads - 1) / kThreads), kThreads, 0, s>>>(dev.as<float>() + first, len,
                                                                                       reps, 1.0f, 1.0f);
        CUDA_CHECK_LAUNCH("bump");
      }
      if (download)
        CUDA_CHECK(cudaMemcpyAsync(host_out.as<float>() + first, dev.as<float>() + first, bytes, cudaMemcpyDeviceToHost, s));
    }
    for (int s = 0; s < streams; ++s) {
      CUDA_CHECK(cudaEventRecord(joins[s].get(), workers[s].get()));
      CUDA_CHECK(cudaStreamWaitEvent(ctx.stream, joins[s].get(), 0));
    }
    return Status::ok();
  };

  // Size the computation to take about as long as the upload.
  const TimingOptions quick{1, 3};
  Timing up, down, kernel;
  GEMMLAB_TRY(ctx.timer.measure(ctx.stream, quick, [&] { return pipeline(1, 1, true, false, false); }, up));
  GEMMLAB_TRY(ctx.timer.measure(ctx.stream, quick, [&] { return pipeline(1, 1, false, false, true); }, down));
  for (int step = 0; step < 8; ++step) {
    GEMMLAB_TRY(ctx.timer.measure(ctx.stream, quick, [&] { return pipeline(1, 1, false, true, false); }, kernel));
    if (kernel.median_ms >= 0.8 * up.median_ms || reps >= (1 << 20)) break;
    const double grow = std::clamp(up.median_ms / std::max(kernel.median_ms, 1e-3), 1.5, 16.0);
    reps = std::min(1 << 20, static_cast<int>(reps * grow));
  }
  char facts[200];
  std::snprintf(facts, sizeof facts, "alone: upload %.2f ms, compute %.2f ms (%d FMAs/element), download %.2f ms",
                up.median_ms, kernel.median_ms, reps, down.median_ms);

  for (int streams : kStreamCounts)
    for (int chunks : {1, kOverlapChunks}) {
      if (chunks == 1 && streams > 1) continue;
      const std::string variant = chunks == 1 ? "serial" : "overlap";
      MemRow row = make_row(variant, "streams", static_cast<std::size_t>(streams), 2.0 * kOverlapBytes,
                            std::to_string(chunks) + " chunk(s) on " + std::to_string(streams) +
                                " stream(s); bytes up + down; " + facts);
      const auto op = [&] { return pipeline(streams, chunks, true, true, true); };
      CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
      std::memset(host_out.data(), 0xFF, kOverlapBytes);
      GEMMLAB_TRY(op());
      CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
      long long bad = 0;
      const float* got = host_out.as<float>();
      for (long long i = 0; i < n; ++i)
        if (got[i] != in[i] + static_cast<float>(reps)) ++bad;
      record_check(row, bad);
      GEMMLAB_TRY(time_row(ctx, row, op));
      rows.push_back(row);
    }
  return Status::ok();
}

Status run(MemContext& ctx, std::vector<MemRow>& rows) {
  const std::size_t max_bytes =
      std::max({kSizes[std::size(kSizes) - 1], kBothSizes[std::size(kBothSizes) - 1], kChunkedTotal});
  std::vector<std::uint32_t> pageable(max_bytes / 4);
  PinnedMemory pinned;
  DeviceMemory dev;
  GEMMLAB_TRY(PinnedMemory::allocate(max_bytes, pinned));
  GEMMLAB_TRY(DeviceMemory::allocate(max_bytes, dev));
  host_pattern(pageable.data(), pageable.size());
  std::memcpy(pinned.data(), pageable.data(), max_bytes);
  GEMMLAB_TRY(sizes(ctx, rows, pageable.data(), pinned, dev));
  GEMMLAB_TRY(both_ways(ctx, rows, pinned, dev));
  GEMMLAB_TRY(chunked(ctx, rows, pinned, dev));
  return overlap(ctx, rows);
}

}  // namespace

Experiment transfer_experiment() {
  return {"transfer",
          "host <-> device: pageable vs pinned by size, both directions at once, one large vs many small, overlap "
          "with streams",
          "pinned memory skips a staging copy; the link is full duplex, so a copy each way at once keeps most of "
          "each one's rate; per-call overhead dominates small transfers; chunks on several streams overlap "
          "copies with compute (seed 001: group transfers, minimise them)",
          run};
}

}  // namespace gemmlab::cuda::mem
