// The NVLink level's measurements, for measure_peer_link (cuda/distributed.hpp) and the memory
// lab's "nvlink" experiment: copy-engine copies between two GPUs (src/cuda/runtime/peer_link.cpp)
// and NCCL's broadcast and all-gather over a group of GPUs (src/cuda/nccl/collectives_bandwidth.cpp,
// or the stand-in src/cuda/no_nccl/collectives_bandwidth.cpp in a build without NCCL). Each figure
// keeps its timings and its data check, so that the lab can record a check that failed in its row
// while measure_peer_link refuses to report a rate for it. No CUDA or NCCL types here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda/lab.hpp"
#include "gemmlab/status.hpp"

namespace gemmlab::cuda::nvlink {

// One figure: `time.reps` timed repetitions (after one untimed warm-up), the bytes each counts,
// and the check of what the timed repetitions left in the destination (poisoned before them).
struct LinkMeasurement {
  Timing time;
  double bytes = 0;           // bytes one repetition counts (each figure says which)
  double bus_factor = 1;      // bus / algorithm bandwidth (nccl-tests): (P - 1) / P for all-gather, else 1
  long long checked_words = 0;
  long long mismatches = 0;   // checked 32-bit words that did not arrive intact
  double rate() const { return time.median_ms > 0 ? bytes / (time.median_ms * 1e-3) : 0.0; }  // bytes per second
  double bus_rate() const { return rate() * bus_factor; }
};

// cudaMemcpyPeerAsync of `bytes` from GPU `from` to GPU `to` on a stream of `from`, with CUDA
// events on that stream (one_way); and the same at once with `to` -> `from` on a stream of `to`,
// started together (both_ways: bytes of one direction over the time of the pair, so each
// direction's rate while the other runs). Peer access is enabled both ways where the devices
// allow it (and left enabled: it is the process's, not this call's).
struct PeerCopyMeasurements {
  int from = 0, to = 0;
  std::size_t bytes = 0;
  bool peer_access = false;  // both ways; without it the driver stages the copies through host memory
  LinkMeasurement one_way, both_ways;
};
// `bytes`: a positive multiple of 4; `reps` >= 1. Restores the calling thread's current device.
Status measure_peer_copies(int from, int to, std::size_t bytes, int reps, PeerCopyMeasurements& out);

// NCCL over all of `devices` (one communicator per GPU, made by this call, destroyed before it
// returns; NCCL_NVLS_ENABLE=0: no NVLink multicast):
//   broadcast: `bytes` from the first GPU to every GPU; bus bandwidth = algorithm bandwidth.
//   all-gather (in place): each GPU contributes `share` bytes (bytes / P, a multiple of 4), every
//   GPU ends with the gathered share x P; algorithm bandwidth = gathered bytes / time, bus
//   bandwidth x (P - 1) / P.
// Each repetition is timed on the first GPU's stream, from an event every GPU's stream waits for
// to the end of the last GPU's part.
struct CollectiveMeasurements {
  bool measured = false;  // false in a build without NCCL; nothing else is filled then
  int gpus = 0;
  std::size_t bytes = 0;  // the broadcast's buffer
  std::size_t share = 0;  // each GPU's part of the all-gather
  LinkMeasurement broadcast, all_gather;
};
// One entry of `out` per entry of `sizes` (each a positive multiple of 4, at least 4 x P), one
// set of communicators for all. `reps` >= 1. Restores the calling thread's current device.
Status measure_collectives(const std::vector<int>& devices, const std::vector<std::size_t>& sizes, int reps,
                           std::vector<CollectiveMeasurements>& out);

// ---- what both parts use (peer_link.cpp) ----------------------------------------------

// Puts the calling thread's current device back as it found it.
class RestoreDevice {
 public:
  RestoreDevice();
  ~RestoreDevice();
  RestoreDevice(const RestoreDevice&) = delete;
  RestoreDevice& operator=(const RestoreDevice&) = delete;

 private:
  int device_ = -1;
};

// Word i of the data the NVLink level moves: a position-dependent pattern (never constant), so
// a copy that drops, shifts or misplaces anything shows.
std::uint32_t pattern_word(std::uint64_t i, std::uint32_t seed);
// On `device`: `bytes` of 0xFF ("not written") at `data`; `words` words of the pattern at `data`.
// Both complete before they return (so work on other streams sees them).
Status poison(int device, void* data, std::size_t bytes);
Status fill_pattern(int device, void* data, std::size_t words, std::uint32_t seed);
// Compares `words` words at `data` (on `device`) with the pattern: all of them up to 4 MiB, else
// 64 windows of 64 KiB spread from the first word to the last. Adds to `checked` and `mismatches`.
// The caller has synchronised whatever wrote `data`.
Status count_mismatches(int device, const void* data, std::size_t words, std::uint32_t seed, long long& checked,
                        long long& mismatches);
// Median, fastest and slowest of per-repetition times (at least one).
Timing summarize_ms(std::vector<double> ms);

}  // namespace gemmlab::cuda::nvlink
