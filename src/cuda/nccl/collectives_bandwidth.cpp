// NCCL's broadcast and all-gather over the GPUs of this process, one thread driving them all,
// timed and checked as the NVLink level reports them (collectives_bandwidth.hpp). Compiled only
// in a build with NCCL; src/cuda/no_nccl/collectives_bandwidth.cpp stands in otherwise.
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

#include "cuda/nccl/collectives_bandwidth.hpp"
#include "cuda/nccl/nccl_check.hpp"
#include "cuda/runtime/buffer.hpp"
#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda::nvlink {
namespace {

constexpr std::uint32_t kBroadcastSeed = 0xB0C5u;
constexpr std::uint32_t kGatherSeed = 0xA600u;  // + the rank whose share it is

// One communicator per GPU, made together by this thread. destroy() ends them the normal way;
// any still held when the owner goes (after an error) are aborted, which also stops NCCL kernels
// that may still be waiting for a peer.
class Communicators {
 public:
  Communicators() = default;
  Communicators(const Communicators&) = delete;
  Communicators& operator=(const Communicators&) = delete;
  ~Communicators() {
    for (ncclComm_t c : comms_)
      if (c != nullptr) (void)ncclCommAbort(c);
  }

  Status init(const std::vector<int>& devices) {
    disable_nvls();  // NCCL_NVLS_ENABLE=0 before NCCL reads it: no NVLink multicast
    comms_.assign(devices.size(), nullptr);
    // A failed init may leave some communicators made: the destructor aborts them.
    NCCL_CHECK(ncclCommInitAll(comms_.data(), static_cast<int>(devices.size()), devices.data()));
    return Status::ok();
  }

  ncclComm_t operator[](std::size_t rank) const { return comms_[rank]; }

  // Destroys every communicator; the first failure is returned.
  Status destroy() {
    Status first = Status::ok();
    for (ncclComm_t& c : comms_) {
      const ncclResult_t result = ncclCommDestroy(std::exchange(c, nullptr));
      if (result != ncclSuccess && first.is_ok()) first = nccl_status(result, "ncclCommDestroy", __FILE__, __LINE__);
    }
    return first;
  }

 private:
  std::vector<ncclComm_t> comms_;
};

// What one GPU holds: the buffer both collectives use (the broadcast's `bytes`, then the
// gathered share x P, in place), its stream and the event that ends its part of a repetition.
struct Rank {
  int device = 0;
  DeviceMemory buffer;
  StreamOwner stream;
  EventOwner done;
};

// One collective: `call(rank)` for every GPU between ncclGroupStart and ncclGroupEnd (one thread
// drives all GPUs), the group closed even when a call fails.
Status grouped(std::size_t ranks, const char* what, const std::function<ncclResult_t(std::size_t)>& call) {
  NCCL_CHECK(ncclGroupStart());
  ncclResult_t issued = ncclSuccess;
  for (std::size_t r = 0; r < ranks && issued == ncclSuccess; ++r) issued = call(r);
  const ncclResult_t ended = ncclGroupEnd();
  GEMMLAB_TRY(nccl_status(issued, what, __FILE__, __LINE__));
  GEMMLAB_TRY(nccl_status(ended, "ncclGroupEnd", __FILE__, __LINE__));
  return Status::ok();
}

// One repetition of `collective`, timed on the first GPU's stream: every GPU's stream waits for
// `start`, and the first GPU's stream waits for every GPU's end before `stop`.
Status time_collective(std::vector<Rank>& ranks, cudaEvent_t start, cudaEvent_t stop,
                       const std::function<Status()>& collective, double& ms) {
  CUDA_CHECK(cudaSetDevice(ranks[0].device));
  CUDA_CHECK(cudaEventRecord(start, ranks[0].stream.get()));
  for (std::size_t r = 1; r < ranks.size(); ++r) CUDA_CHECK(cudaStreamWaitEvent(ranks[r].stream.get(), start, 0));
  GEMMLAB_TRY(collective());
  for (std::size_t r = 1; r < ranks.size(); ++r) {
    CUDA_CHECK(cudaEventRecord(ranks[r].done.get(), ranks[r].stream.get()));
    CUDA_CHECK(cudaStreamWaitEvent(ranks[0].stream.get(), ranks[r].done.get(), 0));
  }
  CUDA_CHECK(cudaEventRecord(stop, ranks[0].stream.get()));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float elapsed = 0;
  CUDA_CHECK(cudaEventElapsedTime(&elapsed, start, stop));
  ms = elapsed;
  return Status::ok();
}

// `reps` timed repetitions after one untimed warm-up (which also makes NCCL's connections);
// `before_timed` runs between them (it poisons the destinations).
Status repeat(std::vector<Rank>& ranks, cudaEvent_t start, cudaEvent_t stop, int reps,
              const std::function<Status()>& collective, const std::function<Status()>& before_timed, Timing& out) {
  std::vector<double> ms;
  for (int rep = 0; rep <= reps; ++rep) {
    if (rep == 1) GEMMLAB_TRY(before_timed());
    double t = 0;
    GEMMLAB_TRY(time_collective(ranks, start, stop, collective, t));
    if (rep > 0) ms.push_back(t);
  }
  out = summarize_ms(std::move(ms));
  return Status::ok();
}

Status measure_size(std::vector<Rank>& ranks, const Communicators& comms, cudaEvent_t start, cudaEvent_t stop,
                    std::size_t bytes, int reps, CollectiveMeasurements& m) {
  const std::size_t gpus = ranks.size();
  m = CollectiveMeasurements{};
  m.measured = true;
  m.gpus = static_cast<int>(gpus);
  m.bytes = bytes;
  m.share = bytes / gpus / 4 * 4;
  const std::size_t share = m.share;

  // Broadcast from the first GPU, in place.
  GEMMLAB_TRY(fill_pattern(ranks[0].device, ranks[0].buffer.data(), bytes / 4, kBroadcastSeed));
  const auto broadcast = [&] {
    return grouped(gpus, "ncclBroadcast", [&](std::size_t r) {
      return ncclBroadcast(ranks[r].buffer.data(), ranks[r].buffer.data(), bytes, ncclUint8, 0, comms[r],
                           ranks[r].stream.get());
    });
  };
  const auto poison_receivers = [&]() -> Status {
    for (std::size_t r = 1; r < gpus; ++r) GEMMLAB_TRY(poison(ranks[r].device, ranks[r].buffer.data(), bytes));
    return Status::ok();
  };
  GEMMLAB_TRY(repeat(ranks, start, stop, reps, broadcast, poison_receivers, m.broadcast.time));
  m.broadcast.bytes = static_cast<double>(bytes);
  m.broadcast.bus_factor = 1.0;
  for (const Rank& rank : ranks)
    GEMMLAB_TRY(count_mismatches(rank.device, rank.buffer.data(), bytes / 4, kBroadcastSeed, m.broadcast.checked_words,
                                 m.broadcast.mismatches));

  // All-gather, in place: GPU r's share is slice r of its own buffer.
  const auto slice = [&](const Rank& rank, std::size_t s) { return rank.buffer.as<unsigned char>() + s * share; };
  for (std::size_t r = 0; r < gpus; ++r)
    GEMMLAB_TRY(fill_pattern(ranks[r].device, slice(ranks[r], r), share / 4, kGatherSeed + static_cast<std::uint32_t>(r)));
  const auto all_gather = [&] {
    return grouped(gpus, "ncclAllGather", [&](std::size_t r) {
      return ncclAllGather(slice(ranks[r], r), ranks[r].buffer.data(), share, ncclUint8, comms[r], ranks[r].stream.get());
    });
  };
  const auto poison_others = [&]() -> Status {
    for (std::size_t r = 0; r < gpus; ++r)
      for (std::size_t s = 0; s < gpus; ++s)
        if (s != r) GEMMLAB_TRY(poison(ranks[r].device, slice(ranks[r], s), share));
    return Status::ok();
  };
  GEMMLAB_TRY(repeat(ranks, start, stop, reps, all_gather, poison_others, m.all_gather.time));
  m.all_gather.bytes = static_cast<double>(share * gpus);
  m.all_gather.bus_factor = static_cast<double>(gpus - 1) / static_cast<double>(gpus);
  for (const Rank& rank : ranks)
    for (std::size_t s = 0; s < gpus; ++s)
      GEMMLAB_TRY(count_mismatches(rank.device, slice(rank, s), share / 4, kGatherSeed + static_cast<std::uint32_t>(s),
                                   m.all_gather.checked_words, m.all_gather.mismatches));
  return Status::ok();
}

}  // namespace

Status measure_collectives(const std::vector<int>& devices, const std::vector<std::size_t>& sizes, int reps,
                           std::vector<CollectiveMeasurements>& out) {
  out.clear();
  if (devices.size() < 2)
    return {StatusCode::InvalidValue, fmt::format("NCCL collectives: need two GPUs; {} given", devices.size())};
  if (reps < 1) return {StatusCode::InvalidValue, fmt::format("NCCL collectives: reps ({}) must be at least 1", reps)};
  for (std::size_t bytes : sizes)
    if (bytes % 4 != 0 || bytes / devices.size() < 4)
      return {StatusCode::InvalidValue,
              fmt::format("NCCL collectives: bytes ({}) must be a multiple of 4 and at least 4 per GPU ({} GPUs)", bytes,
                          devices.size())};
  if (sizes.empty()) return Status::ok();
  const std::size_t largest = *std::max_element(sizes.begin(), sizes.end());

  // Declared in this order so that the communicators go first (aborted after an error, while
  // their buffers still exist) and the current device is put back last.
  const RestoreDevice restore;
  std::vector<Rank> ranks(devices.size());
  for (std::size_t r = 0; r < devices.size(); ++r) {
    ranks[r].device = devices[r];
    CUDA_CHECK(cudaSetDevice(devices[r]));
    GEMMLAB_TRY(DeviceMemory::allocate(largest, ranks[r].buffer));
    GEMMLAB_TRY(make_stream(ranks[r].stream));
    GEMMLAB_TRY(make_event(ranks[r].done));
  }
  CUDA_CHECK(cudaSetDevice(devices[0]));
  EventOwner start, stop;  // the clock: on the first GPU
  GEMMLAB_TRY(make_event(start));
  GEMMLAB_TRY(make_event(stop));
  Communicators comms;
  GEMMLAB_TRY(comms.init(devices));

  std::vector<CollectiveMeasurements> measured(sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i)
    GEMMLAB_TRY(measure_size(ranks, comms, start.get(), stop.get(), sizes[i], reps, measured[i]));
  GEMMLAB_TRY(comms.destroy());
  out = std::move(measured);
  return Status::ok();
}

}  // namespace gemmlab::cuda::nvlink
