#include "cpu/machine/cache_info.hpp"

#include <unistd.h>

#include <cctype>
#include <fstream>
#include <string>

namespace gemmlab::cpu {
namespace {

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

struct Found {
  std::int64_t bytes = 0;
  const char* source = "default";
};

// Level `level` data or unified cache of cpu0 from sysfs; 0 when absent.
std::int64_t from_sysfs(int level) {
  for (int index = 0; index < 16; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    const std::string lvl = read_line(dir + "level");
    if (lvl.empty()) break;
    const std::string type = read_line(dir + "type");
    if (lvl == std::to_string(level) && (type == "Data" || type == "Unified"))
      return parse_cache_size(read_line(dir + "size"));
  }
  return 0;
}

std::int64_t from_sysconf(int level) {
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE) && defined(_SC_LEVEL3_CACHE_SIZE)
  const int name = level == 1 ? _SC_LEVEL1_DCACHE_SIZE
                   : level == 2 ? _SC_LEVEL2_CACHE_SIZE
                                : _SC_LEVEL3_CACHE_SIZE;
  const long value = sysconf(name);
  return value > 0 ? static_cast<std::int64_t>(value) : 0;
#else
  (void)level;
  return 0;
#endif
}

Found find(int level, std::int64_t fallback) {
  if (const std::int64_t b = from_sysfs(level); b > 0) return {b, "sysfs"};
  if (const std::int64_t b = from_sysconf(level); b > 0) return {b, "sysconf"};
  return {fallback, "default"};
}

CacheSizes detect() {
  const Found l1 = find(1, 32 << 10), l2 = find(2, 256 << 10), l3 = find(3, 8 << 20);
  CacheSizes c;
  c.l1d = l1.bytes;
  c.l2 = l2.bytes;
  c.l3 = l3.bytes;
  c.source = std::string("l1d=") + l1.source + " l2=" + l2.source + " l3=" + l3.source;
  return c;
}

}  // namespace

std::int64_t parse_cache_size(const std::string& text) {
  std::int64_t value = 0;
  std::size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])))
    value = value * 10 + (text[i++] - '0');
  if (i == 0) return 0;
  if (i < text.size()) {
    switch (std::toupper(static_cast<unsigned char>(text[i]))) {
      case 'K': value <<= 10; break;
      case 'M': value <<= 20; break;
      case 'G': value <<= 30; break;
      default: break;
    }
  }
  return value;
}

const CacheSizes& cache_sizes() {
  static const CacheSizes sizes = detect();
  return sizes;
}

}  // namespace gemmlab::cpu
