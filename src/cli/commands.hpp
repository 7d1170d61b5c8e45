// The subcommands of the gemmlab program. Only this layer prints and picks exit codes.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/harness.hpp"
#include "bench/memory_plan.hpp"
#include "cli/options.hpp"

namespace gemmlab::cli {

enum ExitCode : int { kExitOk = 0, kExitFailure = 1, kExitUsage = 2 };

// The selection shared by bench and verify. Text values are checked by run_bench, so each
// error names its flag and the valid range; an absent optional is the flag not given.
struct SelectionArgs {
  std::string command_line;  // the whole command line, for the stderr line and the JSON
  std::string backend = "auto";
  std::optional<int> device;  // --device: a CUDA ordinal (absent: 0)
  std::string dtype = "f32";  // --dtype: f32, tf32, bf16 or f16
  std::string out_dtype = "f32";  // --out-dtype: f32, or bf16 or f16 with that --dtype
  std::optional<std::string> variants;
  std::string config;  // --config: a named configuration of the rungs in --variants
  std::optional<std::string> sizes;
  std::optional<std::string> mnk;
  std::optional<std::string> shapes;  // --shapes: a named set (bench/shape_sets.hpp)
  std::string trans = "NN";
  std::string layout = "row";
  std::optional<std::string> alpha, beta;
  std::int64_t pad = 0;
  std::optional<std::string> seed;  // absent: a fresh seed, printed
  int reps = 0;            // 0: the harness's default minimum
  int warmup = -1;         // -1: the harness's default
  double min_time = -1;    // seconds; -1: the harness's default
  double max_time = 0;     // seconds; 0: no cap
  double max_spread = -1;  // percent; -1: the harness's default
  int back_to_back = 0;    // calls per timed repetition; 0: the harness's default (1)
  std::string interleave = "auto";  // auto, on or off
  std::optional<std::string> l2_flush;  // --l2-flush: clean, write or none (CacheFlush); GPU only
  std::optional<std::string> device_memory_limit;  // --device-memory-limit: bytes, "8G"; GPU only
  std::string format = "table";
  std::string output;
  bool no_verify = false;
  bool explain = false;   // bench --explain: the model next to each measurement
  bool samples = false;   // every repetition's time in the JSON
  bool profile = false;   // each rung once, untimed, for a profiler
  bool progress = false;  // progress lines on stderr even when it is not a terminal
  bool dry_run = false;   // check the command line and say what would run, then stop
  // bench --out-of-core: host operands streamed through the GPU (bench/out_of_core.hpp), with
  // --variants naming the in-core rungs and --xt-block-dims cublasXt's blockDims.
  bool out_of_core = false;
  std::optional<std::string> xt_block_dims;
  bool out_of_core_anchors = true;  // false: the schedules and their models alone (explain)
  // bench --gpus N | --devices LIST: the distributed job (bench/distributed.hpp).
  DistributedArgs distributed;
};

// gemmlab explain VARIANT.
struct ExplainArgs {
  std::string variants;
  std::string config;
  std::string backend = "auto";
  std::optional<int> device;
  std::string dtype = "f32";
  std::string out_dtype = "f32";
  std::optional<std::string> mnk;
  std::string trans = "NN";
  std::string layout = "row";
  std::optional<std::string> seed;
  std::optional<std::string> device_memory_limit;  // --device-memory-limit: bytes, "8G"; GPU only
  int reps = 0;
  std::string format = "table";
  std::string output;
  bool no_verify = false;
  bool progress = false;
  bool dry_run = false;
  bool out_of_core = false;  // explain --out-of-core: each schedule's model beside its run
  // explain --distributed --gpus N: each distributed run's plan and model beside its run.
  bool distributed = false;
  DistributedArgs gpus;
  std::string command_line;
};

// gemmlab mem.
struct MemArgs {
  std::optional<int> device;
  std::optional<std::string> experiments;
  std::string format = "table";
  std::string output;
  int reps = 0;     // 0: the lab's default
  int warmup = -1;  // -1: the lab's default
  bool list = false;
};

// gemmlab device.
struct DeviceArgs {
  std::optional<int> device;
  bool all = false;  // every visible device, facts and peaks, nothing measured
  std::string format = "table";
  std::string output;
};

// gemmlab compare OLD.json NEW.json.
struct CompareArgs {
  std::string old_path, new_path;
  std::string format = "table";  // table, markdown or json
  std::string metric = "auto";   // auto (ratio where both runs have one, else time), ratio or time
  double threshold = 2;          // percent: a change smaller than this is no change
  std::string output;
};

void add_selection_options(CLI::App& command, SelectionArgs& args, bool timing_options);
// A check for a finite number in [low, high]: CLI11's Range lets NaN through.
CLI::Validator finite_range(double low, double high);
// "64x64x64, 1000x513x77"
std::string shapes_text(const std::vector<bench::Shape>& shapes);
// The run's first stderr line: its seed and how to replay it.
void print_seed_line(std::uint64_t seed, const std::string& command_line, bool seed_given);
// Progress lines on stderr: on a terminal (after the first seconds), or always with `forced`.
std::function<void(const bench::Progress&)> progress_printer(bool forced);
// --dtype on `command`, restricted to the names precision_for() knows, and --out-dtype
// (f32, bf16 or f16; an FP8 name is refused with kFp8OutputRefusal): which goes with which is
// checked by apply_dtypes.
void add_dtype_option(CLI::App& command, std::string& dtype, std::string& out_dtype);
// --dtype and --out-dtype into `options`: a UsageError naming both flags for a pair that
// output_allowed() refuses.
void apply_dtypes(const std::string& dtype, const std::string& out_dtype, bench::Options& options);
// "bf16", or "bf16 (C in bf16)" where C is not float32: the types of a run, for people.
std::string types_text(const bench::Options& options);
// The variants `options` selects on `backend` exist and compute its dtype; otherwise a
// UsageError naming the culprit (an unknown name, a variant of another dtype, a dtype
// without variants on the backend).
void check_selection(const bench::Options& options, Backend backend);

// --device-memory-limit TEXT into options.device_memory_limit: a UsageError for text that is
// not a size, or for a backend other than cuda (the CPU has no device memory to cap).
void apply_device_memory_limit(const std::optional<std::string>& text, Backend backend, bench::Options& options);
// The check made before anything is allocated (bench/memory_plan.hpp). With --dry-run it
// prints each shape's bytes and how it would be verified. A run that cannot fit is refused:
// the message on stderr (after `prefix`) and the exit code returned; nullopt: go on.
std::optional<int> check_memory_or_refuse(const bench::Options& options, Executor& executor, bool dry_run,
                                          const std::string& prefix, bench::MemoryCheck& out);

// What every report of bench says of its run: the command, device, settings, when and where.
bench::RunContext report_context(const SelectionArgs& args, const std::string& command, Backend backend,
                                 const Executor& executor, const bench::Options& options, const std::string& started);
// bench --out-of-core and bench --gpus/--devices (cmd_bench_jobs.cpp): their own jobs, with
// the options run_bench parsed; each returns the process's exit code.
int run_out_of_core_bench(const SelectionArgs& args, bench::Options& options, Backend backend,
                          std::optional<double> device_memory_share, bool seed_given);
int run_distributed_bench(const SelectionArgs& args, bench::Options& options, bool seed_given, bool shapes_given);

// with_configs: each rung's named configurations under it (and in the JSON).
int run_list(const std::string& backend, const std::string& format, bool with_configs);
// verify_only: the verify subcommand (correctness only, awkward default shapes).
int run_bench(const SelectionArgs& args, bool verify_only);

void add_explain_options(CLI::App& command, ExplainArgs& args);
int run_explain(const ExplainArgs& args);
// --device N on `command`: a CUDA ordinal among the visible devices (CUDA_VISIBLE_DEVICES
// applies), checked against the device count when the device is chosen.
CLI::Option* add_device_option(CLI::App& command, std::optional<int>& device);
// --device with a backend that is not cuda: a UsageError (the CPU has no devices to choose).
void check_device_applies(const std::optional<int>& device, Backend backend);
// The backend of --backend TEXT: auto is cuda when a GPU is present or --device names one.
Backend pick_backend(const std::string& text, const std::optional<int>& device);
// A Status from choosing --device (make_cuda_executor, measure_ceilings, run_mem) as the
// CLI says it: the flag named where the ordinal was out of range.
std::string device_error_text(const Status& s, const std::optional<int>& device);

int run_device(const DeviceArgs& args);
int run_mem(const MemArgs& args);
void add_compare_options(CLI::App& command, CompareArgs& args);
int run_compare(const CompareArgs& args);

}  // namespace gemmlab::cli
