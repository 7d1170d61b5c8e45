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
#include <string_view>

#include "cpu/machine/cache_info.hpp"
#include "cpu/machine/cpu_features.hpp"
#include "gemmlab/status.hpp"

namespace gemmlab::cpu {

using MicroKernelFn = void (*)(std::int64_t kc, const float* ap, const float* bp, float* c,
                               std::int64_t ldc, float alpha, float beta);

// Which micro-panel stays in L1 while the two innermost loops run, and so their order
// and what the block sizes are derived from (blocking_for()):
//   B: for jr { for ir { kernel } }: one B micro-panel (KC, NR) in L1 meets every A
//      micro-panel of the A block (MC, KC), which streams from L2; the B block (KC, NC)
//      lives in L3 (BLIS's order; the driver of the AVX2 and portable kernels);
//   A: for ir { for jr { kernel } }: one A micro-panel (MR, KC) in L1 meets every B
//      micro-panel of the B block (KC, NC), which streams from L2 (BLIS's SKX order, seen
//      from row-major C). A kernel with a wide B micro-panel (NR = 32: 48 KiB at KC = 384)
//      cannot keep it in L1 beside the A stream; its small A micro-panel (18 KiB) can.
enum class L1Panel { B, A };

struct MicroKernel {
  Isa isa;
  const char* name;
  int mr, nr;        // register tile: MR rows x NR columns of C in vector registers
  int vector_bits;   // 512, 256, or 128 for the portable C++ kernel (SSE2 baseline)
  L1Panel l1_panel;  // measured per kernel (docs/cpu-ladder.md)
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

// Block sizes for a kernel on caches of these sizes, by its L1 micro-panel.
// L1Panel::B (measured on a Zen 3 core, 32 KiB L1d, 512 KiB L2, see docs/cpu-ladder.md:
// larger KC and a smaller A block won over the textbook halves):
//   kc: the B micro-panel (kc x NR), reused by every A panel of the ir loop, fills L1d
//       (32 KiB, NR = 16: kc = 512); the A micro-panel streams from L2 beside it, and a
//       long kc makes the C tile's load and store rare (once per kc steps);
//   mc: the packed A block (mc x kc) takes a quarter of L2, leaving room for the B
//       micro-panels that pass through L2 on their way from L3 and for the C tiles;
//   nc: the packed B block (kc x nc) takes half of one L3 instance.
// L1Panel::A (measured on an Emerald Rapids core, 48 KiB L1d, 2 MiB L2):
//   kc: the A micro-panel (MR x kc) takes 3/8 of L1d (48 KiB, MR = 12: kc = 384; 192 and
//       256 measured 3-6 % slower), the rest is for the B lines streaming past and C;
//   nc: the B block (kc x nc), re-read from L2 for every A micro-panel, takes 3/4 of L2
//       (2 MiB: nc = 1024). A is packed once per nc columns, by each thread for its rows:
//       on two threads nc = 960 and 1344 measured 3 % faster than 480 and 672;
//   mc: the A block (mc x kc) takes a quarter of L2 (each A micro-panel is read from it
//       once per NC block, so mc matters little).
// Rounded down to multiples of 8 (kc), MR (mc) and NR (nc), never below one panel.
Blocking blocking_for(const MicroKernel& kernel, const CacheSizes& caches);

// Overrides block sizes from a spec such as "KC=256,MC=480,NC=3072" (any subset of the keys
// KC, MC, NC, comma-separated). KC: 1..65536; MC and NC: positive multiples of MR and NR.
// Anything else is an InvalidValue status that says what is wrong; `b` is then unchanged.
Status apply_blocking_override(std::string_view spec, Blocking& b);

// What the packed rungs run with, by their configuration (Variant::config_name):
// kAutoBlocking (or empty) is blocking_for() on this machine's caches; anything else is a
// spec for apply_blocking_override() on top of it (an InvalidValue status if it is bad).
// Resolved per call: the kernel, and so MR and NR, follow the ISA cap.
inline constexpr std::string_view kAutoBlocking = "auto";
Status packed_blocking(const MicroKernel& kernel, std::string_view config, Blocking& out);

// The kernels of each ISA (microkernel_*.cpp). An AVX-512 or AVX2 kernel must only be
// called where cpu_features() reports the ISA.
extern const MicroKernel kAvx512Kernel;
extern const MicroKernel kAvx2Kernel;
extern const MicroKernel kPortableKernel;

}  // namespace gemmlab::cpu
