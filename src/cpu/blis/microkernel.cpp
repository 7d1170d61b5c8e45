// The micro-kernel table: which kernel each ISA gets, and the block sizes derived from it.
#include "cpu/blis/microkernel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace gemmlab::cpu {

const MicroKernel& micro_kernel(Isa isa) {
  switch (isa) {
    case Isa::Avx512: return kAvx512Kernel;
    case Isa::Avx2: return kAvx2Kernel;
    case Isa::Portable: return kPortableKernel;
  }
  return kPortableKernel;
}

Blocking blocking_for(const MicroKernel& kernel, const CacheSizes& caches) {
  Blocking b;
  b.mr = kernel.mr;
  b.nr = kernel.nr;
  const std::int64_t f = sizeof(float);
  const bool a_in_l1 = kernel.l1_panel == L1Panel::A;
  b.kc = a_in_l1 ? caches.l1d * 3 / 8 / (kernel.mr * f) : caches.l1d / (kernel.nr * f);
  b.kc = std::clamp<std::int64_t>(b.kc / 8 * 8, 32, 1024);
  b.mc = caches.l2 / 4 / (b.kc * f) / kernel.mr * kernel.mr;
  b.mc = std::max<std::int64_t>(b.mc, kernel.mr);
  b.nc = (a_in_l1 ? caches.l2 * 3 / 4 : caches.l3 / 2) / (b.kc * f) / kernel.nr * kernel.nr;
  b.nc = std::max<std::int64_t>(b.nc, std::int64_t{4} * kernel.nr);
  return b;
}

Status apply_blocking_override(std::string_view spec, Blocking& b) {
  const auto bad = [&](const std::string& why) {
    return Status{StatusCode::InvalidValue,
                  fmt::format("block sizes \"{}\": {} (expected e.g. KC=256,MC=480,NC=3072; "
                              "MC a multiple of MR = {}, NC of NR = {})",
                              spec, why, b.mr, b.nr)};
  };
  Blocking out = b;
  std::size_t pos = 0;
  while (pos <= spec.size()) {
    const std::size_t end = std::min(spec.find(',', pos), spec.size());
    const std::string_view item = spec.substr(pos, end - pos);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) return bad(fmt::format("\"{}\" is not KEY=VALUE", item));
    const std::string_view key = item.substr(0, eq), text = item.substr(eq + 1);
    std::int64_t value = 0;
    if (text.empty() || text.size() > 7) return bad(fmt::format("\"{}\" is not a size", text));
    for (const char ch : text) {
      if (ch < '0' || ch > '9') return bad(fmt::format("\"{}\" is not a size", text));
      value = value * 10 + (ch - '0');
    }
    if (key == "KC") {
      if (value < 1 || value > 65536) return bad("KC must be 1..65536");
      out.kc = value;
    } else if (key == "MC") {
      if (value < 1 || value % b.mr != 0) return bad("MC must be a positive multiple of MR");
      out.mc = value;
    } else if (key == "NC") {
      if (value < 1 || value % b.nr != 0) return bad("NC must be a positive multiple of NR");
      out.nc = value;
    } else {
      return bad(fmt::format("unknown key \"{}\" (KC, MC or NC)", key));
    }
    pos = end + 1;
  }
  b = out;
  return Status::ok();
}

Status packed_blocking(const MicroKernel& kernel, std::string_view config, Blocking& out) {
  out = blocking_for(kernel, cache_sizes());
  if (config.empty() || config == kAutoBlocking) return Status::ok();
  return apply_blocking_override(config, out);  // leaves `out` as it was if the spec is bad
}

}  // namespace gemmlab::cpu
