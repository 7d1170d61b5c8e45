// gemmlab mem: the memory lab's experiments, each a verified sweep against the copy
// ceiling of the same run.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "bench/lab_report.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/output_file.hpp"
#include "cuda/lab.hpp"

namespace gemmlab::cli {

int run_mem(const MemArgs& args) {
  if (args.list) {
    const auto list = cuda::mem_experiments();
    if (list.empty()) fmt::print("no memory-lab experiments: this build has no CUDA backend\n");
    for (const cuda::MemExperimentInfo& e : list) fmt::print("{:<12} {}\n{:<12} {}\n", e.name, e.title, "", e.shows);
    return kExitOk;
  }
  cuda::MemOptions o;
  o.device = args.device.value_or(0);
  if (args.experiments) o.experiments = parse_names(*args.experiments, "--experiments");
  if (args.reps > 0) o.timing.reps = args.reps;
  if (args.warmup >= 0) o.timing.warmup = args.warmup;
  const auto start = std::chrono::steady_clock::now();
  o.progress = [start](const std::string& what) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print(stderr, "[{:6.1f} s] {}\n", s, what);
  };

  // Written whole, as bench's: an existing file is replaced only by a complete report.
  OutputFile out;
  if (!out.open_or_report(args.output)) return kExitFailure;

  cuda::MemReport report;
  if (Status s = cuda::run_mem(o, report); !s) {
    fmt::print(stderr, "gemmlab mem: {}\n", device_error_text(s, args.device));
    return s.code() == StatusCode::InvalidValue ? kExitUsage : kExitFailure;
  }
  if (args.format == "json")
    fmt::print(out.stream(), "{}\n", bench::mem_json(report).dump(2));
  else if (args.format == "csv")
    fmt::print(out.stream(), "{}", bench::format_mem_csv(report));
  else
    fmt::print(out.stream(), "{}", bench::format_mem_table(report));
  if (!out.commit_or_report()) return kExitFailure;

  int failed = 0;
  for (const cuda::MemRow& r : report.rows)
    if (r.checked && !r.passed) {
      ++failed;
      fmt::print(stderr, "gemmlab mem: {} {} {}={}: {} words not intact\n", r.experiment, r.variant, r.param_name,
                 r.param, r.mismatches);
    }
  if (failed > 0 || !report.passed()) {
    fmt::print(stderr, "gemmlab mem: {} of {} rows failed their data check\n", failed, report.rows.size());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace gemmlab::cli
