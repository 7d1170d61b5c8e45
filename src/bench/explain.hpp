// gemmlab explain and bench --explain: each rung's analytic model next to its measurement.
// For a CUDA rung: flops, loads issued and CGMA, minimum DRAM bytes and intensity, the
// roofline bound from ceilings measured in the same run, the kernel's registers and
// shared/local memory, occupancy with its limiting resource (model and occupancy API),
// and the measured time as a fraction of the bound. For a CPU rung: seed 002's innermost
// loop costs, the tile footprints next to the cache sizes, the packed micro-kernel's FMAs
// per load, and the measured rate as a fraction of the FMA peak measured in the same run
// by a register-only kernel (cpu/fma_peak.hpp) on as many threads.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/harness.hpp"
#include "bench/model.hpp"
#include "cpu/machine/cache_info.hpp"
#include "cpu/machine/fma_peak.hpp"
#include "cuda/lab.hpp"
#include "cuda/runtime/peaks.hpp"

namespace gemmlab::bench {

struct KernelReport {
  bool available = false;
  std::string why_not;              // when not available
  KernelInfo info;
  cuda::KernelAttributes attributes;
  SmLimits limits;
  Occupancy model;                  // occupancy() on the attributes
  bool api_agrees = false;          // model.blocks == attributes.api_blocks_per_sm
};

// Seed 002's model of a CPU rung.
struct CpuModel {
  std::array<double, 3> cost{};     // CM with i, j, p innermost: cache lines per execution
  std::string order;                // the order it implies, outermost first: "i p j"
  cpu::CacheSizes caches;
  // (what, bytes, the cache it should fit) from the rung's configuration.
  struct Footprint {
    std::string tile;
    long long bytes = 0;
    std::string cache;
    long long cache_bytes = 0;
  };
  std::vector<Footprint> footprints;
  // Packed rungs: the micro-kernel's work per k step, from MR, NR and VEC_BITS in the config.
  std::optional<MicroKernelLoads> micro_kernel;
  int threads = 1;  // the threads the rung uses (Variant::threads; 0 there = all cores)
  // The rate against the FMA peak on as many threads (one thread, or all cores).
  std::optional<cpu::FmaPeak> peak;
  std::optional<double> fraction_of_peak;  // measured GFLOP/s / peak GFLOP/s
};

struct Explanation {
  Record record;
  std::optional<KernelReport> kernel;     // CUDA rungs
  std::optional<Roofline> roofline;       // CUDA rungs: from this run's ceilings
  std::optional<double> fraction_of_bound;       // roofline time / measured time
  std::optional<double> fraction_of_seed_bound;  // seed 003 §4.1 time / measured time
  // CUDA rungs: the peak of the rung's input type on this device (cuda/runtime/peaks.hpp)
  // and the measured rate as a fraction of it; absent where the table has no such rate.
  std::optional<double> peak_gflops;
  std::optional<double> fraction_of_peak;
  std::optional<CpuModel> cpu;            // CPU rungs
};

struct ExplainContext {
  cuda::DeviceFacts facts;
  cuda::Ceilings ceilings;  // copy bandwidth and FMA rate, re-measured briefly
  bool have_ceilings = false;
  cuda::DevicePeaks peaks;  // computed from facts: FP32 lanes and tensor-core rates x SMs x clock
  // CPU: the register-only FMA peak on one thread and on all usable cores, measured once
  // per explain run before the rungs.
  struct CpuPeaks {
    cpu::FmaPeak one_thread, all_cores;
  };
  std::optional<CpuPeaks> cpu_peaks;
};

// Runs the selection through the harness (as bench does) and explains every record. On
// the CUDA executor it first measures the copy bandwidth and the FMA rate; on the CPU
// executor the FMA peak (cpu::measure_fma_peak) on one thread and on all cores.
Status explain(const Options& options, Executor& executor, ExplainContext& context,
               std::vector<Explanation>& out);

// Seed 002's model for a problem (exposed for tests).
CpuModel cpu_model(const GemmProblem& problem, const Config& config);

// The peak that matches a rung on `threads` threads (0 = all cores): one thread's for 1,
// else all cores'.
const cpu::FmaPeak& matching_peak(const ExplainContext::CpuPeaks& peaks, int threads);

}  // namespace gemmlab::bench
