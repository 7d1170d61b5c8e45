// gemmlab explain and bench --explain: each rung's analytic model next to its measurement.
// For a CUDA rung: flops, loads issued and CGMA, minimum DRAM bytes and intensity, the
// roofline bound from ceilings measured in the same run, the kernel's registers and
// shared/local memory, occupancy with its limiting resource (model and occupancy API),
// and the measured time as a fraction of the bound. For a CPU rung: seed 002's innermost
// loop costs and the tile footprints next to the cache sizes.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/harness.hpp"
#include "bench/model.hpp"
#include "cpu/cache_info.hpp"
#include "cuda/lab.hpp"

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
};

struct Explanation {
  Record record;
  std::optional<KernelReport> kernel;     // CUDA rungs
  std::optional<Roofline> roofline;       // CUDA rungs: from this run's ceilings
  std::optional<double> fraction_of_bound;       // roofline time / measured time
  std::optional<double> fraction_of_seed_bound;  // seed 003 §4.1 time / measured time
  std::optional<CpuModel> cpu;            // CPU rungs
};

struct ExplainContext {
  cuda::DeviceFacts facts;
  cuda::Ceilings ceilings;  // copy bandwidth and FMA rate, re-measured briefly
  bool have_ceilings = false;
};

// Runs the selection through the harness (as bench does) and explains every record. On
// the CUDA executor it first measures the copy bandwidth and the FMA rate.
Status explain(const Options& options, Executor& executor, ExplainContext& context,
               std::vector<Explanation>& out);

// Seed 002's model for a problem (exposed for tests).
CpuModel cpu_model(const GemmProblem& problem, const Config& config);

}  // namespace gemmlab::bench
