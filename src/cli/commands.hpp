// The subcommands of the gemmlab program. Only this layer prints and picks exit codes.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "bench/harness.hpp"

namespace gemmlab::cli {

enum ExitCode : int { kExitOk = 0, kExitFailure = 1, kExitUsage = 2 };

// The selection shared by bench and verify.
struct SelectionArgs {
  std::string backend = "auto";
  std::string dtype = "f32";  // --dtype: f32, tf32, bf16 or f16
  std::string variants;
  std::string config;  // --config: a named configuration of the rungs in --variants
  std::string sizes;
  std::string mnk;
  std::string trans = "NN";
  std::string layout = "row";
  double alpha = 1.0;
  double beta = 0.0;
  std::int64_t pad = 0;
  std::uint64_t seed = 0;  // 0: a fresh seed, printed
  int reps = 0;            // 0: the harness's default minimum
  int warmup = -1;         // -1: the harness's default
  double min_time = -1;    // seconds; -1: the harness's default
  std::string l2_flush = "clean";  // --l2-flush: clean, write or none (CacheFlush)
  std::string format = "table";
  std::string output;
  bool no_verify = false;
  bool explain = false;  // bench --explain: the model next to each measurement
};

// gemmlab explain VARIANT.
struct ExplainArgs {
  std::string variants;
  std::string config;
  std::string backend = "auto";
  std::string dtype = "f32";
  std::string mnk;
  std::string trans = "NN";
  std::string layout = "row";
  std::uint64_t seed = 0;
  int reps = 0;
  std::string format = "table";
  std::string output;
  bool no_verify = false;
};

// gemmlab mem.
struct MemArgs {
  std::string experiments;
  std::string format = "table";
  std::string output;
  int reps = 0;     // 0: the lab's default
  int warmup = -1;  // -1: the lab's default
  bool list = false;
};

void add_selection_options(CLI::App& command, SelectionArgs& args, bool timing_options);
// --dtype on `command`, restricted to the names precision_for() knows.
void add_dtype_option(CLI::App& command, std::string& dtype);
// The variants `options` selects on `backend` exist and compute its dtype; otherwise a
// UsageError naming the culprit (an unknown name, a variant of another dtype, a dtype
// without variants on the backend).
void check_selection(const bench::Options& options, Backend backend);

// with_configs: each rung's named configurations under it (and in the JSON).
int run_list(const std::string& backend, const std::string& format, bool with_configs);
// verify_only: the verify subcommand (correctness only, awkward default shapes).
int run_bench(const SelectionArgs& args, bool verify_only);

void add_explain_options(CLI::App& command, ExplainArgs& args);
int run_explain(const ExplainArgs& args);
int run_device(const std::string& format);
int run_mem(const MemArgs& args);

}  // namespace gemmlab::cli
