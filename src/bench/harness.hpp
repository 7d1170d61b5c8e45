// The harness: builds each problem, verifies every selected rung against the float64
// reference, and times it (warm-up, repetitions until a count and a time, median).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/executor.hpp"
#include "core/verify.hpp"
#include "gemmlab/problem.hpp"
#include "gemmlab/variant.hpp"

namespace gemmlab::bench {

struct Record;

struct Shape {
  std::int64_t m, n, k;
};

struct Options {
  // The --dtype name (types.hpp, precision_for): how A and B are stored and multiplied.
  // Only variants of this precision run; naming one of another is an InvalidValue.
  DType dtype = DType::F32;
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
  int warmup = 2;
  int min_reps = 10;
  int max_reps = 1000;
  int floor_reps = 3;              // a slow rung stops after max_seconds once it has these
  double min_seconds = 0.25;
  double max_seconds = 3.0;
  CacheFlush flush = CacheFlush::Clean;  // before every timed repetition (executor.hpp)
  // Progress for runs longer than a few seconds: the CLI prints it on stderr.
  std::function<void(const std::string&)> progress;
  // Called once per rung and shape that ran without error, after its timing, while the
  // problem's data is still allocated (explain reads kernel attributes here).
  std::function<void(const GemmProblem&, const Variant&, const Record&)> inspect;
};

struct Timing {
  int reps = 0;
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double spread = 0;  // interquartile range over the median
};

struct Record {
  std::string backend, variant, technique, config;
  std::string config_name;  // the named configuration that ran (Variant::config_name); empty: one form
  std::string dtype = "f32";  // the --dtype name the variant ran under
  bool anchor = false;
  int threads = 1;
  std::int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  std::string trans, layout;
  double alpha = 1, beta = 0;
  std::uint64_t seed = 0;

  std::string status = "ok";  // "ok", "skipped" (can_implement said no) or "error"
  std::string message;        // why, when not ok
  bool verified = false;
  Verification verification;
  bool timed = false;
  Timing timing;
  double gflops = 0;
  std::string anchor_variant;           // which anchor the ratio is against
  std::optional<double> ratio_to_anchor;  // anchor time / this time: > 1 is faster
  Traffic model;

  bool failed() const { return status == "error" || (verified && !verification.passed); }
};

// Runs the selection on `executor`. A rung that cannot take a problem is recorded as
// skipped with its reason; a bad selection (unknown variant, a variant of another dtype,
// a dtype the backend has no variant of) is an InvalidValue status.
Status run(const Options& options, Executor& executor, std::vector<Record>& records);

// The variants `options` selects on `backend`: the named ones, or every variant of the
// dtype, each bound to options.config where one is named. InvalidValue, naming the
// culprit, for an unknown name, a variant of another dtype, a dtype with no variant on the
// backend, or a configuration a named rung does not have (with the valid ones).
Status select_variants(const Options& options, Backend backend, std::vector<Variant>& out);

// Finds the anchor for each record (same backend, dtype and shape; for CPU rungs the
// anchor with the same thread count) and fills ratio_to_anchor.
void attach_anchor_ratios(std::vector<Record>& records);

}  // namespace gemmlab::bench
