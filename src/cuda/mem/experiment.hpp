// The memory lab's contract: an experiment is a sweep of cases, each timed with CUDA
// events and each checked for intact data. One file per experiment (coalescing.cu,
// aos_soa.cu, ...), collected in order by registry.cpp. Compiles without nvcc.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "cuda/lab.hpp"
#include "cuda/runtime/buffer.hpp"
#include "cuda/runtime/timer.hpp"

namespace gemmlab::cuda::mem {

// Counts words that did not arrive intact (see check.cuh for the kernels).
class Checker {
 public:
  Status init() {
    GEMMLAB_TRY(DeviceMemory::allocate(sizeof(unsigned long long), counter_));
    return PinnedMemory::allocate(sizeof(unsigned long long), host_);
  }
  // Mismatches among `words` 32-bit words at `data` (device memory): words i with
  // !expect(i, word). Synchronises `stream`. Defined in check.cuh.
  template <class Expect>
  Status count(const void* data, long long words, Expect expect, cudaStream_t stream, long long& mismatches);

 private:
  DeviceMemory counter_;
  PinnedMemory host_;
};

// What an experiment gets from the run.
struct MemContext {
  const DeviceFacts& facts;
  cudaStream_t stream;
  TimingOptions timing;
  double copy_ceiling_gbs;   // cudaMemcpyAsync D2D of this run, bytes read + written
  std::size_t buffer_bytes;  // the size of one streaming buffer: several times L2
  Checker& checker;
  EventTimer& timer;
};

// Bytes of one streaming buffer: l2_multiple L2 sizes (at least 64 MiB), at most an
// eighth of device memory, a multiple of 64 KiB (so it splits into 16-byte words and
// whole rows of every 2D shape used here).
std::size_t streaming_buffer_bytes(const DeviceFacts& facts, double l2_multiple);

// A row before timing: what it is and how many bytes a repetition counts.
MemRow make_row(std::string variant, std::string param_name, long long param, double bytes, std::string note);

// Times `work` (enqueued on ctx.stream) and fills the row's time, GB/s and ratios from
// row.bytes.
Status time_row(MemContext& ctx, MemRow& row, const std::function<Status()>& work);
// Records a data check: passed when nothing mismatched.
void record_check(MemRow& row, long long mismatches);

struct Experiment {
  const char* name;
  const char* title;
  const char* shows;
  Status (*run)(MemContext& ctx, std::vector<MemRow>& rows);
};

Experiment coalescing_experiment();  // coalescing.cu
Experiment aos_soa_experiment();     // aos_soa.cu
Experiment alignment_experiment();   // alignment.cu
Experiment pitch_experiment();       // pitch.cu
Experiment transpose_experiment();   // transpose.cu
Experiment constant_experiment();    // constant.cu
Experiment transfer_experiment();    // transfer.cu
Experiment nvlink_experiment();      // nvlink.cpp

// The experiments in order (registry.cpp).
const std::vector<Experiment>& registry();

}  // namespace gemmlab::cuda::mem
