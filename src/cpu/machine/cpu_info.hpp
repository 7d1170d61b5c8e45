// The host a result was measured on: every result file records it.
#pragma once

#include <string>

namespace gemmlab {

struct CpuInfo {
  std::string model;
  int logical_cores = 0;
  double current_mhz = 0;  // as /proc/cpuinfo reads now; 0 where unreadable
  double max_mhz = 0;      // cpufreq's maximum; 0 where unreadable
  std::string isa;         // the widest SIMD level the program will use: avx512, avx2, sse2
};
CpuInfo cpu_info();

}  // namespace gemmlab
