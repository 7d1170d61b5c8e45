#include <unistd.h>

#include "core/host_info.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace gemmlab {
namespace {

std::string read_text(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The first whole number in `path` (a cgroup file holds one); absent for "max" or unreadable.
std::optional<std::uint64_t> read_number(const char* path) {
  const std::string text = read_text(path);
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc()) return std::nullopt;
  return value;
}

// What the cgroup's limit leaves: limit less usage; absent without a limit.
std::optional<std::uint64_t> cgroup_headroom(const char* limit_path, const char* usage_path) {
  const std::optional<std::uint64_t> limit = read_number(limit_path);
  // cgroup v1 writes "no limit" as a number near 2^63.
  constexpr std::uint64_t kNoLimit = std::uint64_t{1} << 60;
  if (!limit || *limit >= kNoLimit) return std::nullopt;
  const std::uint64_t usage = read_number(usage_path).value_or(0);
  return *limit > usage ? *limit - usage : 0;
}

// The least headroom of the process's cgroup and every group above it (each may set a
// limit): `mount` is where the hierarchy is mounted, `marker` how /proc/self/cgroup names
// it ("0::" for v2, ":memory:" for v1), and the files hold the limit and the usage.
std::optional<std::uint64_t> cgroup_least_headroom(const std::string& self, const std::string& mount,
                                                   const std::string& marker, const char* limit_file,
                                                   const char* usage_file) {
  const std::size_t at = self.find(marker);
  if (at == std::string::npos) return std::nullopt;
  const std::size_t begin = at + marker.size();
  std::string group = self.substr(begin, self.find('\n', begin) - begin);
  std::optional<std::uint64_t> least;
  while (true) {
    const std::string dir = mount + (group == "/" ? std::string() : group) + "/";
    if (const auto room = cgroup_headroom((dir + limit_file).c_str(), (dir + usage_file).c_str()))
      least = least ? std::min(*least, *room) : *room;
    if (group.empty() || group == "/") break;
    group = group.substr(0, group.rfind('/'));
  }
  return least;
}

}  // namespace

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

std::optional<std::uint64_t> parse_mem_available(std::string_view meminfo) {
  constexpr std::string_view kKey = "MemAvailable:";
  const std::size_t at = meminfo.find(kKey);
  if (at == std::string_view::npos || (at > 0 && meminfo[at - 1] != '\n')) return std::nullopt;
  std::string_view rest = meminfo.substr(at + kKey.size());
  rest.remove_prefix(std::min(rest.size(), rest.find_first_not_of(" \t")));
  std::uint64_t kib = 0;
  const auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), kib);
  if (ec != std::errc() || ptr == rest.data()) return std::nullopt;
  return kib * 1024;
}

std::optional<std::uint64_t> host_memory_available() {
  std::optional<std::uint64_t> available = parse_mem_available(read_text("/proc/meminfo"));
  const std::string self = read_text("/proc/self/cgroup");
  // A v2 line starts the file or a line ("0::/path"); a container shows its own group as "/".
  const std::string v2 = self.rfind("0::", 0) == 0 ? "0::" : "\n0::";
  for (const auto& cgroup :
       {cgroup_least_headroom(self, "/sys/fs/cgroup", v2, "memory.max", "memory.current"),
        cgroup_least_headroom(self, "/sys/fs/cgroup/memory", ":memory:", "memory.limit_in_bytes",
                              "memory.usage_in_bytes")})
    if (cgroup) available = available ? std::min(*available, *cgroup) : *cgroup;
  return available;
}

}  // namespace gemmlab
