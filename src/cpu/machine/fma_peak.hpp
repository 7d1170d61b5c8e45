// The machine's FMA peak, measured: a register-only kernel (no loads or stores in its
// loop) of independent multiply-add chains, one per ISA path, chosen at run time like the
// micro-kernels (cpu_features().best_isa(), so GEMMLAB_CPU_ISA caps it too). explain
// reports every CPU rung's rate as a fraction of it.
//
// Contract of a peak kernel: for s = 0 .. steps-1, every chain c and every lane l does
//   acc(c, l) <- acc(c, l) * multiplier + addend
// starting from acc(c, l) = start[c * lanes + l], and writes the final values to
// out[c * lanes + l]. The chains are independent, so the only limit is how many
// multiply-adds the core issues per cycle. The driver passes multiplier = 1 and addend = 1,
// read at run time: the kernel cannot fold them, and the result has a closed form,
// start + steps, exact in float while it stays below 2^24 (check_fma_chains()). Starts
// differ from chain to chain, so no two chains compute the same thing and a compiler
// cannot merge them (a first probe in docs/cpu-ladder.md was fooled that way).
#pragma once

#include <cstdint>
#include <span>

#include "cpu/machine/cpu_features.hpp"
#include "gemmlab/status.hpp"

namespace gemmlab::cpu {

using FmaPeakFn = void (*)(std::int64_t steps, float multiplier, float addend, const float* start,
                           float* out);

struct FmaPeakKernel {
  Isa isa;
  const char* name;
  int vector_bits;     // 512 (zmm), 256 (ymm), or 32 x the portable Vec's lanes
  int chains;          // independent accumulator vectors
  int flops_per_lane;  // per step and lane: 2 (one FMA, or a multiply and an add)
  FmaPeakFn fn;

  int lanes() const { return vector_bits / 32; }
  // Floats of start and out: one per lane of every chain.
  int values() const { return chains * lanes(); }
  double flops_per_step() const { return static_cast<double>(values()) * flops_per_lane; }
};

// Independent chains each kernel keeps. A core that issues P vector FMAs per cycle with a
// latency of L cycles needs P x L chains in flight: 2 x 4 = 8 on Zen 3 and Skylake-X,
// 2 x 5 = 10 on Haswell; the portable kernel's multiply then add is 2 x 3 = 6 cycles on
// two multiply pipes, 12. Twelve covers all of them and fits in 16 ymm (12 + 2 constants).
inline constexpr int kFmaPeakChains = 12;
inline constexpr int kFmaPeakMaxLanes = 16;  // zmm: 16 floats
inline constexpr int kFmaPeakMaxValues = kFmaPeakChains * kFmaPeakMaxLanes;

// The kernel for an ISA (the widest at or below it that this build has). An AVX-512 or
// AVX2 kernel must only be called where cpu_features() reports the ISA.
const FmaPeakKernel& fma_peak_kernel(Isa isa);

// Is out[i] == start[i] + steps for every i, exactly? If not, an InternalError status that
// names the first wrong value; with steps too large for the closed form to be exact in
// float, an InvalidValue status.
Status check_fma_chains(std::span<const float> start, std::span<const float> out, std::int64_t steps);

struct FmaPeakOptions {
  int threads = 1;               // 1 .. usable_cores(); every thread runs the kernel
  double seconds_per_rep = 0.03; // each repetition runs the kernel this long at least
  int reps = 5;                  // the median of these is reported
};

struct FmaPeak {
  Isa isa = Isa::Portable;
  const char* kernel = "";
  int threads = 0;
  int chains = 0, lanes = 0;
  double gflops = 0;          // median over the repetitions, all threads together
  double min_gflops = 0, max_gflops = 0;
  int reps = 0;
  double seconds_per_rep = 0; // median wall time of one repetition
  std::int64_t steps_per_thread = 0;  // per repetition
};

// Runs `kernel` on `options.threads` threads of the thread pool: a warm-up that also
// calibrates the number of steps, then `reps` timed repetitions (std::chrono, wall time of
// the whole team); every call's result is checked. A failed check is an InternalError
// status: the kernel did not compute what it was timed for.
Status measure_fma_peak(const FmaPeakKernel& kernel, const FmaPeakOptions& options, FmaPeak& out);

// The same on cpu_features().best_isa()'s kernel.
Status measure_fma_peak(const FmaPeakOptions& options, FmaPeak& out);

// The kernels of each ISA (fma_peak_*.cpp).
extern const FmaPeakKernel kAvx512FmaPeak;
extern const FmaPeakKernel kAvx2FmaPeak;
extern const FmaPeakKernel kPortableFmaPeak;

}  // namespace gemmlab::cpu
