// The memory a run needs, worked out before anything is allocated, and the check against what
// the machine has free. A problem that cannot fit is refused at once, naming the bytes it needs
// and has and what to do, instead of failing after minutes of random fill (or being killed by
// the kernel without a word). A problem whose float64 reference alone would not fit, or would
// take too long on the host, is verified at a sample of C's elements instead.
//
// What is counted is what the harness allocates (harness.cpp, run_shape): the operands with
// their leading dimensions, C's copies (its initial values for re-runs and the check, the
// result downloaded), the reference or its sample, the L2 flush buffer, the rungs' device
// workspaces (an upper bound), and an allowance for the program and its libraries.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/harness.hpp"
#include "core/executor.hpp"
#include "gemmlab/matrix.hpp"

namespace gemmlab::bench {

// How a shape is verified: not at all, against the full float64 reference, or at a sample.
enum class VerifyMode { None, Full, Sampled };
std::string_view to_string(VerifyMode mode);  // "none", "full", "sampled"

// The full reference is chosen only where the whole run with it takes at most this share of
// the host memory available: the rest is left to the page cache and everything else running.
inline constexpr double kFullReferenceHostShare = 0.8;
// Allowances for what the plan cannot count: the program, its libraries and the CPU rungs'
// packing buffers on the host; the CUDA libraries' workspaces (cuBLAS), the stream-K
// partials and module code on the device.
inline constexpr std::uint64_t kHostAllowance = std::uint64_t{512} << 20;
inline constexpr std::uint64_t kDeviceAllowance = std::uint64_t{256} << 20;

// The three matrices of a shape as the harness lays them out: op and layout as `options`
// say, every leading dimension padded by options.ld_padding, A and B in the input type and C
// in its storage type (--out-dtype). data is null.
struct OperandLayout {
  Matrix a, b, c;
};
OperandLayout operand_layout(const Options& options, const Shape& shape);

// Elements a matrix's buffer holds: lines x ld, padding included.
std::uint64_t buffer_elements(const Matrix& x);

// One line of a plan: what it holds and its bytes.
struct MemoryItem {
  std::string what;
  std::uint64_t bytes = 0;
};

struct MemoryPlan {
  Shape shape{0, 0, 0};
  VerifyMode verification = VerifyMode::None;
  std::string why_sampled;  // why not the full reference, when sampled
  std::vector<MemoryItem> host, device;  // device: empty on the CPU backend
  std::uint64_t host_bytes() const;
  std::uint64_t device_bytes() const;
};

// Where a run happens, as far as its memory goes.
struct MemoryTarget {
  Backend backend = Backend::Cpu;
  std::uint64_t flush_bytes = 0;  // the CUDA executor's L2 flush buffer; 0 on the CPU
};

// What the machine offers a run; an absent value is not known, and that side is not checked.
struct MemoryAvailable {
  std::optional<std::uint64_t> host;         // host_memory_available()
  std::optional<std::uint64_t> device_free;  // free on the run's device now
  std::uint64_t device_total = 0;            // the device's memory, for the advice; 0: not known
  // What the executor already holds (its flush buffer): counted in the plan, so given back
  // to what is free.
  std::uint64_t device_held = 0;
  std::optional<std::uint64_t> device_limit;  // --device-memory-limit
  std::string device_name;                    // "device 0 (NVIDIA H100 80GB HBM3)"
  // What a run may use on the device: min(limit, free + held); absent when neither is known.
  std::optional<std::uint64_t> device() const;
};

// One shape's bytes, verified as `mode` says. `workspaces` (one entry per selected rung,
// grown here to this shape's workspace) carries what earlier shapes left allocated: a rung's
// workspace stays until the run ends, grown to the largest shape it saw.
MemoryPlan plan_shape(const Options& options, const Shape& shape, const std::vector<Variant>& selected,
                      const MemoryTarget& target, VerifyMode mode, std::vector<std::uint64_t>* workspaces = nullptr);

// The device workspace rung `v` keeps for `shape`, as an upper bound (0 for a rung that
// keeps none): the padded or K-major operand copies its prepare() sizes, two parts of each
// for a split (3xTF32) rung, or the pitched copies the pitched rung makes; for auto, the
// largest of the rungs it may choose.
std::uint64_t workspace_bound(const Variant& v, const Options& options, const Shape& shape);

// Every shape of `options`: verified in full where the reference is quick enough (a GPU
// reference, or at most options.host_reference_max_fmas on the host) and the run with it fits
// (kFullReferenceHostShare of the host, all of the device), else at a sample.
std::vector<MemoryPlan> plan_run(const Options& options, const std::vector<Variant>& selected,
                                 const MemoryTarget& target, const MemoryAvailable& available);

// Ok, or AllocFailed whose message names the first shape that does not fit, the bytes it
// needs (item by item) and those available, and what would make it fit.
Status check_plans(const Options& options, const std::vector<Variant>& selected, const MemoryTarget& target,
                   const MemoryAvailable& available, const std::vector<MemoryPlan>& plans);

// What `executor`'s machine offers now: the host's available memory and, on a GPU, the free
// memory of the executor's device (the thread's current one), capped by
// options.device_memory_limit; and the target of the plan.
Status measure_memory(const Options& options, Executor& executor, MemoryTarget& target, MemoryAvailable& available);

// The whole check, as bench, verify and explain make it before anything is allocated.
struct MemoryCheck {
  MemoryTarget target;
  MemoryAvailable available;
  std::vector<MemoryPlan> plans;  // one per shape of the options
};
Status check_memory(const Options& options, Executor& executor, MemoryCheck& out);

// Bytes for people, in powers of 1000 as the message's sums are: "120.0 GB", "512 bytes".
std::string format_bytes(std::uint64_t bytes);

}  // namespace gemmlab::bench
