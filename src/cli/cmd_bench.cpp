// gemmlab bench and gemmlab verify: select, run through the harness, report.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <fstream>

#include "bench/explain.hpp"
#include "bench/harness.hpp"
#include "bench/lab_report.hpp"
#include "bench/report.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "core/random.hpp"
#include "gemmlab/registry.hpp"

namespace gemmlab::cli {
namespace {

// Default problems: one that shows each technique's effect in seconds on this backend,
// and for verify a set of awkward shapes (1x1x1, primes, tile +- 1, k = 1, skinny).
constexpr std::int64_t kDefaultCpuSize = 1024;
constexpr std::int64_t kDefaultCudaSize = 4096;
const std::vector<bench::Shape> kVerifyShapes = {
    {1, 1, 1}, {127, 131, 257}, {64, 64, 1}, {33, 65, 129}, {1000, 513, 77}, {255, 1, 63}, {1, 300, 31},
};
// Progress goes to stderr once a run has taken this long.
constexpr double kProgressAfterSeconds = 2.0;

Backend pick_backend(const std::string& text) {
  if (text == "auto") return cuda_device_present() ? Backend::Cuda : Backend::Cpu;
  const auto parsed = parse_backend(text);
  if (!parsed) throw UsageError{fmt::format("--backend '{}' must be cpu, cuda or auto", text)};
  return *parsed;
}

}  // namespace

void add_dtype_option(CLI::App& c, std::string& dtype) {
  std::vector<std::string> names;
  for (DType name : kDTypeNames) names.emplace_back(to_string(name));
  c.add_option("--dtype", dtype,
               "Input type: f32 (default), tf32 (f32 storage, tensor-core math), bf16 or f16 (2-byte inputs, "
               "f32 sums); C is f32. Runs the variants of that type and its anchor")
      ->check(CLI::IsMember(names));
}

void check_selection(const bench::Options& o, Backend backend) {
  // A misspelt name first, in the words every command uses for it.
  for (const std::string& name : o.variants)
    if (!find_variant(backend, name))
      throw UsageError{fmt::format("--variants: no {} variant named '{}' (gemmlab list shows them)",
                                   to_string(backend), name)};
  std::vector<Variant> selected;
  if (Status s = bench::select_variants(o, backend, selected); !s) throw UsageError{s.message()};
}

void add_selection_options(CLI::App& c, SelectionArgs& a, bool timing_options) {
  c.add_option("--backend", a.backend, "cpu, cuda or auto (cuda when a GPU is present)");
  add_dtype_option(c, a.dtype);
  c.add_option("--variants", a.variants, "Comma-separated variant names within the backend");
  c.add_option("--config", a.config,
               "Named configuration every rung of --variants runs (gemmlab list --configs shows them; "
               "default: each rung's first, usually auto)");
  c.add_option("--sizes", a.sizes, "Square sizes, e.g. 512,1024")->excludes(
      c.add_option("--mnk", a.mnk, "Shapes MxNxK, e.g. 1000x513x77,64x64x1"));
  c.add_option("--trans", a.trans, "op(A)op(B): NN, NT, TN or TT");
  c.add_option("--layout", a.layout, "row or col (storage of A, B and C)")
      ->check(CLI::IsMember({"row", "col"}));
  c.add_option("--alpha", a.alpha, "alpha");
  c.add_option("--beta", a.beta, "beta (0: C is not read)");
  c.add_option("--pad", a.pad, "Extra elements in every leading dimension")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 20));
  c.add_option("--seed", a.seed, "Seed of the random inputs (default: fresh, printed)");
  c.add_option("--format", a.format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  c.add_option("--output", a.output, "Write the report to this file instead of stdout");
  if (timing_options) {
    c.add_option("--reps", a.reps, "Minimum timed repetitions")->check(CLI::Range(1, 100000));
    c.add_option("--warmup", a.warmup, "Untimed runs before timing")->check(CLI::Range(0, 1000));
    c.add_option("--min-time", a.min_time, "Minimum seconds of timed runs per variant")
        ->check(CLI::Range(0.0, 600.0));
    c.add_option("--l2-flush", a.l2_flush,
                 "GPU L2 before each repetition: clean (default; operands evicted, no dirty lines), write "
                 "(evicted by a memset, as nvbench and Triton do; its dirty lines are written back inside "
                 "the timed kernel) or none (warm)")
        ->check(CLI::IsMember({"clean", "write", "none"}));
    c.add_flag("--no-verify", a.no_verify, "Skip verification (timing only)");
    c.add_flag("--explain", a.explain, "Print each rung's model, roofline bound and occupancy beside it");
  }
}

int run_bench(const SelectionArgs& args, bool verify_only) {
  const Backend backend = pick_backend(args.backend);
  bench::Options o;
  if (!args.variants.empty()) o.variants = parse_names(args.variants);
  o.config = args.config;
  if (!args.sizes.empty()) o.shapes = parse_sizes(args.sizes);
  else if (!args.mnk.empty()) o.shapes = parse_mnk(args.mnk);
  else if (verify_only) o.shapes = kVerifyShapes;
  else {
    const std::int64_t n = backend == Backend::Cuda ? kDefaultCudaSize : kDefaultCpuSize;
    o.shapes = {{n, n, n}};
  }
  parse_trans(args.trans, o.op_a, o.op_b);
  o.layout = *parse_layout(args.layout);
  o.dtype = *parse_dtype(args.dtype);  // CLI11 checked the name
  o.alpha = args.alpha;
  o.beta = args.beta;
  o.ld_padding = args.pad;
  o.seed = args.seed != 0 ? args.seed : fresh_seed();
  o.verify = !args.no_verify;
  o.time = !verify_only;
  if (args.reps > 0) {
    o.min_reps = args.reps;
    o.max_reps = std::max(o.max_reps, args.reps);
  }
  if (args.warmup >= 0) o.warmup = args.warmup;
  if (args.min_time >= 0) o.min_seconds = args.min_time;
  o.flush = *parse_cache_flush(args.l2_flush);  // CLI11 checked the name

  std::unique_ptr<Executor> executor;
  if (backend == Backend::Cpu) {
    executor = make_cpu_executor();
  } else if (Status s = make_cuda_executor(executor); !s) {
    fmt::print(stderr, "gemmlab: --backend cuda: {}\n", s.describe());
    return kExitFailure;
  }
  // A misspelt name or a variant of another dtype is a usage error, reported alone:
  // before the seed line is printed and before --output is created.
  check_selection(o, backend);

  // Open the output before running: a bad path should fail before minutes of benchmarking.
  std::FILE* out = stdout;
  if (!args.output.empty()) {
    out = std::fopen(args.output.c_str(), "w");
    if (!out) {
      fmt::print(stderr, "gemmlab: cannot write --output '{}'\n", args.output);
      return kExitFailure;
    }
  }
  const auto close_output = [&] {
    if (out != stdout) std::fclose(out);
  };

  const auto start = std::chrono::steady_clock::now();
  o.progress = [start](const std::string& what) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (seconds >= kProgressAfterSeconds) fmt::print(stderr, "[{:6.1f} s] {}\n", seconds, what);
  };
  if (args.format == "table") fmt::print(stderr, "seed {}\n", o.seed);

  std::vector<bench::Record> records;
  std::vector<bench::Explanation> explanations;
  bench::ExplainContext explain_context;
  const Status ran = args.explain ? bench::explain(o, *executor, explain_context, explanations)
                                  : bench::run(o, *executor, records);
  for (const bench::Explanation& e : explanations) records.push_back(e.record);
  if (Status s = ran; !s) {
    fmt::print(stderr, "gemmlab: {}\n", s.describe());
    close_output();
    return s.code() == StatusCode::InvalidValue ? kExitUsage : kExitFailure;
  }

  bench::RunContext context{verify_only ? "verify" : "bench", std::string(to_string(backend)),
                            executor->describe(), o};
  if (args.format == "json") {
    nlohmann::json doc = bench::to_json(records, context);
    if (args.explain) bench::attach_explanations(doc, explanations, explain_context);
    fmt::print(out, "{}\n", doc.dump(2));
  } else if (args.format == "csv") {
    fmt::print(out, "{}", bench::format_csv(records));
  } else {
    fmt::print(out, "{}", bench::format_table(records, context));
    if (args.explain) fmt::print(out, "{}", bench::format_explain_table(explanations, explain_context));
  }
  close_output();

  int failures = 0;
  for (const bench::Record& r : records)
    if (r.failed()) ++failures;
  if (failures > 0) {
    fmt::print(stderr, "gemmlab: {} of {} runs failed (seed {})\n", failures, records.size(), o.seed);
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace gemmlab::cli
