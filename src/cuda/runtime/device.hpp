// The facts about a CUDA device that kernels and models need, read from the device
// (never hard-coded: SM count, L2 size and shared-memory limits differ between parts).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "gemmlab/status.hpp"

namespace gemmlab::cuda {

struct DeviceFacts {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int max_sm_clock_mhz = 0;
  int max_memory_clock_mhz = 0;
  int memory_bus_bits = 0;
  double theoretical_bandwidth_gbs = 0;  // 2 transfers per clock (DDR) x bus width
  long long l2_bytes = 0;
  long long global_memory_bytes = 0;
  int smem_per_block = 0, smem_per_block_optin = 0, smem_per_sm = 0;
  int regs_per_sm = 0, regs_per_block = 0;
  int max_threads_per_sm = 0, max_threads_per_block = 0, max_blocks_per_sm = 0;
  int warp_size = 0;
  long long constant_memory_bytes = 0;
  int async_engines = 0;
  bool ecc = false;
  int driver_version = 0, runtime_version = 0;
  // Read through NVML when the driver provides it; 0 where unreadable.
  int current_sm_clock_mhz = 0, current_memory_clock_mhz = 0;
};

bool device_present();
// The current device's SM count (read once; 1 if unreadable), for persistent grids and
// wave-aware tile choices.
int device_sm_count();
// The current device's compute capability as 10 * major + minor (read once; 0 if unreadable).
int device_compute_capability();
Status query_device(int ordinal, DeviceFacts& out);
// Key/value text for result files.
std::vector<std::pair<std::string, std::string>> describe(const DeviceFacts& facts);

}  // namespace gemmlab::cuda
