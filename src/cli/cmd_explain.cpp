// gemmlab explain VARIANT --mnk MxNxK: a rung's analytic model next to its measurement.
#include <fmt/format.h>

#include <cstdio>

#include "bench/explain.hpp"
#include "bench/lab_report.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "core/random.hpp"
#include "gemmlab/registry.hpp"

namespace gemmlab::cli {
namespace {

constexpr std::int64_t kDefaultCpuSize = 1024;
constexpr std::int64_t kDefaultCudaSize = 4096;

}  // namespace

void add_explain_options(CLI::App& c, ExplainArgs& a) {
  c.add_option("variant", a.variants, "Variant name(s) within the backend, comma-separated")->required();
  c.add_option("--backend", a.backend, "cpu, cuda or auto (cuda when a GPU is present)");
  add_dtype_option(c, a.dtype);
  c.add_option("--config", a.config, "Named configuration of the rung(s) (gemmlab list --configs shows them)");
  c.add_option("--mnk", a.mnk, "Shapes MxNxK, e.g. 4096x4096x4096 (default: 4096^3 on cuda, 1024^3 on cpu)");
  c.add_option("--trans", a.trans, "op(A)op(B): NN, NT, TN or TT");
  c.add_option("--layout", a.layout, "row or col")->check(CLI::IsMember({"row", "col"}));
  c.add_option("--seed", a.seed, "Seed of the random inputs (default: fresh)");
  c.add_option("--reps", a.reps, "Minimum timed repetitions")->check(CLI::Range(1, 100000));
  c.add_option("--format", a.format, "table or json")->check(CLI::IsMember({"table", "json"}));
  c.add_option("--output", a.output, "Write the report to this file instead of stdout");
  c.add_flag("--no-verify", a.no_verify, "Skip verification (timing only)");
}

Backend pick_explain_backend(const std::string& text) {
  if (text == "auto") return cuda_device_present() ? Backend::Cuda : Backend::Cpu;
  const auto parsed = parse_backend(text);
  if (!parsed) throw UsageError{fmt::format("--backend '{}' must be cpu, cuda or auto", text)};
  return *parsed;
}

int run_explain(const ExplainArgs& args) {
  const Backend backend = pick_explain_backend(args.backend);
  bench::Options o;
  o.variants = parse_names(args.variants);
  o.config = args.config;
  if (!args.mnk.empty()) o.shapes = parse_mnk(args.mnk);
  else {
    const std::int64_t n = backend == Backend::Cuda ? kDefaultCudaSize : kDefaultCpuSize;
    o.shapes = {{n, n, n}};
  }
  parse_trans(args.trans, o.op_a, o.op_b);
  o.layout = *parse_layout(args.layout);
  o.dtype = *parse_dtype(args.dtype);  // CLI11 checked the name
  o.seed = args.seed != 0 ? args.seed : fresh_seed();
  o.verify = !args.no_verify;
  if (args.reps > 0) {
    o.min_reps = args.reps;
    o.max_reps = std::max(o.max_reps, args.reps);
  }
  check_selection(o, backend);

  std::unique_ptr<Executor> executor;
  if (backend == Backend::Cpu) {
    executor = make_cpu_executor();
  } else if (Status s = make_cuda_executor(executor); !s) {
    fmt::print(stderr, "gemmlab explain: --backend cuda: {}\n", s.describe());
    return kExitFailure;
  }
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
  if (args.format == "table") fmt::print(stderr, "seed {}\n", o.seed);

  bench::ExplainContext context;
  std::vector<bench::Explanation> explanations;
  if (Status s = bench::explain(o, *executor, context, explanations); !s) {
    fmt::print(stderr, "gemmlab explain: {}\n", s.describe());
    close_output();
    return s.code() == StatusCode::InvalidValue ? kExitUsage : kExitFailure;
  }
  if (args.format == "json")
    fmt::print(out, "{}\n", bench::explain_json(explanations, context).dump(2));
  else
    fmt::print(out, "{}", bench::format_explain_table(explanations, context));
  close_output();
  for (const bench::Explanation& e : explanations)
    if (e.record.failed()) {
      fmt::print(stderr, "gemmlab explain: {} failed (seed {})\n", e.record.variant, o.seed);
      return kExitFailure;
    }
  return kExitOk;
}

}  // namespace gemmlab::cli
