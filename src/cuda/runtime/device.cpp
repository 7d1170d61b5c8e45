#include "cuda/runtime/device.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>

#include "cuda/backend.hpp"
#include "cuda/lab.hpp"
#include "cuda/runtime/check.hpp"
#include "cuda/runtime/peaks.hpp"

namespace gemmlab::cuda {
namespace {

// Current clocks through NVML, loaded at run time: the driver ships it, machines without a
// GPU (CI) do not, and the program must still start there. NVML numbers every GPU of the
// machine and ignores CUDA_VISIBLE_DEVICES, so the board is found by its PCI bus id, never by
// the CUDA ordinal (a MIG instance finds its parent GPU, whose clocks it runs at).
void read_current_clocks(const std::string& pci_bus_id, DeviceFacts& facts) {
  void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!nvml) return;
  using InitFn = int (*)();
  using HandleFn = int (*)(const char*, void**);
  using ClockFn = int (*)(void*, int, unsigned*);
  auto init = reinterpret_cast<InitFn>(dlsym(nvml, "nvmlInit_v2"));
  auto handle_by_bus = reinterpret_cast<HandleFn>(dlsym(nvml, "nvmlDeviceGetHandleByPciBusId_v2"));
  auto clock = reinterpret_cast<ClockFn>(dlsym(nvml, "nvmlDeviceGetClockInfo"));
  void* device = nullptr;
  constexpr int kNvmlClockSm = 1, kNvmlClockMem = 2;  // NVML's clock types
  if (init && handle_by_bus && clock && !pci_bus_id.empty() && init() == 0 &&
      handle_by_bus(pci_bus_id.c_str(), &device) == 0) {
    unsigned mhz = 0;
    if (clock(device, kNvmlClockSm, &mhz) == 0) facts.current_sm_clock_mhz = static_cast<int>(mhz);
    if (clock(device, kNvmlClockMem, &mhz) == 0) facts.current_memory_clock_mhz = static_cast<int>(mhz);
  }
}

// As nvidia-smi prints it: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
std::string uuid_text(const cudaUUID_t& id) {
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", static_cast<unsigned char>(id.bytes[i]));
  }
  return out;
}

}  // namespace

bool device_present() { return device_count() > 0; }

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // no device or no driver: not an error to carry into later calls
    return 0;
  }
  return count;
}

std::string visible_devices_note() {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!visible) return {};
  return fmt::format("CUDA_VISIBLE_DEVICES={} hides the others", visible);
}

Status select_device(int ordinal, int& chosen) {
  const int count = device_count();
  if (count == 0) return {StatusCode::NotSupported, "no CUDA device is present on this machine"};
  if (ordinal < 0) {
    CUDA_CHECK(cudaGetDevice(&chosen));
    return Status::ok();
  }
  if (ordinal >= count) {
    const std::string note = visible_devices_note();
    return {StatusCode::InvalidValue,
            fmt::format("device {} does not exist: {} CUDA device{} visible (ordinal{} 0{}){}{}", ordinal, count,
                        count == 1 ? " is" : "s are", count == 1 ? "" : "s",
                        count == 1 ? "" : fmt::format(" to {}", count - 1), note.empty() ? "" : "; ", note)};
  }
  CUDA_CHECK(cudaSetDevice(ordinal));
  chosen = ordinal;
  return Status::ok();
}

Status make_current(int ordinal) {
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current == ordinal) return Status::ok();
  (void)cudaGetLastError();
  int chosen = 0;
  return select_device(ordinal, chosen);
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
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, ordinal) == cudaSuccess) f.pci_bus_id = bus_id;
  f.uuid = uuid_text(prop.uuid);
  f.cc_major = prop.major;
  f.cc_minor = prop.minor;
  f.sm_count = prop.multiProcessorCount;
  f.max_sm_clock_mhz = attr(cudaDevAttrClockRate) / 1000;
  f.max_memory_clock_mhz = attr(cudaDevAttrMemoryClockRate) / 1000;
  f.memory_bus_bits = prop.memoryBusWidth;
  f.theoretical_bandwidth_gbs = dram_peak_gbs(f.max_memory_clock_mhz, f.memory_bus_bits);
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
  read_current_clocks(f.pci_bus_id, f);
  return Status::ok();
}

Status query_all_devices(std::vector<DeviceFacts>& out) {
  out.clear();
  const int count = device_count();
  if (count == 0) return {StatusCode::NotSupported, "no CUDA device is present on this machine"};
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    DeviceFacts facts;
    GEMMLAB_TRY(query_device(ordinal, facts));  // properties by ordinal: no device is made current
    out.push_back(std::move(facts));
  }
  return Status::ok();
}

std::vector<std::pair<std::string, std::string>> describe(const DeviceFacts& f) {
  const auto version = [](int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); };
  const DevicePeaks peaks = device_peaks(f);
  std::vector<std::pair<std::string, std::string>> out = {
      {"gpu", f.name},
      {"device_ordinal", std::to_string(f.ordinal)},
      {"pci_bus_id", f.pci_bus_id},
      {"uuid", f.uuid},
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
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) out.emplace_back("cuda_visible_devices", visible);
  // The peaks at the maximum SM clock (peaks.hpp), so a result's % of peak needs no table.
  const auto add_peak = [&](const char* key, double gflops) {
    if (gflops > 0) out.emplace_back(key, fmt::format("{:.0f}", gflops));
  };
  add_peak("peak_fp32_gflops", peaks.fp32_gflops);
  add_peak("peak_tf32_gflops", peaks.tf32_gflops);
  add_peak("peak_bf16_gflops", peaks.bf16_gflops);
  add_peak("peak_f16_gflops", peaks.f16_gflops);
  add_peak("peak_fp8_gflops", peaks.fp8_gflops);
  return out;
}

namespace {
// Of the current device, at every call: a value cached once would keep the first device's
// after select_device chose another.
int read_attribute(cudaDeviceAttr attribute) {
  int device = 0, value = 0;
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&value, attribute, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return value;
}
}  // namespace

Status current_device_memory(DeviceMemoryState& out) {
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  out.free_bytes = free_bytes;
  out.total_bytes = total_bytes;
  out.l2_bytes = static_cast<std::uint64_t>(std::max(0, read_attribute(cudaDevAttrL2CacheSize)));
  return Status::ok();
}

int device_sm_count() { return std::max(1, read_attribute(cudaDevAttrMultiProcessorCount)); }

int device_compute_capability() {
  return 10 * read_attribute(cudaDevAttrComputeCapabilityMajor) + read_attribute(cudaDevAttrComputeCapabilityMinor);
}

}  // namespace gemmlab::cuda
