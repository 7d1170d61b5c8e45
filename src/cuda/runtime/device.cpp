#include "cuda/runtime/device.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <fmt/format.h>

#include "cuda/backend.hpp"
#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda {
namespace {

// Current clocks through NVML, loaded at run time: the driver ships it, machines without a
// GPU (CI) do not, and the program must still start there.
void read_current_clocks(int ordinal, DeviceFacts& facts) {
  void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!nvml) return;
  using InitFn = int (*)();
  using HandleFn = int (*)(unsigned, void**);
  using ClockFn = int (*)(void*, int, unsigned*);
  auto init = reinterpret_cast<InitFn>(dlsym(nvml, "nvmlInit_v2"));
  auto handle_by_index = reinterpret_cast<HandleFn>(dlsym(nvml, "nvmlDeviceGetHandleByIndex_v2"));
  auto clock = reinterpret_cast<ClockFn>(dlsym(nvml, "nvmlDeviceGetClockInfo"));
  void* device = nullptr;
  // NVML's clock types: 1 = SM, 2 = memory. NVML orders devices like CUDA does here
  // (one GPU per machine); a mismatch would only mislabel a clock, never a result.
  constexpr int kNvmlClockSm = 1, kNvmlClockMem = 2;
  if (init && handle_by_index && clock && init() == 0 &&
      handle_by_index(static_cast<unsigned>(ordinal), &device) == 0) {
    unsigned mhz = 0;
    if (clock(device, kNvmlClockSm, &mhz) == 0) facts.current_sm_clock_mhz = static_cast<int>(mhz);
    if (clock(device, kNvmlClockMem, &mhz) == 0) facts.current_memory_clock_mhz = static_cast<int>(mhz);
  }
}

}  // namespace

bool device_present() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

Status query_device(int ordinal, DeviceFacts& f) {
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  const auto attr = [ordinal](cudaDeviceAttr a) {
    int value = 0;
    cudaDeviceGetAttribute(&value, a, ordinal);
    return value;
  };
  f.ordinal = ordinal;
  f.name = prop.name;
  f.cc_major = prop.major;
  f.cc_minor = prop.minor;
  f.sm_count = prop.multiProcessorCount;
  f.max_sm_clock_mhz = attr(cudaDevAttrClockRate) / 1000;
  f.max_memory_clock_mhz = attr(cudaDevAttrMemoryClockRate) / 1000;
  f.memory_bus_bits = prop.memoryBusWidth;
  f.theoretical_bandwidth_gbs = 2.0 * f.max_memory_clock_mhz * 1e6 * (f.memory_bus_bits / 8.0) * 1e-9;
  f.l2_bytes = prop.l2CacheSize;
  f.global_memory_bytes = static_cast<long long>(prop.totalGlobalMem);
  f.smem_per_block = static_cast<int>(prop.sharedMemPerBlock);
  f.smem_per_block_optin = static_cast<int>(prop.sharedMemPerBlockOptin);
  f.smem_per_sm = static_cast<int>(prop.sharedMemPerMultiprocessor);
  f.regs_per_sm = prop.regsPerMultiprocessor;
  f.regs_per_block = prop.regsPerBlock;
  f.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  f.max_threads_per_block = prop.maxThreadsPerBlock;
  f.max_blocks_per_sm = prop.maxBlocksPerMultiProcessor;
  f.warp_size = prop.warpSize;
  f.constant_memory_bytes = static_cast<long long>(prop.totalConstMem);
  f.async_engines = prop.asyncEngineCount;
  f.ecc = prop.ECCEnabled != 0;
  CUDA_CHECK(cudaDriverGetVersion(&f.driver_version));
  CUDA_CHECK(cudaRuntimeGetVersion(&f.runtime_version));
  read_current_clocks(ordinal, f);
  return Status::ok();
}

std::vector<std::pair<std::string, std::string>> describe(const DeviceFacts& f) {
  const auto version = [](int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); };
  return {{"gpu", f.name},
          {"compute_capability", fmt::format("{}.{}", f.cc_major, f.cc_minor)},
          {"sm_count", std::to_string(f.sm_count)},
          {"sm_clock_max_mhz", std::to_string(f.max_sm_clock_mhz)},
          {"sm_clock_now_mhz", std::to_string(f.current_sm_clock_mhz)},
          {"memory_clock_max_mhz", std::to_string(f.max_memory_clock_mhz)},
          {"memory_clock_now_mhz", std::to_string(f.current_memory_clock_mhz)},
          {"memory_bus_bits", std::to_string(f.memory_bus_bits)},
          {"theoretical_bandwidth_gbs", fmt::format("{:.0f}", f.theoretical_bandwidth_gbs)},
          {"l2_bytes", std::to_string(f.l2_bytes)},
          {"ecc", f.ecc ? "on" : "off"},
          {"driver", version(f.driver_version)},
          {"runtime", version(f.runtime_version)}};
}

namespace {
int read_attribute(cudaDeviceAttr attribute) {
  int device = 0, value = 0;
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&value, attribute, device) != cudaSuccess)
    return 0;
  return value;
}
}  // namespace

int device_sm_count() {
  static const int count = std::max(1, read_attribute(cudaDevAttrMultiProcessorCount));
  return count;
}

int device_compute_capability() {
  static const int cc =
      10 * read_attribute(cudaDevAttrComputeCapabilityMajor) + read_attribute(cudaDevAttrComputeCapabilityMinor);
  return cc;
}

}  // namespace gemmlab::cuda
