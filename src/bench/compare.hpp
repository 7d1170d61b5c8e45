// gemmlab compare: two bench runs side by side, per rung, dtype and shape: the change in time
// and in ratio to the same-run anchor, and a verdict that allows for noise.
//
// The metric is the ratio to the anchor of the same run where both runs have one (so runs of
// two machines, or of one machine on two days, compare fairly), else the time. A change is
// a verdict only when it is at least the threshold and the two runs' repetitions tell it
// apart: with samples in both (bench --samples), a Mann-Whitney rank test at p < 0.05; else
// (older runs, or too few samples for the test) interquartile boxes, median +- half the
// spread, that do not overlap; the box of a ratio is as wide as the rung's and the anchor's
// together.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gemmlab/status.hpp"

namespace gemmlab::bench {

enum class CompareMetric { Auto, Ratio, Time };

struct CompareOptions {
  CompareMetric metric = CompareMetric::Auto;
  double threshold = 0.02;  // a relative change smaller than this is no change
  double p_value = 0.05;    // the rank test's level
};

// One side of a comparison: a result of one run, reduced to what the verdict reads.
struct CompareSide {
  double median_ms = 0, spread = 0;
  int reps = 0;
  std::vector<double> samples;
  std::optional<double> ratio;     // ratio_to_anchor
  double anchor_median_ms = 0, anchor_spread = 0;
  bool ok = true;                  // ran, and passed verification where verified
  bool noisy = false;
};

enum class Verdict { Same, Faster, Slower, Unclear, Failed, OnlyOld, OnlyNew };
std::string_view to_string(Verdict v);

struct Comparison {
  std::string backend, variant, configuration, dtype, trans, layout;
  std::string out_dtype = "f32";  // how C was stored
  std::int64_t m = 0, n = 0, k = 0;
  bool anchor = false;
  std::optional<CompareSide> before, after;
  std::string metric;       // "ratio" or "time"
  double change = 0;        // speed-up of the metric, new over old, minus 1: > 0 faster
  double time_change = 0;   // new median time over old, minus 1
  std::string evidence;     // what told the runs apart, or why not
  Verdict verdict = Verdict::Same;
  bool gates = false;       // counts as a regression for the exit code
};

struct CompareReport {
  nlohmann::json before_run, after_run;  // who ran each: commit, device, date
  CompareOptions options;
  std::vector<Comparison> rows;
  int regressions() const;
};

// Two-sided p-value of the Mann-Whitney U test (normal approximation with tie and
// continuity corrections) that `a` and `b` come from one distribution.
double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b);

// InvalidValue naming the problem when a document is not a gemmlab bench run.
Status compare_runs(const nlohmann::json& before, const nlohmann::json& after, const CompareOptions& options,
                    CompareReport& out);

std::string format_compare_table(const CompareReport& report, const std::string& before_name,
                                 const std::string& after_name);
std::string format_compare_markdown(const CompareReport& report, const std::string& before_name,
                                    const std::string& after_name);
nlohmann::json compare_json(const CompareReport& report, const std::string& before_name, const std::string& after_name);

}  // namespace gemmlab::bench
