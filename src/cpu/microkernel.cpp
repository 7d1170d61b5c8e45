// The micro-kernel table: which kernel each ISA gets, and the block sizes derived from it.
#include "cpu/microkernel.hpp"

#include <algorithm>

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
  b.kc = caches.l1d / (kernel.nr * f) / 8 * 8;
  b.kc = std::clamp<std::int64_t>(b.kc, 32, 1024);
  b.mc = caches.l2 / 4 / (b.kc * f) / kernel.mr * kernel.mr;
  b.mc = std::max<std::int64_t>(b.mc, kernel.mr);
  b.nc = caches.l3 / 2 / (b.kc * f) / kernel.nr * kernel.nr;
  b.nc = std::max<std::int64_t>(b.nc, std::int64_t{4} * kernel.nr);
  return b;
}

}  // namespace gemmlab::cpu
