// The NVLink level, as the host link's measurement (host_link.cpp) is the PCIe level: copies
// between two GPUs by the copy engines (cudaMemcpyPeerAsync), one way and both ways at once,
// each checked for intact data; and measure_peer_link, which adds NCCL's broadcast and
// all-gather bus bandwidth (src/cuda/nccl/collectives_bandwidth.cpp).
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "cuda/distributed.hpp"
#include "cuda/nccl/collectives_bandwidth.hpp"
#include "cuda/runtime/buffer.hpp"
#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda {
namespace nvlink {

// ---- what both parts use ---------------------------------------------------------------

RestoreDevice::RestoreDevice() {
  if (cudaGetDevice(&device_) != cudaSuccess) {
    (void)cudaGetLastError();
    device_ = -1;
  }
}

RestoreDevice::~RestoreDevice() {
  if (device_ >= 0 && cudaSetDevice(device_) != cudaSuccess) (void)cudaGetLastError();
}

// The high half of a Weyl sequence (step: 2^64 / golden ratio): neighbouring words differ, and
// seeds start 2^40 words apart, so no buffer here repeats another's words.
std::uint32_t pattern_word(std::uint64_t i, std::uint32_t seed) {
  const std::uint64_t z = (i + (static_cast<std::uint64_t>(seed) << 40) + 1) * 0x9E3779B97F4A7C15ull;
  return static_cast<std::uint32_t>(z >> 32);
}

Status poison(int device, void* data, std::size_t bytes) {
  CUDA_CHECK(cudaSetDevice(device));
  CUDA_CHECK(cudaMemset(data, 0xFF, bytes));
  CUDA_CHECK(cudaDeviceSynchronize());  // cudaMemset may return before it is done
  return Status::ok();
}

Status fill_pattern(int device, void* data, std::size_t words, std::uint32_t seed) {
  constexpr std::size_t kChunkWords = std::size_t{4} << 20;  // 16 MiB through the host at a time
  CUDA_CHECK(cudaSetDevice(device));
  std::vector<std::uint32_t> host(std::min(words, kChunkWords));
  for (std::size_t first = 0; first < words; first += kChunkWords) {
    const std::size_t n = std::min(kChunkWords, words - first);
    for (std::size_t i = 0; i < n; ++i) host[i] = pattern_word(first + i, seed);
    CUDA_CHECK(cudaMemcpy(static_cast<std::uint32_t*>(data) + first, host.data(), n * sizeof(std::uint32_t),
                          cudaMemcpyHostToDevice));
  }
  // From pageable memory, cudaMemcpy may return before the last DMA lands.
  CUDA_CHECK(cudaDeviceSynchronize());
  return Status::ok();
}

Status count_mismatches(int device, const void* data, std::size_t words, std::uint32_t seed, long long& checked,
                        long long& mismatches) {
  constexpr std::size_t kWholeWords = std::size_t{1} << 20;  // 4 MiB: checked whole
  constexpr std::size_t kWindowWords = std::size_t{16} << 10;  // 64 KiB
  constexpr std::size_t kWindows = 64;
  CUDA_CHECK(cudaSetDevice(device));
  const auto* words_at = static_cast<const std::uint32_t*>(data);
  const auto check = [&](std::size_t first, std::size_t n, std::vector<std::uint32_t>& host) -> Status {
    host.resize(n);
    CUDA_CHECK(cudaMemcpy(host.data(), words_at + first, n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < n; ++i)
      if (host[i] != pattern_word(first + i, seed)) ++mismatches;
    checked += static_cast<long long>(n);
    return Status::ok();
  };
  std::vector<std::uint32_t> host;
  if (words <= kWholeWords) return check(0, words, host);
  // Window w starts at w/63 of the way to the last window: the first and last words included.
  for (std::size_t w = 0; w < kWindows; ++w)
    GEMMLAB_TRY(check(w * (words - kWindowWords) / (kWindows - 1), kWindowWords, host));
  return Status::ok();
}

Timing summarize_ms(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  const std::size_t n = ms.size();
  if (n == 0) return {};
  return {static_cast<int>(n), 0.5 * (ms[(n - 1) / 2] + ms[n / 2]), ms.front(), ms.back()};
}

// ---- copy-engine copies ----------------------------------------------------------------

namespace {

constexpr std::uint32_t kFromSeed = 0x9E11u;  // the data `from` sends
constexpr std::uint32_t kToSeed = 0x9E12u;    // the data `to` sends back, unlike it: a crossed copy shows

// Enables `device`'s access to `peer`'s memory where the devices allow it; `enabled` says whether.
Status enable_peer_access(int device, int peer, bool& enabled) {
  int can = 0;
  CUDA_CHECK(cudaDeviceCanAccessPeer(&can, device, peer));
  enabled = can != 0;
  if (!enabled) return Status::ok();  // cudaMemcpyPeerAsync still works, through host memory
  CUDA_CHECK(cudaSetDevice(device));
  const cudaError_t err = cudaDeviceEnablePeerAccess(peer, 0);
  if (err == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();  // enabled before (by an earlier call or another part of the process): fine
    return Status::ok();
  }
  CUDA_CHECK(err);
  return Status::ok();
}

Status elapsed_ms(cudaEvent_t from, cudaEvent_t to, double& out) {
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, from, to));
  out = ms;
  return Status::ok();
}

// What one GPU of the pair holds: the data it sends, a buffer for what it receives, the stream
// that issues its copy and the events around it (events are per device, as their streams).
struct Side {
  int device = 0;
  DeviceMemory source, received;
  StreamOwner stream;
  EventOwner start, end;
  Status make(int ordinal, std::size_t bytes) {
    device = ordinal;
    CUDA_CHECK(cudaSetDevice(device));
    GEMMLAB_TRY(DeviceMemory::allocate(bytes, source));
    GEMMLAB_TRY(DeviceMemory::allocate(bytes, received));
    GEMMLAB_TRY(make_stream(stream));
    GEMMLAB_TRY(make_event(start));
    return make_event(end);
  }
};

}  // namespace

Status measure_peer_copies(int from, int to, std::size_t bytes, int reps, PeerCopyMeasurements& out) {
  if (bytes == 0 || bytes % 4 != 0)
    return {StatusCode::InvalidValue, fmt::format("peer copy: bytes ({}) must be a positive multiple of 4", bytes)};
  if (reps < 1) return {StatusCode::InvalidValue, fmt::format("peer copy: reps ({}) must be at least 1", reps)};
  if (from == to) return {StatusCode::InvalidValue, fmt::format("peer copy: GPU {} to itself is no peer copy", from)};
  const RestoreDevice restore;
  out = PeerCopyMeasurements{};
  out.from = from;
  out.to = to;
  out.bytes = bytes;
  bool there = false, back = false;
  GEMMLAB_TRY(enable_peer_access(from, to, there));
  GEMMLAB_TRY(enable_peer_access(to, from, back));
  out.peer_access = there && back;

  Side a, b;  // a on `from`, b on `to`
  GEMMLAB_TRY(a.make(from, bytes));
  GEMMLAB_TRY(b.make(to, bytes));
  const std::size_t words = bytes / 4;
  GEMMLAB_TRY(fill_pattern(from, a.source.data(), words, kFromSeed));
  GEMMLAB_TRY(fill_pattern(to, b.source.data(), words, kToSeed));
  // `from` is current while the copies are issued; a copy may go to a stream of another device
  // (b's), and every event is recorded on a stream of its own device and compared with events of
  // the same device, as CUDA requires.
  const auto copy_there = [&] {
    return cudaMemcpyPeerAsync(b.received.data(), to, a.source.data(), from, bytes, a.stream.get());
  };
  const auto copy_back = [&] {
    return cudaMemcpyPeerAsync(a.received.data(), from, b.source.data(), to, bytes, b.stream.get());
  };

  // One way: repetition 0 warms the path up, untimed; then the destination is poisoned, so what
  // the check finds there came from the timed copies.
  std::vector<double> one_way;
  for (int r = 0; r <= reps; ++r) {
    if (r == 1) GEMMLAB_TRY(poison(to, b.received.data(), bytes));
    CUDA_CHECK(cudaSetDevice(from));
    CUDA_CHECK(cudaEventRecord(a.start.get(), a.stream.get()));
    CUDA_CHECK(copy_there());
    CUDA_CHECK(cudaEventRecord(a.end.get(), a.stream.get()));
    CUDA_CHECK(cudaEventSynchronize(a.end.get()));
    double ms = 0;
    GEMMLAB_TRY(elapsed_ms(a.start.get(), a.end.get(), ms));
    if (r > 0) one_way.push_back(ms);
  }
  out.one_way.time = summarize_ms(one_way);
  out.one_way.bytes = static_cast<double>(bytes);
  GEMMLAB_TRY(count_mismatches(to, b.received.data(), words, kFromSeed, out.one_way.checked_words,
                               out.one_way.mismatches));

  // Both ways, from one start on `from`'s stream that `to`'s stream waits for, to the end of the
  // later copy (`from`'s stream waits for `to`'s end before its own end event).
  std::vector<double> pair;
  for (int r = 0; r <= reps; ++r) {
    if (r == 1) {
      GEMMLAB_TRY(poison(to, b.received.data(), bytes));
      GEMMLAB_TRY(poison(from, a.received.data(), bytes));
    }
    CUDA_CHECK(cudaSetDevice(from));
    CUDA_CHECK(cudaEventRecord(a.start.get(), a.stream.get()));
    CUDA_CHECK(cudaStreamWaitEvent(b.stream.get(), a.start.get(), 0));
    CUDA_CHECK(copy_there());
    CUDA_CHECK(copy_back());
    CUDA_CHECK(cudaEventRecord(b.end.get(), b.stream.get()));
    CUDA_CHECK(cudaStreamWaitEvent(a.stream.get(), b.end.get(), 0));
    CUDA_CHECK(cudaEventRecord(a.end.get(), a.stream.get()));
    CUDA_CHECK(cudaEventSynchronize(a.end.get()));
    double ms = 0;
    GEMMLAB_TRY(elapsed_ms(a.start.get(), a.end.get(), ms));
    if (r > 0) pair.push_back(ms);
  }
  out.both_ways.time = summarize_ms(pair);
  out.both_ways.bytes = static_cast<double>(bytes);
  GEMMLAB_TRY(count_mismatches(to, b.received.data(), words, kFromSeed, out.both_ways.checked_words,
                               out.both_ways.mismatches));
  GEMMLAB_TRY(count_mismatches(from, a.received.data(), words, kToSeed, out.both_ways.checked_words,
                               out.both_ways.mismatches));
  return Status::ok();
}

}  // namespace nvlink

namespace {

// Visible CUDA devices; 0 where there is no device or no driver.
int visible_devices() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

Status check_ordinal(int device, int count, const char* what) {
  if (device < 0 || device >= count)
    return {StatusCode::InvalidValue,
            fmt::format("{}: device {} does not exist ({} CUDA device{} visible)", what, device, count,
                        count == 1 ? "" : "s")};
  return Status::ok();
}

}  // namespace

Status can_access_peer(int from, int to, bool& out) {
  out = false;
  const int count = visible_devices();
  GEMMLAB_TRY(check_ordinal(from, count, "can_access_peer"));
  GEMMLAB_TRY(check_ordinal(to, count, "can_access_peer"));
  if (from == to) {  // a device reaches its own memory
    out = true;
    return Status::ok();
  }
  int can = 0;
  CUDA_CHECK(cudaDeviceCanAccessPeer(&can, from, to));
  out = can != 0;
  return Status::ok();
}

Status measure_peer_link(const std::vector<int>& devices, std::size_t bytes, int reps, PeerLinkRates& out) {
  const int count = visible_devices();
  if (count < 2)
    return {StatusCode::InvalidValue, fmt::format("the NVLink level needs two GPUs; {} visible", count)};
  if (devices.size() < 2)
    return {StatusCode::InvalidValue,
            fmt::format("the NVLink level needs two GPUs; {} given ({} visible)", devices.size(), count)};
  std::set<int> seen;
  for (int d : devices) {
    GEMMLAB_TRY(check_ordinal(d, count, "the NVLink level"));
    if (!seen.insert(d).second)
      return {StatusCode::InvalidValue, fmt::format("the NVLink level: device {} is listed twice", d)};
  }
  if (bytes == 0 || bytes % 4 != 0)
    return {StatusCode::InvalidValue, fmt::format("the NVLink level: bytes ({}) must be a positive multiple of 4", bytes)};
  if (bytes / devices.size() < 4)
    return {StatusCode::InvalidValue, fmt::format("the NVLink level: bytes ({}) must be at least 4 per GPU ({} GPUs)",
                                                  bytes, devices.size())};
  if (reps < 1) return {StatusCode::InvalidValue, fmt::format("the NVLink level: reps ({}) must be at least 1", reps)};

  // No rate is reported for a copy whose data did not arrive intact.
  const auto intact = [](const nvlink::LinkMeasurement& m, const std::string& what) -> Status {
    if (m.mismatches == 0) return Status::ok();
    return {StatusCode::ExecutionFailed,
            fmt::format("the NVLink level: {}: {} of {} checked words did not arrive intact", what, m.mismatches,
                        m.checked_words)};
  };
  nvlink::PeerCopyMeasurements copies;
  GEMMLAB_TRY(nvlink::measure_peer_copies(devices[0], devices[1], bytes, reps, copies));
  const std::string pair = fmt::format("GPU {} and GPU {}", devices[0], devices[1]);
  GEMMLAB_TRY(intact(copies.one_way, fmt::format("peer copy of {} bytes from GPU {} to GPU {}", bytes, devices[0],
                                                 devices[1])));
  GEMMLAB_TRY(intact(copies.both_ways, fmt::format("peer copies of {} bytes both ways between {}", bytes, pair)));

  std::vector<nvlink::CollectiveMeasurements> collectives;
  GEMMLAB_TRY(nvlink::measure_collectives(devices, {bytes}, reps, collectives));
  PeerLinkRates rates;
  rates.bytes = bytes;
  rates.gpus = static_cast<int>(devices.size());
  rates.copy = copies.one_way.rate();
  rates.copy_both = copies.both_ways.rate();
  if (!collectives.empty() && collectives[0].measured) {  // a build without NCCL leaves these at 0
    const nvlink::CollectiveMeasurements& c = collectives[0];
    GEMMLAB_TRY(intact(c.broadcast, fmt::format("NCCL broadcast of {} bytes over {} GPUs", bytes, c.gpus)));
    GEMMLAB_TRY(intact(c.all_gather, fmt::format("NCCL all-gather of {} bytes per GPU over {} GPUs", c.share, c.gpus)));
    rates.broadcast_bus = c.broadcast.bus_rate();
    rates.broadcast_algorithm = c.broadcast.rate();
    rates.all_gather_bus = c.all_gather.bus_rate();
  }
  out = rates;
  return Status::ok();
}

}  // namespace gemmlab::cuda
