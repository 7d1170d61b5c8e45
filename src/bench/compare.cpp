#include "bench/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace gemmlab::bench {
namespace {

using nlohmann::json;

// The rank test needs this many samples a side to reach p < 0.05 at all (4 and 4: p >= 0.029).
constexpr std::size_t kMinRankSamples = 4;

std::string text(const json& j, const char* key, const std::string& fallback = "") {
  return j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>() : fallback;
}
double number(const json& j, const char* key, double fallback = 0) {
  return j.contains(key) && j.at(key).is_number() ? j.at(key).get<double>() : fallback;
}

// backend, variant, configuration, dtype, out_dtype, m, n, k, trans, layout.
using Key = std::tuple<std::string, std::string, std::string, std::string, std::string, std::int64_t, std::int64_t,
                       std::int64_t, std::string, std::string>;

Key key_of(const json& r) {
  std::string configuration = text(r, "configuration");
  if (configuration == "auto") configuration.clear();  // each rung's own choice, named or not
  // Files from before --out-dtype stored C in f32.
  return {text(r, "backend"), text(r, "variant"), configuration, text(r, "dtype", "f32"), text(r, "out_dtype", "f32"),
          r.value("m", std::int64_t{0}), r.value("n", std::int64_t{0}), r.value("k", std::int64_t{0}),
          text(r, "trans", "NN"), text(r, "layout", "row")};
}

Status check_run(const json& doc, const char* which) {
  if (!doc.is_object() || text(doc, "tool") != "gemmlab" || !doc.contains("results") || !doc.at("results").is_array())
    return {StatusCode::InvalidValue, fmt::format("{} is not a gemmlab JSON report (no tool \"gemmlab\" and results)", which)};
  const std::string command = text(doc, "command");
  if (command != "bench")
    return {StatusCode::InvalidValue,
            fmt::format("{} is a gemmlab {} report; compare takes bench reports (gemmlab bench --format json)", which,
                        command.empty() ? "unknown" : command)};
  return Status::ok();
}

// The side a result gives, with its anchor's median and spread looked up in the same run.
CompareSide side_of(const json& r, const std::map<Key, const json*>& run) {
  CompareSide s;
  const std::string status = text(r, "status", "ok");
  s.ok = status == "ok" && !(r.contains("verification") && !r.at("verification").value("passed", true));
  if (r.contains("time_ms")) {
    const json& t = r.at("time_ms");
    s.median_ms = number(t, "median");
    s.spread = number(t, "spread");
    s.reps = t.value("reps", 0);
    if (t.contains("samples")) s.samples = t.at("samples").get<std::vector<double>>();
  }
  s.noisy = r.value("noisy", false);
  if (r.contains("ratio_to_anchor") && r.at("ratio_to_anchor").is_number()) {
    s.ratio = r.at("ratio_to_anchor").get<double>();
    Key anchor = key_of(r);
    std::get<1>(anchor) = text(r, "anchor_variant");
    std::get<2>(anchor).clear();  // anchors run as shipped
    if (auto it = run.find(anchor); it != run.end() && it->second->contains("time_ms")) {
      s.anchor_median_ms = number(it->second->at("time_ms"), "median");
      s.anchor_spread = number(it->second->at("time_ms"), "spread");
    } else {
      s.anchor_median_ms = s.median_ms * *s.ratio;  // the ratio is anchor over rung
    }
  }
  return s;
}

json who(const json& doc) {
  json out = json::object();
  if (doc.contains("build")) out["commit"] = text(doc.at("build"), "commit");
  const json device = doc.value("device", json::object());
  out["device"] = text(device, "gpu", text(device, "cpu"));
  if (doc.contains("run")) {
    out["date"] = text(doc.at("run"), "date");
    out["host"] = text(doc.at("run"), "host");
  }
  return out;
}

// The metric's value per repetition: the rung's time over its anchor's median (ratio), or
// the time itself; lower is faster either way.
std::vector<double> metric_samples(const CompareSide& s, bool ratio) {
  std::vector<double> out;
  for (double t : s.samples) out.push_back(ratio ? t / s.anchor_median_ms : t);
  return out;
}
double metric_value(const CompareSide& s, bool ratio) { return ratio ? 1.0 / *s.ratio : s.median_ms; }
double metric_spread(const CompareSide& s, bool ratio) { return s.spread + (ratio ? s.anchor_spread : 0.0); }

void judge(Comparison& c, const CompareOptions& o) {
  if (!c.before) {
    c.verdict = Verdict::OnlyNew;
    return;
  }
  if (!c.after) {
    c.verdict = Verdict::OnlyOld;
    return;
  }
  const CompareSide &a = *c.before, &b = *c.after;
  if (!b.ok) {
    c.verdict = Verdict::Failed;
    c.evidence = "failed or did not pass verification in the new run";
    c.gates = true;
    return;
  }
  if (a.median_ms <= 0 || b.median_ms <= 0) {
    c.verdict = Verdict::Unclear;
    c.evidence = "not timed in both runs";
    return;
  }
  const bool ratio = o.metric != CompareMetric::Time && !c.anchor && a.ratio && b.ratio && *a.ratio > 0 && *b.ratio > 0;
  c.metric = ratio ? "ratio" : "time";
  const double va = metric_value(a, ratio), vb = metric_value(b, ratio);
  c.change = va / vb - 1;
  c.time_change = b.median_ms / a.median_ms - 1;
  // Is the change real? The rank test where both runs kept their samples, else the intervals.
  bool apart = false;
  const std::vector<double> sa = metric_samples(a, ratio), sb = metric_samples(b, ratio);
  if (sa.size() >= kMinRankSamples && sb.size() >= kMinRankSamples) {
    const double p = mann_whitney_p(sa, sb);
    apart = p < o.p_value;
    c.evidence = fmt::format("rank test p={:.2g} ({} and {} samples)", p, sa.size(), sb.size());
  } else {
    // Interquartile boxes: median +- half the spread (the box of a ratio as wide as the rung's and the anchor's together).
    const double ea = metric_spread(a, ratio) / 2, eb = metric_spread(b, ratio) / 2;
    apart = va * (1 - ea) > vb * (1 + eb) || vb * (1 - eb) > va * (1 + ea);
    c.evidence = fmt::format("interquartile boxes +-{:.1f}% and +-{:.1f}% {}", 100 * ea, 100 * eb,
                             apart ? "apart" : "overlap");
  }
  if (std::fabs(c.change) < o.threshold) c.verdict = Verdict::Same;
  else if (!apart) c.verdict = Verdict::Unclear;
  else c.verdict = c.change > 0 ? Verdict::Faster : Verdict::Slower;
  // An anchor is the yardstick, not the work: its own change is shown, never gated on.
  c.gates = c.verdict == Verdict::Slower && !c.anchor;
}

std::string shape(const Comparison& c) { return fmt::format("{}x{}x{}", c.m, c.n, c.k); }
// The dtype, and C's type after it where that is not f32 (bf16_bf16, as the rungs are named).
std::string types(const Comparison& c) { return c.out_dtype == "f32" ? c.dtype : c.dtype + "_" + c.out_dtype; }
std::string ratio_text(const std::optional<CompareSide>& s) {
  return s && s->ratio ? fmt::format("{:.3f}", *s->ratio) : "-";
}
std::string ms_text(const std::optional<CompareSide>& s) {
  return s && s->median_ms > 0 ? fmt::format("{:.4g}", s->median_ms) : "-";
}
std::string percent(double x) { return fmt::format("{:+.1f}%", 100 * x); }
bool both(const Comparison& c) { return c.before && c.after && c.before->median_ms > 0 && c.after->median_ms > 0; }

std::string verdict_text(const Comparison& c, const CompareOptions& o) {
  switch (c.verdict) {
    case Verdict::Same: return fmt::format("same (within {:.0f}%)", 100 * o.threshold);
    case Verdict::Faster: return "faster";
    case Verdict::Slower: return c.anchor ? "slower (anchor: not gated)" : "SLOWER";
    case Verdict::Unclear: return "unclear (within noise)";
    case Verdict::Failed: return "FAILED";
    case Verdict::OnlyOld: return "only in old";
    case Verdict::OnlyNew: return "only in new";
  }
  return "?";
}

std::string header(const CompareReport& r, const std::string& before_name, const std::string& after_name) {
  const auto line = [](const std::string& name, const json& w) {
    std::string text = name;
    if (w.contains("commit")) text += " (commit " + w.at("commit").get<std::string>();
    if (w.contains("device") && !w.at("device").get<std::string>().empty())
      text += ", " + w.at("device").get<std::string>();
    if (w.contains("date") && !w.at("date").get<std::string>().empty()) text += ", " + w.at("date").get<std::string>();
    if (w.contains("commit")) text += ")";
    return text;
  };
  return fmt::format("old: {}\nnew: {}\nmetric: {}; a change below {:.1f}% is no change; {} regression(s)\n",
                     line(before_name, r.before_run), line(after_name, r.after_run),
                     r.options.metric == CompareMetric::Time
                         ? "median time"
                         : "ratio to the anchor of the same run (time where a run has none)",
                     100 * r.options.threshold, r.regressions());
}

}  // namespace

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::Same: return "same";
    case Verdict::Faster: return "faster";
    case Verdict::Slower: return "slower";
    case Verdict::Unclear: return "unclear";
    case Verdict::Failed: return "failed";
    case Verdict::OnlyOld: return "only_old";
    case Verdict::OnlyNew: return "only_new";
  }
  return "?";
}

int CompareReport::regressions() const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [](const Comparison& c) { return c.gates; }));
}

double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b) {
  const double n1 = static_cast<double>(a.size()), n2 = static_cast<double>(b.size());
  if (a.empty() || b.empty()) return 1.0;
  std::vector<std::pair<double, int>> all;
  for (double x : a) all.push_back({x, 0});
  for (double x : b) all.push_back({x, 1});
  std::sort(all.begin(), all.end());
  // Mid-ranks for ties, and the tie correction of the variance.
  double rank_sum_a = 0, ties = 0;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const double mid = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (std::size_t t = i; t < j; ++t)
      if (all[t].second == 0) rank_sum_a += mid;
    const double count = static_cast<double>(j - i);
    ties += count * count * count - count;
    i = j;
  }
  const double n = n1 + n2;
  const double u = rank_sum_a - n1 * (n1 + 1) / 2;
  const double mean = n1 * n2 / 2;
  const double variance = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)));
  if (variance <= 0) return 1.0;  // every sample equal
  const double z = std::max(std::fabs(u - mean) - 0.5, 0.0) / std::sqrt(variance);
  return std::erfc(z / std::sqrt(2.0));
}

Status compare_runs(const json& before, const json& after, const CompareOptions& o, CompareReport& out) {
  GEMMLAB_TRY(check_run(before, "OLD"));
  GEMMLAB_TRY(check_run(after, "NEW"));
  out = {};
  out.options = o;
  out.before_run = who(before);
  out.after_run = who(after);
  std::map<Key, const json*> old_run, new_run;
  std::vector<Key> order;
  for (const json& r : before.at("results"))
    if (old_run.emplace(key_of(r), &r).second) order.push_back(key_of(r));
  for (const json& r : after.at("results"))
    if (new_run.emplace(key_of(r), &r).second && !old_run.count(key_of(r))) order.push_back(key_of(r));
  for (const Key& key : order) {
    Comparison c;
    std::tie(c.backend, c.variant, c.configuration, c.dtype, c.out_dtype, c.m, c.n, c.k, c.trans, c.layout) = key;
    const auto o_it = old_run.find(key), n_it = new_run.find(key);
    if (o_it != old_run.end()) {
      c.before = side_of(*o_it->second, old_run);
      c.anchor = o_it->second->value("anchor", false);
    }
    if (n_it != new_run.end()) {
      c.after = side_of(*n_it->second, new_run);
      c.anchor = n_it->second->value("anchor", false);
    }
    if ((c.before && text(*o_it->second, "status") == "skipped") || (c.after && text(*n_it->second, "status") == "skipped"))
      continue;  // a rung that cannot take the problem has nothing to compare
    judge(c, o);
    out.rows.push_back(std::move(c));
  }
  return Status::ok();
}

std::string format_compare_table(const CompareReport& r, const std::string& before_name, const std::string& after_name) {
  std::string out = header(r, before_name, after_name) + "\n";
  std::size_t dtype_width = 5;
  for (const Comparison& c : r.rows) dtype_width = std::max(dtype_width, types(c).size());
  out += fmt::format("  {:<22} {:<{}} {:<16} {:>9} {:>9} {:>10} {:>10} {:>10} {:>8}  {}\n", "variant", "dtype",
                     dtype_width, "size", "old x anc", "new x anc", "old ms", "new ms", "time", "change",
                     "verdict (evidence)");
  for (const Comparison& c : r.rows) {
    out += fmt::format("  {:<22} {:<{}} {:<16} {:>9} {:>9} {:>10} {:>10} {:>10} {:>8}  {}{}\n",
                       c.configuration.empty() ? c.variant : c.variant + "/" + c.configuration, types(c), dtype_width,
                       shape(c), ratio_text(c.before), ratio_text(c.after), ms_text(c.before), ms_text(c.after),
                       both(c) ? percent(c.time_change) : "-",
                       both(c) ? percent(c.change) : "-", verdict_text(c, r.options),
                       c.evidence.empty() ? "" : " (" + c.metric + (c.metric.empty() ? "" : "; ") + c.evidence + ")");
  }
  return out;
}

std::string format_compare_markdown(const CompareReport& r, const std::string& before_name,
                                    const std::string& after_name) {
  std::string out;
  std::string head = header(r, before_name, after_name);
  for (std::size_t at = 0; (at = head.find('\n', at)) != std::string::npos; at += 6) head.replace(at, 1, "<br>\n");
  out += head + "\n";
  out += "| rung | dtype | size | old × anchor | new × anchor | old ms | new ms | time | change | verdict |\n";
  out += "|---|---|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const Comparison& c : r.rows)
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                       c.configuration.empty() ? c.variant : c.variant + "/" + c.configuration, types(c), shape(c),
                       ratio_text(c.before), ratio_text(c.after), ms_text(c.before), ms_text(c.after),
                       both(c) ? percent(c.time_change) : "–", both(c) ? percent(c.change) : "–",
                       verdict_text(c, r.options));
  return out;
}

json compare_json(const CompareReport& r, const std::string& before_name, const std::string& after_name) {
  json rows = json::array();
  for (const Comparison& c : r.rows) {
    json row = {{"backend", c.backend}, {"variant", c.variant}, {"configuration", c.configuration},
                {"dtype", c.dtype}, {"out_dtype", c.out_dtype}, {"m", c.m}, {"n", c.n}, {"k", c.k},
                {"trans", c.trans}, {"layout", c.layout},
                {"anchor", c.anchor}, {"verdict", to_string(c.verdict)}, {"regression", c.gates}};
    const auto side = [](const std::optional<CompareSide>& s) {
      if (!s) return json(nullptr);
      json j = {{"median_ms", s->median_ms}, {"spread", s->spread}, {"reps", s->reps},
                {"samples", s->samples.size()}, {"ok", s->ok}, {"noisy", s->noisy}};
      if (s->ratio) j["ratio_to_anchor"] = *s->ratio;
      return j;
    };
    row["old"] = side(c.before);
    row["new"] = side(c.after);
    if (both(c)) {
      row["metric"] = c.metric;
      row["change"] = c.change;
      row["time_change"] = c.time_change;
      row["evidence"] = c.evidence;
    }
    rows.push_back(std::move(row));
  }
  return {{"tool", "gemmlab"},
          {"command", "compare"},
          {"old", {{"file", before_name}, {"run", r.before_run}}},
          {"new", {{"file", after_name}, {"run", r.after_run}}},
          {"metric", r.options.metric == CompareMetric::Time ? "time" : r.options.metric == CompareMetric::Ratio ? "ratio" : "auto"},
          {"threshold", r.options.threshold},
          {"regressions", r.regressions()},
          {"rows", rows}};
}

}  // namespace gemmlab::bench
