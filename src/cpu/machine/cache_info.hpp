// Data-cache sizes of the host, read at run time (the binary runs on machines other than
// the one that built it). The cache-blocked rungs derive their tile sizes from these.
#pragma once

#include <cstdint>
#include <string>

namespace gemmlab::cpu {

struct CacheSizes {
  std::int64_t l1d = 0;  // bytes of level-1 data cache of one core
  std::int64_t l2 = 0;   // bytes of level-2 cache of one core
  std::int64_t l3 = 0;   // bytes of one level-3 instance (shared by several cores)
  // Where each number came from, e.g. "l1d=sysfs l2=sysfs l3=sysfs".
  std::string source;
};

// Read once and cached. Order of preference per level:
//  1. /sys/devices/system/cpu/cpu0/cache/index*/{level,type,size}: the kernel's view,
//     per instance (glibc's sysconf reports L3 summed over all CCXs on AMD EPYC, e.g.
//     256 MiB where one instance holds 32 MiB, so it comes second);
//  2. sysconf(_SC_LEVEL1_DCACHE_SIZE / _SC_LEVEL2_CACHE_SIZE / _SC_LEVEL3_CACHE_SIZE);
//  3. a conservative default of 32 KiB / 256 KiB / 8 MiB (a 2015-era x86 core), marked
//     "default" in `source`.
const CacheSizes& cache_sizes();

// The parsing step, exposed for tests: "48K" -> 49152, "2M" -> 2097152, "" -> 0.
std::int64_t parse_cache_size(const std::string& text);

}  // namespace gemmlab::cpu
