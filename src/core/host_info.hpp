// The host a result was measured on (its CPU model and clocks): every result file records it.
// And how much host memory a run may still take, for the check made before anything is allocated.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gemmlab {

struct HostInfo {
  std::string hostname;  // gethostname(); empty where unreadable
  std::string model;
  int logical_cores = 0;
  double current_mhz = 0;  // as /proc/cpuinfo reads now; 0 where unreadable
  double max_mhz = 0;      // cpufreq's maximum; 0 where unreadable
};
HostInfo host_info();

// Host memory a new allocation can take now without swapping, in bytes: /proc/meminfo's
// MemAvailable, lowered to what this process's cgroup still allows (v2: memory.max less
// memory.current; v1: memory.limit_in_bytes less memory.usage_in_bytes), since a container's
// limit, not the machine's, is what the kernel's OOM killer enforces. Absent where neither
// can be read.
std::optional<std::uint64_t> host_memory_available();

// MemAvailable of /proc/meminfo's text, in bytes (the file says kB and means KiB); absent
// where the line is missing or malformed.
std::optional<std::uint64_t> parse_mem_available(std::string_view meminfo);

}  // namespace gemmlab
