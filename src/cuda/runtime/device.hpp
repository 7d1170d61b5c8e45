// The facts about a CUDA device that kernels and models need, read from the device
// (never hard-coded: SM count, L2 size and shared-memory limits differ between parts).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gemmlab/status.hpp"

namespace gemmlab::cuda {

struct DeviceFacts {
  int ordinal = 0;       // the CUDA ordinal among the visible devices (CUDA_VISIBLE_DEVICES)
  std::string name;
  std::string pci_bus_id;  // "0000:18:00.0": which board it is, whatever the ordinal
  std::string uuid;        // "GPU-..." as nvidia-smi prints it (a MIG instance's for MIG)
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
// Visible CUDA devices (0 where there are none or no driver).
int device_count();
// The one place a device is chosen: makes `ordinal` the calling thread's current device
// (-1: keep the current one, device 0 in a fresh process) and returns it in `chosen`.
// An ordinal out of range is InvalidValue naming how many devices there are.
Status select_device(int ordinal, int& chosen);
// "CUDA_VISIBLE_DEVICES=1,3 hides the others" or "" when the variable is not set.
std::string visible_devices_note();
// The current device's SM count (1 if unreadable), for persistent grids and wave-aware tile
// choices. Read at each call, so it follows select_device (the driver answers from memory).
int device_sm_count();
// The current device's compute capability as 10 * major + minor (0 if unreadable).
int device_compute_capability();
Status query_device(int ordinal, DeviceFacts& out);

// The current device's memory as the driver sees it now (cudaMemGetInfo): what is free (less
// what this process and every other already holds) and the total, and its L2's size (the
// executor's flush buffer is sized from it). NotSupported in a build without CUDA.
struct DeviceMemoryState {
  std::uint64_t free_bytes = 0, total_bytes = 0;
  std::uint64_t l2_bytes = 0;
};
Status current_device_memory(DeviceMemoryState& out);
// Key/value text for result files.
std::vector<std::pair<std::string, std::string>> describe(const DeviceFacts& facts);

}  // namespace gemmlab::cuda
