// The variant contract: every rung of the ladder, CPU or CUDA, is one of these.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gemmlab/problem.hpp"
#include "gemmlab/run_context.hpp"
#include "gemmlab/status.hpp"
#include "gemmlab/tolerance.hpp"
#include "gemmlab/types.hpp"

namespace gemmlab {

// Every tile size and knob of a rung, printable: "BM=128 BN=128 BK=8 TM=8 TN=8".
struct Config {
  std::vector<std::pair<std::string, std::int64_t>> params;
  std::int64_t get(std::string_view key, std::int64_t fallback = 0) const;
  std::string to_string() const;
};

// The analytic model of one run, from the variant's own tiling (seed 003 §4.1).
struct Traffic {
  double flops = 0;               // 2mnk, plus the epilogue's 2 or 3 per element of C
  double global_load_bytes = 0;   // bytes the kernel's global loads request (cached or not)
  double global_store_bytes = 0;  // bytes written to C
  double min_dram_bytes = 0;      // each input read once, C written once (and read if beta != 0)
  double cgma = 0;                // flops per 4-byte word loaded from global memory
  std::int64_t smem_bytes_per_block = 0;
  std::int64_t threads_per_block = 0;
  // Launches of the rung's kernel: 1, or the sub-grids it runs in sequence where one grid
  // cannot cover the problem (seed 002's second level of blocking: src/cuda/tiles/sub_grid.hpp).
  std::int64_t launches = 1;
};

// The kernel a CUDA rung launches for a problem, for `explain` (cudaFuncGetAttributes and
// the occupancy API need the kernel itself). `function` is the kernel's host-side symbol,
// type-erased so that this header compiles without CUDA.
struct KernelInfo {
  const void* function = nullptr;
  std::string name;            // "smem_tiled_kernel<16, 0, N, N>"
  int threads_per_block = 0;
  int dynamic_smem_bytes = 0;
};

// A named tuning choice of a rung ("128x64", "clusters"): every tile size or form a rung can
// run is reachable by name, from the CLI (--config), the tests and the automatic choice.
struct NamedConfig {
  std::string name;
  std::string description;  // one line: what it fixes
};

struct Variant {
  std::string name;        // unique within its backend: "smem_tiled_32"
  // Its number on the ladder: the number of its file (src/<backend>/ladder/NN_*.cu|cpp) and
  // of its header comment; 0 for an anchor. `gemmlab list` shows the rungs in this order.
  int rung = 0;
  Backend backend = Backend::Cpu;
  DType input = DType::F32;
  DType compute = DType::F32;
  DType output = DType::F32;
  // The three types together: a run with `--dtype NAME` takes the variants whose
  // precision is precision_for(NAME) (types.hpp).
  Precision precision() const { return {input, compute, output}; }
  std::string technique;   // one line: what this rung adds to the one before
  Config config;
  // The configuration these functions run: configs.front().name unless configure() chose
  // another; empty for a rung with one form.
  std::string config_name;
  // The rung's named configurations, the default first ("auto" where the rung chooses per
  // problem). Empty for a rung with one form.
  std::vector<NamedConfig> configs;
  // `out` becomes this rung bound to configuration `name` (one of `configs`, or a form the
  // rung documents there). An unknown name is InvalidValue naming the valid ones. Empty
  // where `configs` is.
  std::function<Status(std::string_view name, Variant& out)> configure;
  bool anchor = false;     // a vendor library every other rung is compared with
  // What it needs of the GPU (CUDA variants), checked before any launch against the device
  // and against the code this build carries (gemmlab/availability.hpp); `gemmlab list`
  // shows it per device. min_compute_capability: 10 * major + minor (80 for sm_80), 0 for
  // any GPU the build supports. arch_specific: the arch-specific target its kernels are
  // compiled for ("90a"), which runs on that one compute capability only; empty for
  // portable code. arch_features: what needs them, for people ("TMA and wgmma").
  int min_compute_capability = 0;
  std::string arch_specific;
  std::string arch_features;
  int threads = 1;         // CPU: threads it uses (0 = all cores); CUDA: unused
  // Runs on the tensor cores: the FP32 FMA rate, explain's measured compute ceiling, does
  // not bound it (even with f32 data and accuracy, as 3xTF32).
  bool tensor_cores = false;
  // The error bound its results are verified against, where its arithmetic is not what its
  // types say (3xTF32: f32 data and result, operands carried in two tf32 parts). Absent:
  // tolerance_for(input, compute, output).
  std::optional<Tolerance> tolerance;

  // Requirements (alignment, architecture, sizes) reported, never silently violated.
  std::function<Status(const GemmProblem&)> can_implement;
  // Launches the computation on the context's stream (CUDA) or threads (CPU): no
  // allocation, no synchronisation, no printing. Only called on validated problems with
  // m, n > 0 and k > 0 and alpha != 0, with the context's device current.
  std::function<Status(const GemmProblem&, RunContext&)> run;
  // Optional: sizes the variant's workspace in the context for this problem (padded copies
  // of operands), allocating only when it must grow, so that run() never allocates. gemm()
  // calls it before run(): the first call for a new largest problem allocates (in the
  // harness, the verification run or the warm-up), later calls only compare sizes.
  std::function<Status(const GemmProblem&, RunContext&)> prepare;
  // Optional, with prepare: the device bytes prepare() holds for this problem, worked out
  // without allocating (the out-of-core and distributed plans count them against a memory
  // limit). Where absent, workspace_bound() (library/workspace.hpp) assumes the most any
  // copy of the operands could take.
  std::function<std::uint64_t(const GemmProblem&)> workspace_bytes;
  std::function<Traffic(const GemmProblem&)> model;
  // Optional (CUDA rungs): the kernel run() launches for this problem. Empty for library
  // anchors and CPU rungs. Ask after a run: some rungs raise kernel attributes on first use.
  std::function<Status(const GemmProblem&, KernelInfo&)> kernel_info;
};

}  // namespace gemmlab
