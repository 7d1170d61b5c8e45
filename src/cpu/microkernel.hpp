// The micro-kernels of the packed rungs and their block sizes: one table, one entry per ISA.
//
// Contract of a micro-kernel (BLIS's, restated for row-major C):
//   C(MR, NR) <- alpha * Ap(MR, kc) * Bp(kc, NR) + beta * C
// where Ap is one packed A panel (ap[p*MR + r]), Bp one packed B panel (bp[p*NR + c]), both
// 64-byte aligned, kc >= 1, and C a full MR x NR tile at c with row stride ldc. With
// beta == 0, C is written and never read (it may hold NaN). Edge tiles are the driver's
// business: it points the kernel at a private MR x NR tile and copies the valid part.
#pragma once

#include <cstdint>
#include <string>

#include "cpu/cache_info.hpp"
#include "cpu/cpu_features.hpp"

namespace gemmlab::cpu {

using MicroKernelFn = void (*)(std::int64_t kc, const float* ap, const float* bp, float* c,
                               std::int64_t ldc, float alpha, float beta);

struct MicroKernel {
  Isa isa;
  const char* name;
  int mr, nr;        // register tile: MR rows x NR columns of C in vector registers
  int vector_bits;   // 512, 256, or 128 for the portable C++ kernel (SSE2 baseline)
  MicroKernelFn fn;
};

// The five-loop block sizes (BLIS names): kc is the depth of a packed panel, mc the rows
// of a packed A block, nc the columns of a packed B block.
struct Blocking {
  int mr = 0, nr = 0;
  std::int64_t kc = 0, mc = 0, nc = 0;
};

// Largest register tile any kernel uses (for the driver's edge-tile buffer).
inline constexpr int kMaxMr = 12;
inline constexpr int kMaxNr = 32;

// The kernel for an ISA (the widest at or below it that this build has).
const MicroKernel& micro_kernel(Isa isa);

// Block sizes for a kernel on caches of these sizes (measured on a Zen 3 core, see
// docs/cpu-ladder.md: larger KC and a smaller A block won over the textbook halves):
//   kc: the B micro-panel (kc x NR), reused by every A panel of the ir loop, fills L1d
//       (32 KiB, NR = 16: kc = 512); the A micro-panel streams from L2 beside it, and a
//       long kc makes the C tile's load and store rare (once per kc steps);
//   mc: the packed A block (mc x kc) takes a quarter of L2, leaving room for the B
//       micro-panels that pass through L2 on their way from L3 and for the C tiles;
//   nc: the packed B block (kc x nc) takes half of one L3 instance.
// Rounded down to multiples of 8 (kc), MR (mc) and NR (nc), never below one panel.
Blocking blocking_for(const MicroKernel& kernel, const CacheSizes& caches);

// The kernels of each ISA (microkernel_*.cpp). An AVX-512 or AVX2 kernel must only be
// called where cpu_features() reports the ISA.
extern const MicroKernel kAvx512Kernel;
extern const MicroKernel kAvx2Kernel;
extern const MicroKernel kPortableKernel;

}  // namespace gemmlab::cpu
