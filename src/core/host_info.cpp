#include <unistd.h>

#include "core/host_info.hpp"

#include <fstream>
#include <string>
#include <thread>

namespace gemmlab {

HostInfo host_info() {
  HostInfo info;
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) == 0) info.hostname = name;
  info.logical_cores = static_cast<int>(std::thread::hardware_concurrency());
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name" && info.model.empty()) info.model = value;
    if (key == "cpu MHz" && info.current_mhz == 0) {
      try { info.current_mhz = std::stod(value); } catch (...) {}
    }
  }
  std::ifstream max_freq("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  double khz = 0;
  if (max_freq >> khz) info.max_mhz = khz / 1000.0;
  return info;
}

}  // namespace gemmlab
