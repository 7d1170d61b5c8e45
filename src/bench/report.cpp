#include "bench/report.hpp"

#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <map>
#include <set>

#include "core/build_info.hpp"

namespace gemmlab::bench {
namespace {

std::string verdict(const Record& r) {
  if (r.status == "skipped") return "skipped: " + r.message;
  if (r.status == "error") return "ERROR: " + r.message;
  if (r.profiled) return "profiled (ran once, untimed, not verified)";
  std::string text = !r.verified             ? "not verified"
                     : !r.verification.passed ? r.verification.summary()
                     : r.verification.sampled ? "ok (sampled)"
                                              : "ok";
  // Noise after the verdict, one word per kind (the warnings below the table say more).
  for (const std::string& w : r.warnings) text += " [" + w.substr(0, w.find(':')) + "]";
  return text;
}

std::string shorten(const std::string& text, std::size_t width) {
  return text.size() <= width ? text : text.substr(0, width - 3) + "...";
}

// Whether the record's inputs are FP8, and so carry per-tensor scales.
bool has_scales(const Record& r) {
  const std::optional<DType> dtype = parse_dtype(r.dtype);
  return dtype && is_fp8(*dtype);
}

// The shape's line above its rungs; a C stored in other than float32 is said after the dtype,
// FP8 inputs' scales after alpha and beta.
std::string shape_key(const Record& r) {
  const std::string types = r.out_dtype == "f32" ? r.dtype : fmt::format("{} (C in {})", r.dtype, r.out_dtype);
  const std::string scales = has_scales(r) ? fmt::format(" scale_a={} scale_b={}", r.scale_a, r.scale_b) : "";
  return fmt::format("{}x{}x{} {} {} {} alpha={} beta={}{} lda={} ldb={} ldc={} seed={}", r.m, r.n, r.k, types,
                     r.trans, r.layout, r.alpha, r.beta, scales, r.lda, r.ldb, r.ldc, r.seed);
}

std::string lookup(const RunContext& c, const std::string& key) {
  for (const auto& [k, v] : c.device)
    if (k == key) return v;
  return "";
}

// One line per shape verified at a sample: how many elements, and why not in full.
std::string sampled_notes(const std::vector<Record>& records) {
  std::string notes;
  std::set<std::string> seen;
  for (const Record& r : records) {
    if (!r.verified || !r.verification.sampled) continue;
    const std::string shape = fmt::format("{}x{}x{}", r.m, r.n, r.k);
    if (!seen.insert(shape).second) continue;
    notes += fmt::format("  {}: {} of its {} elements against float64 dot products{}; {}\n", shape,
                         r.verification.checked, r.m * r.n,
                         r.beta == 0.0 ? ", every element scanned for the NaN it was filled with" : "",
                         r.verification_note);
  }
  return notes.empty() ? notes : "\nverified at a sample of C (marked \"sampled\"):\n" + notes;
}

nlohmann::json memory_json(const MemoryCheck& check) {
  using nlohmann::json;
  const auto optional = [](const std::optional<std::uint64_t>& x) { return x ? json(*x) : json(nullptr); };
  const auto items = [](const std::vector<MemoryItem>& list) {
    json out = json::array();
    for (const MemoryItem& item : list) out.push_back({{"what", item.what}, {"bytes", item.bytes}});
    return out;
  };
  json shapes = json::array();
  for (const MemoryPlan& plan : check.plans) {
    json item = {{"m", plan.shape.m},
                 {"n", plan.shape.n},
                 {"k", plan.shape.k},
                 {"verification", to_string(plan.verification)},
                 {"host_bytes", plan.host_bytes()},
                 {"host", items(plan.host)}};
    if (check.target.backend == Backend::Cuda) {
      item["device_bytes"] = plan.device_bytes();
      item["device"] = items(plan.device);
    }
    shapes.push_back(std::move(item));
  }
  json out = {{"host_available", optional(check.available.host)}, {"shapes", std::move(shapes)}};
  if (check.target.backend == Backend::Cuda) out["device_available"] = optional(check.available.device());
  return out;
}

// The out-of-core job's plans and models, one line each, under the table.
std::string out_of_core_notes(const std::vector<Record>& records, const RunContext& context) {
  std::string out;
  for (const Record& r : records) {
    if (!r.out_of_core || r.out_of_core->mode != "out_of_core" || !r.timed) continue;
    const OutOfCorePlan& p = r.out_of_core->plan;
    const double steps = static_cast<double>(p.tiles_m * p.tiles_n * p.blocks_k);
    out += fmt::format("  {} {}x{}x{}: {}\n    moved {:.1f} GB up, {:.1f} GB down ({:.0f} MB up per block product); "
                       "block rate {:.1f} TFLOP/s alone, {:.1f} beside the copies\n    bound {:.1f} ms (compute {:.1f}, "
                       "up {:.1f}, down {:.1f}), model with the pipeline's fill {:.1f} ms (first tile of C final at {:.1f}); measured {:.1f} ms = {:.2f}x "
                       "the bound, overlap {:.0f}%\n",
                       r.variant, r.m, r.n, r.k, p.describe(), p.h2d_bytes * 1e-9, p.d2h_bytes * 1e-9,
                       p.h2d_bytes / steps * 1e-6, r.out_of_core->block_alone_flops_per_second * 1e-12,
                       r.out_of_core->block_flops_per_second * 1e-12, r.out_of_core->bound_ms, p.compute_seconds * 1e3,
                       p.h2d_seconds * 1e3, p.d2h_seconds * 1e3, p.model_seconds * 1e3, p.first_tile_seconds * 1e3,
                       r.timing.median_ms,
                       r.timing.median_ms / r.out_of_core->bound_ms, 100 * r.out_of_core->overlap);
  }
  if (out.empty()) return out;
  std::string link;
  if (context.host_link)
    link = fmt::format(" (host link: {:.1f} GB/s up, {:.1f} down alone; {:.1f} and {:.1f} both at once; {:.1f} up "
                       "in 16 KiB rows)",
                       context.host_link->h2d * 1e-9, context.host_link->d2h * 1e-9, context.host_link->h2d_both * 1e-9,
                       context.host_link->d2h_both * 1e-9, context.host_link->h2d_strided * 1e-9);
  return "\nout-of-core schedules" + link + ":\n" + out;
}

}  // namespace

std::string format_table(const std::vector<Record>& records, const RunContext& context) {
  const bool tera = context.backend == "cuda";
  const BuildInfo build = build_info();
  std::string device = lookup(context, tera ? "gpu" : "cpu");
  // Which GPU ran, where a machine has several: its ordinal and PCI bus id.
  if (tera && !lookup(context, "device_ordinal").empty())
    device += fmt::format(" (device {}, {})", lookup(context, "device_ordinal"), lookup(context, "pci_bus_id"));
  if (!tera && !lookup(context, "openblas_corename").empty())
    device += " | OpenBLAS " + lookup(context, "openblas_corename");
  std::string out = fmt::format("gemmlab {} | {} | {} | commit {} ({})\n", context.command,
                                context.backend, device, build.commit, build.build_type);
  std::string current;
  for (const Record& r : records) {
    if (shape_key(r) != current) {
      current = shape_key(r);
      out += fmt::format("\n{}\n", current);
      out += fmt::format("  {:<22} {:<44} {:>10} {:>9} {:>11} {:>9}  {}\n", "variant", "technique",
                         tera ? "TFLOP/s" : "GFLOP/s", "x anchor", "median ms", "rel.err", "verdict");
    }
    const std::string rate = r.timed ? fmt::format("{:.2f}", tera ? r.gflops * 1e-3 : r.gflops) : "-";
    const std::string ratio = r.ratio_to_anchor ? fmt::format("{:.3f}", *r.ratio_to_anchor) : "-";
    const std::string ms = r.timed ? fmt::format("{:.3f}", r.timing.median_ms) : "-";
    const std::string err = r.verified ? fmt::format("{:.1e}", r.verification.rel_frobenius) : "-";
    // A configuration other than the rung's own choice is named beside it.
    const std::string name =
        r.config_name.empty() || r.config_name == "auto" ? r.variant : r.variant + "/" + r.config_name;
    out += fmt::format("  {:<22} {:<44} {:>10} {:>9} {:>11} {:>9}  {}\n", name,
                       shorten(r.technique, 44), rate, ratio, ms, err, verdict(r));
  }
  std::string warnings;
  for (const Record& r : records)
    for (const std::string& w : r.warnings)
      warnings += fmt::format("  {} {}x{}x{}: {}\n", r.variant, r.m, r.n, r.k, w);
  if (!warnings.empty()) out += "\nwarnings (measurements not to be taken at their word):\n" + warnings;
  out += sampled_notes(records);
  out += out_of_core_notes(records, context);
  return out;
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string format_csv(const std::vector<Record>& records) {
  std::string out =
      "backend,variant,configuration,dtype,out_dtype,anchor,threads,m,n,k,trans,layout,alpha,beta,lda,ldb,ldc,seed,"
      "status,reps,median_ms,min_ms,max_ms,spread,gflops,anchor_variant,ratio_to_anchor,verified,"
      "passed,rel_frobenius,max_abs_error,cgma,message\n";
  for (const Record& r : records) {
    std::string message = r.message;
    for (char& ch : message)
      if (ch == '"') ch = '\'';
    out += fmt::format(
        "{},{},\"{}\",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.6f},{:.6f},{:.6f},{:.4f},{:.3f},{},{},{},"
        "{},{:.3e},{:.3e},{:.3f},\"{}\"\n",
        r.backend, r.variant, r.config_name, r.dtype, r.out_dtype, r.anchor ? 1 : 0, r.threads, r.m, r.n, r.k, r.trans,
        r.layout, r.alpha, r.beta, r.lda, r.ldb, r.ldc, r.seed, r.status, r.timing.reps, r.timing.median_ms,
        r.timing.min_ms, r.timing.max_ms, r.timing.spread, r.gflops, r.anchor_variant,
        r.ratio_to_anchor ? fmt::format("{:.4f}", *r.ratio_to_anchor) : "", r.verified ? 1 : 0,
        r.verified && r.verification.passed ? 1 : 0, r.verification.rel_frobenius,
        r.verification.max_abs_error, r.model.cgma, message);
  }
  return out;
}

namespace {

// An operand's strided copies, each way, at the row lengths of OutOfCoreRates::kStridedRowBytes
// (at its own host pitch: the record's ld).
nlohmann::json strided_curve_json(const OutOfCoreRates::StridedCurve& curve) {
  return {{"h2d_bytes_per_second", curve.h2d}, {"d2h_bytes_per_second", curve.d2h}};
}

nlohmann::json out_of_core_json(const OutOfCoreFigures& f) {
  nlohmann::json j = {{"mode", f.mode}};
  if (f.mode == "cublasxt") {
    j["block_dim"] = f.block_dim;
    j["default_block_dim"] = f.default_block_dim;
  }
  if (f.mode == "out_of_core") {
    const OutOfCorePlan& p = f.plan;
    j["device_memory_limit"] = f.device_memory_limit;
    j["plan"] = {{"tile_m", p.tile_m},
                 {"tile_n", p.tile_n},
                 {"tile_k", p.tile_k},
                 {"tiles_m", p.tiles_m},
                 {"tiles_n", p.tiles_n},
                 {"blocks_k", p.blocks_k},
                 {"a_resident", p.a_resident},
                 {"b_resident", p.b_resident},
                 {"device_bytes", p.device_bytes},
                 {"workspace_bytes", p.workspace_bytes},
                 {"in_core_variant", p.variant},
                 {"in_core_config", p.config}};
    j["model"] = {{"h2d_bytes", p.h2d_bytes},
                  {"d2h_bytes", p.d2h_bytes},
                  {"block_flops_per_second", f.block_flops_per_second},
                  {"block_alone_flops_per_second", f.block_alone_flops_per_second},
                  {"planned_flops_per_second", p.rates.flops_per_second},
                  {"tile_overhead_k", p.rates.tile_overhead_k},
                  {"h2d_bytes_per_second", p.rates.h2d_bytes_per_second},
                  {"d2h_bytes_per_second", p.rates.d2h_bytes_per_second},
                  {"h2d_both_bytes_per_second", p.rates.h2d_both_bytes_per_second},
                  {"d2h_both_bytes_per_second", p.rates.d2h_both_bytes_per_second},
                  {"h2d_strided_bytes_per_second", p.rates.h2d_strided_bytes_per_second},
                  {"strided_beside_products",
                   {{"row_bytes", OutOfCoreRates::kStridedRowBytes},
                    {"a", strided_curve_json(p.rates.a_strided_beside)},
                    {"b", strided_curve_json(p.rates.b_strided_beside)},
                    {"c", strided_curve_json(p.rates.c_strided_beside)}}},
                  {"compute_ms", p.compute_seconds * 1e3},
                  {"h2d_ms", p.h2d_seconds * 1e3},
                  {"d2h_ms", p.d2h_seconds * 1e3},
                  {"fill_ms", p.fill_seconds * 1e3},
                  {"first_tile_ms", p.first_tile_seconds * 1e3},
                  {"model_ms", p.model_seconds * 1e3},
                  {"bound_ms", f.bound_ms}};
    j["overlap"] = f.overlap;
  }
  return j;
}

}  // namespace

nlohmann::json to_json(const std::vector<Record>& records, const RunContext& context) {
  using nlohmann::json;
  const BuildInfo build = build_info();
  json device = json::object();
  for (const auto& [k, v] : context.device) device[k] = v;
  const Options& o = context.options;
  json doc = {
      {"schema_version", kSchemaVersion},
      {"tool", "gemmlab"},
      {"command", context.command},
      {"build",
       {{"commit", build.commit},
        {"build_type", build.build_type},
        {"version", build.version},
        {"cxx_compiler", build.cxx_compiler},
        {"cuda_compiler", build.cuda_compiler},
        {"cuda_architectures", build.cuda_architectures}}},
      {"run", {{"date", context.date}, {"command_line", context.command_line}, {"host", context.host}}},
      {"backend", context.backend},
      {"device", device},
  };
  // Only the settings that applied to this run.
  json settings = {{"dtype", to_string(o.dtype)},
                   {"out_dtype", to_string(o.out_dtype)},
                   {"trans", fmt::format("{}{}", to_string(o.op_a), to_string(o.op_b))},
                   {"layout", to_string(o.layout)},
                   {"alpha", o.alpha},
                   {"beta", o.beta},
                   {"ld_padding", o.ld_padding},
                   {"seed", o.seed},
                   {"verify", o.verify && !o.profile}};
  if (o.profile) settings["profile"] = true;
  if (o.device_memory_limit) settings["device_memory_limit"] = *o.device_memory_limit;
  if (o.time && !o.profile) {
    settings["warmup"] = o.warmup;
    settings["min_reps"] = o.min_reps;
    settings["max_reps"] = o.max_reps;
    settings["min_seconds"] = o.min_seconds;
    settings["max_seconds"] = o.max_seconds > 0 ? json(o.max_seconds) : json(nullptr);
    settings["max_spread"] = o.max_spread;
    settings["back_to_back"] = o.back_to_back;
    settings["interleaved"] = o.interleave.value_or(context.backend == "cuda");
    // The CPU executor flushes nothing: a CPU run records no flush.
    if (context.backend == "cuda") settings["l2_flush"] = to_string(o.flush);
  }
  doc["settings"] = std::move(settings);
  if (context.memory) doc["memory"] = memory_json(*context.memory);
  if (context.host_link)
    doc["host_link"] = {{"bytes", context.host_link->bytes},
                        {"h2d_bytes_per_second", context.host_link->h2d},
                        {"d2h_bytes_per_second", context.host_link->d2h},
                        {"both_h2d_bytes_per_second", context.host_link->h2d_both},
                        {"both_d2h_bytes_per_second", context.host_link->d2h_both},
                        {"strided_h2d_bytes_per_second", context.host_link->h2d_strided}};
  json results = json::array();
  for (const Record& r : records) {
    json item = {
        {"backend", r.backend},
        {"variant", r.variant},
        {"dtype", r.dtype},
        {"out_dtype", r.out_dtype},
        {"technique", r.technique},
        {"config", r.config},
        {"configuration", r.config_name},
        {"anchor", r.anchor},
        {"threads", r.threads},
        {"m", r.m}, {"n", r.n}, {"k", r.k},
        {"lda", r.lda}, {"ldb", r.ldb}, {"ldc", r.ldc},
        {"trans", r.trans},
        {"layout", r.layout},
        {"alpha", r.alpha},
        {"beta", r.beta},
        {"seed", r.seed},
        {"status", r.status},
        {"message", r.message},
        {"model",
         {{"flops", r.model.flops},
          {"global_load_bytes", r.model.global_load_bytes},
          {"min_dram_bytes", r.model.min_dram_bytes},
          {"cgma", r.model.cgma},
          {"smem_bytes_per_block", r.model.smem_bytes_per_block},
          {"threads_per_block", r.model.threads_per_block}}},
    };
    if (r.timed) {
      item["time_ms"] = {{"median", r.timing.median_ms},
                         {"min", r.timing.min_ms},
                         {"max", r.timing.max_ms},
                         {"spread", r.timing.spread},
                         {"reps", r.timing.reps},
                         {"capped", r.timing.capped}};
      if (context.samples) item["time_ms"]["samples"] = r.timing.samples;
      item["gflops"] = r.gflops;
      item["noisy"] = r.noisy;
    }
    if (has_scales(r)) {
      item["scale_a"] = r.scale_a;
      item["scale_b"] = r.scale_b;
    }
    if (!r.warnings.empty()) item["warnings"] = r.warnings;
    if (r.out_of_core) item["out_of_core"] = out_of_core_json(*r.out_of_core);
    if (r.profiled) item["profiled"] = true;
    if (r.ratio_to_anchor) {
      item["anchor_variant"] = r.anchor_variant;
      item["ratio_to_anchor"] = *r.ratio_to_anchor;
    }
    if (r.verified) {
      const Verification& v = r.verification;
      item["verification"] = {{"passed", v.passed},
                              {"checked", v.checked},
                              {"failures", v.failures},
                              {"unwritten", v.unwritten},
                              {"padding_clobbered", v.padding_clobbered},
                              {"rel_frobenius", v.rel_frobenius},
                              {"max_abs_error", v.max_abs_error},
                              {"worst", {{"row", v.worst_row},
                                         {"col", v.worst_col},
                                         {"value", v.worst_value},
                                         {"reference", v.worst_reference},
                                         {"bound", v.worst_bound}}}};
      item["verification"]["mode"] = v.sampled ? "sampled" : "full";
      if (v.sampled) {
        item["verification"]["samples"] = v.checked;
        item["verification"]["note"] = r.verification_note;
      }
    }
    results.push_back(std::move(item));
  }
  doc["results"] = std::move(results);
  return doc;
}

}  // namespace gemmlab::bench
