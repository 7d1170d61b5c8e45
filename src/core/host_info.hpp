// The host a result was measured on (its CPU model and clocks): every result file records it.
#pragma once

#include <string>

namespace gemmlab {

struct HostInfo {
  std::string hostname;  // gethostname(); empty where unreadable
  std::string model;
  int logical_cores = 0;
  double current_mhz = 0;  // as /proc/cpuinfo reads now; 0 where unreadable
  double max_mhz = 0;      // cpufreq's maximum; 0 where unreadable
};
HostInfo host_info();

}  // namespace gemmlab
