// The harness: builds each problem, verifies every selected rung against the float64
// reference, and times it (warm-up, repetitions until a count and a time, median).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/executor.hpp"
#include "core/verify.hpp"
#include "gemmlab/problem.hpp"
#include "gemmlab/out_of_core.hpp"
#include "gemmlab/variant.hpp"

namespace gemmlab::bench {

struct Record;

struct Shape {
  std::int64_t m, n, k;
};

// What a long run is doing now, for a progress line: the phase, the rung and the problem, how
// far the phase has come and about how long it has left.
struct Progress {
  enum class Phase { Reference, Verify, Time, Profile };
  Phase phase = Phase::Reference;
  std::string variant;  // empty for the reference
  Shape shape{0, 0, 0};
  int done = 0, total = 0;   // rungs verified of the shape's; repetitions timed of those wanted
  double eta_seconds = -1;   // what this phase of this shape has left; < 0: not known yet
};
std::string_view to_string(Progress::Phase phase);

// A run with no GPU reference verifies a shape against its full float64 reference on the
// host up to this many multiply-adds (4096^3: tens of seconds on a few cores), and at a
// sample of C's elements beyond (memory_plan.hpp).
inline constexpr double kHostReferenceMaxFmas = 4096.0 * 4096.0 * 4096.0;

struct Options {
  // The --dtype name (types.hpp, precision_for): how A and B are stored and multiplied.
  // Only variants of this precision run; naming one of another is an InvalidValue.
  DType dtype = DType::F32;
  // --out-dtype: how C (and beta's C0) is stored: float32, the 2-byte input type itself, or
  // bf16 or f16 beside FP8 inputs (output_allowed); the precision of the run is
  // precision_for(dtype, out_dtype). FP8 inputs are quantised per tensor (run_shape).
  DType out_dtype = DType::F32;
  std::vector<std::string> variants;  // names within the backend; empty = every rung of dtype
  // A named configuration (Variant::configs) every named rung runs; empty: each its default.
  std::string config;
  std::vector<Shape> shapes;
  Op op_a = Op::N, op_b = Op::N;
  Layout layout = Layout::RowMajor;
  double alpha = 1.0, beta = 0.0;
  std::int64_t ld_padding = 0;  // extra elements in every leading dimension
  std::uint64_t seed = 0;
  bool verify = true;
  bool time = true;
  // Run each rung once, untimed and unverified, inside a named range, for a profiler.
  bool profile = false;
  int warmup = 2;
  // Repetitions: each rung runs at least min_reps times and for at least min_seconds, at most
  // max_reps times; max_seconds > 0 caps a rung's timed time (at least one repetition runs),
  // and a rung it stops short of min_reps or min_seconds is recorded as capped.
  int min_reps = 10;
  int max_reps = 1000;
  double min_seconds = 0.25;
  double max_seconds = 0;  // 0: no cap
  // Interleaved timing (one repetition of every rung per round, the anchor among them) or
  // each rung in turn; empty: interleaved on a GPU, in turn on a CPU (see time_rungs).
  std::optional<bool> interleave;
  // A timed result whose repetitions spread (interquartile range over median) more than this
  // is flagged noisy.
  double max_spread = 0.10;
  CacheFlush flush = CacheFlush::Clean;  // before every timed repetition (executor.hpp)
  // Calls per timed repetition, made one after the other between its two events with nothing
  // between them (the flush comes before the first), as a framework's layers run: each call's
  // launch and start can overlap the one before (programmatic dependent launch on Hopper). The
  // repetition's time is divided by it.
  int back_to_back = 1;
  // The most device memory a run may use (--device-memory-limit): the check made before
  // anything is allocated (memory_plan.hpp) compares a run's bytes with the smaller of this
  // and what the device has free. Absent: what is free. Ignored on the CPU backend.
  std::optional<std::uint64_t> device_memory_limit;
  // The host reference's limit in multiply-adds (kHostReferenceMaxFmas); tests lower it to
  // verify small problems at a sample.
  double host_reference_max_fmas = kHostReferenceMaxFmas;
  // Called at the start of every phase and after every timed repetition.
  std::function<void(const Progress&)> progress;
  // Called once per rung and shape that ran without error, after its timing, while the
  // problem's data is still allocated (explain reads kernel attributes here).
  std::function<void(const GemmProblem&, const Variant&, const Record&)> inspect;
};

struct Timing {
  int reps = 0;
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double spread = 0;  // interquartile range over the median
  bool capped = false;           // max_seconds stopped it short of min_reps or min_seconds
  std::vector<double> samples;   // every repetition in milliseconds, in the order they ran
};

// A multi-thread anchor whose single-thread twin's median time is less than this many times
// its own is "no faster" than the twin: something else had the cores.
inline constexpr double kMinThreadSpeedup = 1.1;
// ... on problems its single-thread twin takes at least this long for (below it, OpenBLAS
// itself runs on one thread).
inline constexpr double kMinThreadedTwinMs = 1.0;

// What an out-of-core job's record adds (bench/out_of_core.hpp): how its operands reached
// the device and what the model says the time is bound by.
struct OutOfCoreFigures {
  std::string mode;  // "out_of_core" (gemmlab's schedule), "cublasxt" or "in_core" (device operands)
  OutOfCorePlan plan;  // out_of_core: the schedule that ran, its model at the measured rates
  int block_dim = 0;   // cublasxt: its blockDim
  bool default_block_dim = false;  // cublasxt: the blockDim a fresh handle has
  std::uint64_t device_memory_limit = 0;  // out_of_core: the limit it was planned under
  // out_of_core: the in-core rung's rate on one of the plan's blocks (device operands) while
  // copies go both ways over the host link (the model's compute rate), and alone.
  double block_flops_per_second = 0;
  double block_alone_flops_per_second = 0;
  // max(compute at the in-core rate, each direction's bytes over its measured bandwidth), ms.
  double bound_ms = 0;
  // Of the time copies and compute would take one after the other, the share hidden: 1 when the
  // run took only the longest of them, 0 when it took their sum.
  double overlap = 0;
};

struct Record {
  std::string backend, variant, technique, config;
  std::string config_name;  // the named configuration that ran (Variant::config_name); empty: one form
  std::string dtype = "f32";  // the --dtype name the variant ran under
  std::string out_dtype = "f32";  // how C was stored (--out-dtype)
  bool anchor = false;
  int threads = 1;
  std::int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  std::string trans, layout;
  double alpha = 1, beta = 0;
  // FP8 inputs: the per-tensor scales the harness quantised A and B with (GemmProblem).
  double scale_a = 1, scale_b = 1;
  std::uint64_t seed = 0;

  std::string status = "ok";  // "ok", "skipped" (can_implement said no) or "error"
  std::string message;        // why, when not ok
  bool verified = false;
  Verification verification;
  // Why the check was made at a sample of C's elements (verification.sampled), for people.
  std::string verification_note;
  bool timed = false;
  bool profiled = false;  // ran once for a profiler (Options::profile)
  Timing timing;
  // Why a measurement should not be taken at its word: a spread above max_spread, a capped
  // timing, a multi-thread anchor no faster than its single-thread twin, a ratio to such an anchor.
  bool noisy = false;
  std::vector<std::string> warnings;
  double gflops = 0;
  std::string anchor_variant;           // which anchor the ratio is against
  std::optional<double> ratio_to_anchor;  // anchor time / this time: > 1 is faster
  Traffic model;
  std::optional<OutOfCoreFigures> out_of_core;  // records of the out-of-core job only

  bool failed() const { return status == "error" || (verified && !verification.passed); }
};

// Runs the selection on `executor`. A rung that cannot take a problem is recorded as
// skipped with its reason; a bad selection (unknown variant, a variant of another dtype,
// a dtype the backend has no variant of) is an InvalidValue status. Before anything is
// allocated, every shape's memory is planned (memory_plan.hpp): a run that cannot fit is
// AllocFailed, saying what it needs and what to do, and a shape whose full float64 reference
// would not fit (or take too long on the host) is verified at a sample of C's elements.
Status run(const Options& options, Executor& executor, std::vector<Record>& records);

// The variants `options` selects on `backend`: the named ones, or every variant of the
// dtype and C type, each bound to options.config where one is named. InvalidValue, naming
// the culprit, for an --out-dtype the dtype does not take, an unknown name, a variant of
// another precision, a precision with no variant on the backend, or a configuration a named
// rung does not have (with the valid ones).
Status select_variants(const Options& options, Backend backend, std::vector<Variant>& out);

// InvalidValue, saying what goes with what, for a --dtype no rung computes in (f64) or an
// --out-dtype that --dtype does not take (output_allowed: f32, the 2-byte input type, bf16 or
// f16 beside FP8 inputs; never an FP8 C).
Status check_dtypes(DType dtype, DType out_dtype);

// Finds the anchor for each record (same backend, dtype, C type and shape; for CPU rungs the
// anchor with the same thread count) and fills ratio_to_anchor.
void attach_anchor_ratios(std::vector<Record>& records);

// Flags noise (see Record::warnings): spreads above max_spread, capped timings, a multi-thread
// anchor that its single-thread twin's time shows no faster (kMinThreadSpeedup), and the
// ratios of rungs to a flagged anchor. Call after attach_anchor_ratios.
void flag_noise(std::vector<Record>& records, const Options& options);

// The fields of a record that the options and the shape decide (types, sizes, leading
// dimensions as the memory plan lays the operands out, transposition, layout, alpha, beta);
// the run fills in the rung and what it measured.
Record shape_record(const Options& options, const Shape& shape);

// Median, min, max, spread and the samples themselves of `samples` (in the order they ran).
Status summarise(const std::vector<double>& samples, Timing& timing);

}  // namespace gemmlab::bench
