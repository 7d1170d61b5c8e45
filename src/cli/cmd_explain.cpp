// gemmlab explain VARIANT --mnk MxNxK: a rung's analytic model next to its measurement (with
// --out-of-core or --distributed: that schedule's model beside its run).
#include <fmt/format.h>

#include <cstdio>

#include "bench/explain.hpp"
#include "bench/lab_report.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/output_file.hpp"
#include "core/random.hpp"
#include "gemmlab/registry.hpp"

namespace gemmlab::cli {
namespace {

constexpr std::int64_t kDefaultCpuSize = 1024;
constexpr std::int64_t kDefaultCudaSize = 4096;
// explain --distributed: a problem whose panels' broadcasts and products both take time.
constexpr std::int64_t kDefaultDistributedSize = 16384;

// explain --out-of-core and --distributed run the bench job of that name without its anchors
// (each run, its model and its measurement), as explain's options say: the settings both
// share; `size` the side of --mnk's default cube.
SelectionArgs bench_job(const ExplainArgs& args, std::int64_t size, int warmup) {
  SelectionArgs job;
  job.command_line = args.command_line;
  job.backend = args.backend;
  job.device = args.device;
  job.dtype = args.dtype;
  job.out_dtype = args.out_dtype;
  job.variants = args.variants;
  job.config = args.config;
  job.mnk = args.mnk.value_or(fmt::format("{0}x{0}x{0}", size));
  job.trans = args.trans;
  job.layout = args.layout;
  job.seed = args.seed;
  job.reps = args.reps > 0 ? args.reps : 3;
  job.warmup = warmup;
  job.min_time = 0;
  job.device_memory_limit = args.device_memory_limit;
  job.format = args.format;
  job.output = args.output;
  job.no_verify = args.no_verify;
  job.progress = args.progress;
  job.dry_run = args.dry_run;
  return job;
}

}  // namespace

void add_explain_options(CLI::App& c, ExplainArgs& a) {
  c.add_option("variant", a.variants, "Variant name(s) within the backend, comma-separated")->required();
  c.add_option("--backend", a.backend, "cpu, cuda or auto (cuda when a GPU is present)");
  add_device_option(c, a.device);
  add_dtype_option(c, a.dtype, a.out_dtype);
  c.add_option("--config", a.config, "Named configuration of the rung(s) (gemmlab list --configs shows them)");
  c.add_option_function<std::string>(
      "--mnk", [&a](const std::string& v) { a.mnk = v; },
      "Shapes MxNxK, e.g. 4096x4096x4096 (default: 4096^3 on cuda, 1024^3 on cpu)");
  c.add_option("--trans", a.trans, "op(A)op(B): NN, NT, TN or TT");
  c.add_option("--layout", a.layout, "row or col")->check(CLI::IsMember({"row", "col"}));
  c.add_option_function<std::string>(
      "--seed", [&a](const std::string& v) { a.seed = v; }, "Seed of the random inputs, 0 to 2^64-1 (default: fresh)");
  c.add_option("--reps", a.reps, "Minimum timed repetitions")->check(CLI::Range(1, 100000));
  c.add_option_function<std::string>(
      "--device-memory-limit", [&a](const std::string& v) { a.device_memory_limit = v; },
      "Most device memory the run may use, e.g. 8G (as bench takes it). CUDA only");
  c.add_option("--format", a.format, "table or json")->check(CLI::IsMember({"table", "json"}));
  c.add_option("--output", a.output, "Write the report to this file instead of stdout (written whole)");
  c.add_flag("--no-verify", a.no_verify, "Skip verification (timing only)");
  c.add_flag("--progress", a.progress, "Progress lines on stderr even when it is not a terminal");
  c.add_flag("--dry-run", a.dry_run, "Check the command line, say what would run, and stop");
  CLI::Option* out_of_core =
      c.add_flag("--out-of-core", a.out_of_core,
                 "The out-of-core schedule with VARIANT computing its tiles: the model (time bound, bytes per block, "
                 "overlap) beside the run; --device-memory-limit also takes a share of the problem, e.g. 25%");
  CLI::Option* distributed = c.add_flag(
      "--distributed", a.distributed,
      "The distributed GEMM over --gpus N (or --devices LIST) with VARIANT computing every GPU's products: the plan "
      "(grid, panels, bytes per GPU) and its model (compute per GPU at the rung's measured rate against the panel "
      "bytes over the measured link) beside the run; no anchors (default --mnk 16384x16384x16384)");
  distributed->excludes(out_of_core);
  DistributedArgs& d = a.gpus;
  CLI::Option* gpus = c.add_option_function<std::string>(
      "--gpus", [&d](const std::string& v) { d.gpus = v; }, "With --distributed: the first N visible GPUs");
  CLI::Option* devices = c.add_option_function<std::string>(
      "--devices", [&d](const std::string& v) { d.devices = v; }, "With --distributed: these GPUs, e.g. 0,1");
  CLI::Option* decompositions = c.add_option_function<std::string>(
      "--decompositions", [&d](const std::string& v) { d.decompositions = v; },
      "With --distributed: rows, summa or both (default rows,summa)");
  gpus->excludes(devices);
  for (CLI::Option* one : {gpus, devices, decompositions}) one->needs(distributed);
}

int run_explain(const ExplainArgs& args) {
  if (args.distributed) {
    if (!args.gpus.requested()) throw UsageError{"--distributed needs --gpus N or --devices LIST"};
    if (args.device) throw UsageError{"--distributed runs on --gpus or --devices, not --device"};
    // One warm-up call: the first makes the communicators. No --device (refused above).
    SelectionArgs job = bench_job(args, kDefaultDistributedSize, 1);
    job.distributed = args.gpus;
    job.distributed.anchors = false;
    return run_bench(job, false);
  }
  if (args.out_of_core) {
    SelectionArgs job = bench_job(args, kDefaultCudaSize, 0);
    job.out_of_core = true;
    job.out_of_core_anchors = false;
    return run_bench(job, false);
  }
  const Backend backend = pick_backend(args.backend, args.device);
  check_device_applies(args.device, backend);
  bench::Options o;
  o.variants = parse_names(args.variants, "explain VARIANT");
  o.config = args.config;
  if (args.mnk) o.shapes = parse_mnk(*args.mnk);
  else {
    const std::int64_t n = backend == Backend::Cuda ? kDefaultCudaSize : kDefaultCpuSize;
    o.shapes = {{n, n, n}};
  }
  parse_trans(args.trans, o.op_a, o.op_b);
  o.layout = *parse_layout(args.layout);
  apply_dtypes(args.dtype, args.out_dtype, o);
  const bool seed_given = args.seed.has_value();
  o.seed = seed_given ? parse_seed(*args.seed) : fresh_seed();
  o.verify = !args.no_verify;
  apply_device_memory_limit(args.device_memory_limit, backend, o);
  if (args.reps > 0) {
    o.min_reps = args.reps;
    o.max_reps = std::max(o.max_reps, args.reps);
  }
  // No CUDA here is said first, as bench says it: a rung name cannot be checked without the backend.
  std::unique_ptr<Executor> executor;
  if (backend == Backend::Cpu) {
    executor = make_cpu_executor();
  } else if (Status s = make_cuda_executor(executor, args.device.value_or(0)); !s) {
    fmt::print(stderr, "gemmlab explain: --backend cuda: {}\n", device_error_text(s, args.device));
    return s.code() == StatusCode::InvalidValue ? kExitUsage : kExitFailure;
  }
  check_selection(o, backend);
  bench::MemoryCheck memory;
  if (args.dry_run) {
    fmt::print("gemmlab explain would run on {}: {} on {}\n", to_string(backend), args.variants, shapes_text(o.shapes));
    return check_memory_or_refuse(o, *executor, true, "gemmlab explain: ", memory).value_or(kExitOk);
  }
  OutputFile out;
  if (!out.open_or_report(args.output)) return kExitFailure;
  o.progress = progress_printer(args.progress);
  print_seed_line(o.seed, args.command_line, seed_given);
  // Before the ceilings are measured and anything is allocated.
  if (const auto refused = check_memory_or_refuse(o, *executor, false, "gemmlab explain: ", memory)) return *refused;

  bench::ExplainContext context;
  std::vector<bench::Explanation> explanations;
  if (Status s = bench::explain(o, *executor, context, explanations); !s) {
    fmt::print(stderr, "gemmlab explain: {}\n", s.describe());
    return s.code() == StatusCode::InvalidValue ? kExitUsage : kExitFailure;
  }
  if (args.format == "json")
    fmt::print(out.stream(), "{}\n", bench::explain_json(explanations, context).dump(2));
  else
    fmt::print(out.stream(), "{}", bench::format_explain_table(explanations, context));
  if (!out.commit_or_report()) return kExitFailure;
  for (const bench::Explanation& e : explanations)
    if (e.record.failed()) {
      fmt::print(stderr, "gemmlab explain: {} failed (seed {})\n", e.record.variant, o.seed);
      return kExitFailure;
    }
  return kExitOk;
}

}  // namespace gemmlab::cli
