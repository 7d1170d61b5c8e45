// gemmlab compare OLD.json NEW.json: two bench runs side by side, a verdict per rung and
// size that allows for noise (bench/compare.hpp), and exit code 1 on a regression, so a CI
// job or a tuning loop can stop on it.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <fstream>

#include "bench/compare.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/output_file.hpp"

namespace gemmlab::cli {
namespace {

nlohmann::json load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError{fmt::format("compare: cannot read '{}'", path)};
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) throw UsageError{fmt::format("compare: '{}' is not JSON", path)};
  if (doc.contains("runs"))
    throw UsageError{fmt::format("compare: '{}' holds {} runs (a side-by-side file); compare takes one run per file",
                                 path, doc.at("runs").size())};
  return doc;
}

}  // namespace

void add_compare_options(CLI::App& c, CompareArgs& a) {
  c.add_option("old", a.old_path, "The earlier run (gemmlab bench --format json)")->required();
  c.add_option("new", a.new_path, "The later run")->required();
  c.add_option("--format", a.format, "table, markdown or json")->check(CLI::IsMember({"table", "markdown", "json"}));
  c.add_option("--metric", a.metric,
               "ratio (to the anchor of the same run: fair across machines), time, or auto (ratio where both runs "
               "have one; the default)")
      ->check(CLI::IsMember({"auto", "ratio", "time"}));
  c.add_option("--threshold", a.threshold, "Percent: a smaller change is no change (default 2)")
      ->check(finite_range(0.0, 1000.0));
  c.add_option("--output", a.output, "Write the comparison to this file instead of stdout (written whole)");
}

int run_compare(const CompareArgs& args) {
  const nlohmann::json before = load(args.old_path), after = load(args.new_path);
  bench::CompareOptions o;
  o.threshold = args.threshold / 100;
  o.metric = args.metric == "ratio" ? bench::CompareMetric::Ratio
             : args.metric == "time" ? bench::CompareMetric::Time
                                     : bench::CompareMetric::Auto;
  bench::CompareReport report;
  if (Status s = bench::compare_runs(before, after, o, report); !s)
    throw UsageError{fmt::format("compare: {}", s.message())};
  OutputFile out;
  if (!out.open_or_report(args.output)) return kExitFailure;
  if (args.format == "json")
    fmt::print(out.stream(), "{}\n", bench::compare_json(report, args.old_path, args.new_path).dump(2));
  else if (args.format == "markdown")
    fmt::print(out.stream(), "{}", bench::format_compare_markdown(report, args.old_path, args.new_path));
  else
    fmt::print(out.stream(), "{}", bench::format_compare_table(report, args.old_path, args.new_path));
  if (!out.commit_or_report()) return kExitFailure;
  if (const int regressions = report.regressions(); regressions > 0) {
    fmt::print(stderr, "gemmlab compare: {} regression(s) beyond {:g}%\n", regressions, args.threshold);
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace gemmlab::cli
