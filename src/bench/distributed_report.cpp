#include "bench/distributed.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "bench/distributed_runs.hpp"

namespace gemmlab::bench {
namespace {

std::string devices_text(const std::vector<int>& devices) {
  std::string text;
  for (const int d : devices) text += fmt::format("{}{}", text.empty() ? "" : ",", d);
  return text;
}

nlohmann::json figures_json(const DistributedFigures& f, const Record& r) {
  using nlohmann::json;
  json j = {{"mode", f.mode}, {"gpus", f.devices.size()}, {"devices", f.devices}};
  if (!f.local_variant.empty()) {
    j["local_variant"] = f.local_variant;
    j["local_config"] = f.local_config;
  }
  if (f.mode == "device" || f.mode == "host" || f.mode == "single_gpu") j["grid"] = grid_text(f.grid);
  if (f.mode == "device") {
    j["scaling"] = f.scaling;
    if (f.decomposition) j["decomposition"] = to_string(*f.decomposition);
    json same = json::array();
    for (const Decomposition d : f.same_grid) same.push_back(to_string(d));
    j["same_grid_as"] = std::move(same);
    if (f.planned) {
      const DistributedPlan& p = f.plan;
      const DistributedModel& m = p.model;
      j["cut"] = to_string(p.cut);
      j["panels"] = p.panels.size();
      j["panel_width"] = p.panel_width;
      if (p.cut == DistributedCut::Slices) {
        j["slices"] = p.slices.size();
        j["slice_width"] = p.slices.front().count;
      }
      if (p.cut == DistributedCut::Stripe) j["lead"] = p.lead;
      j["panel_buffer_bytes"] = p.panel_buffer_bytes;
      j["model"] = {{"flops_per_gpu_max", m.flops_per_gpu_max},
                    {"bytes_received_per_gpu_max", m.bytes_received_per_gpu_max},
                    {"panel_bytes_received_max", m.panel_bytes_received_max},
                    {"bytes_received_total", m.bytes_received_total},
                    {"compute_seconds", m.compute_seconds},
                    {"comm_seconds", m.comm_seconds},
                    {"fill_seconds", m.fill_seconds},
                    {"wait_seconds", m.wait_seconds},
                    {"model_seconds", m.model_seconds},
                    {"local_flops_per_second", f.rates.flops_per_second}};
      // What the bench measured and passed (0: the library's nominal figure was used).
      j["model"]["rates"] = {{"flops_per_second", f.rates.flops_per_second},
                             {"link_bytes_per_second", f.rates.link_bytes_per_second},
                             {"broadcast_seconds", f.rates.broadcast_seconds},
                             {"device_bytes_per_second", f.rates.device_bytes_per_second},
                             {"multiprocessors", f.rates.multiprocessors},
                             {"tile_overhead_k", f.rates.tile_overhead_k},
                             {"tile_m", f.rates.tile_m},
                             {"tile_n", f.rates.tile_n}};
      if (r.timed && m.model_seconds > 0) j["model"]["measured_over_model"] = r.timing.median_ms * 1e-3 / m.model_seconds;
    }
    if (!f.bytes_received.empty()) {
      double total = 0;
      for (const double b : f.bytes_received) total += b;
      j["bytes_received"] = {{"per_gpu", f.bytes_received},
                             {"total", total},
                             {"max", *std::ranges::max_element(f.bytes_received)}};
    }
    if (f.transport) j["panel_transport"] = to_string(*f.transport);
    if (!f.wait_seconds.empty())
      j["wait_seconds"] = {{"per_gpu", f.wait_seconds}, {"max", *std::ranges::max_element(f.wait_seconds)}};
    if (!f.seconds.empty()) j["gpu_seconds"] = f.seconds;
  }
  if (f.mode == "host") {
    json plans = json::array();
    for (const OutOfCorePlan& p : f.host_plans)
      plans.push_back({{"tile_m", p.tile_m},
                       {"tile_n", p.tile_n},
                       {"tile_k", p.tile_k},
                       {"tiles_m", p.tiles_m},
                       {"tiles_n", p.tiles_n},
                       {"blocks_k", p.blocks_k},
                       {"device_bytes", p.device_bytes},
                       {"h2d_bytes", p.h2d_bytes},
                       {"d2h_bytes", p.d2h_bytes},
                       {"model_ms", p.model_seconds * 1e3},
                       {"in_core_variant", p.variant}});
    j["host_plans"] = std::move(plans);
    if (f.ratio_to_best_xt) {
      j["ratio_to_best_cublasxt"] = *f.ratio_to_best_xt;
      j["best_cublasxt_block_dim"] = f.best_xt_block_dim;
    }
  }
  if (f.mode == "cublasxt") {
    j["block_dim"] = f.block_dim;
    j["default_block_dim"] = f.default_block_dim;
  }
  if (f.t1_ms) {
    j["t1"] = {{"variant", f.t1_variant},
               {"m", f.t1_shape.m},
               {"n", f.t1_shape.n},
               {"k", f.t1_shape.k},
               {"time_ms", *f.t1_ms},
               {"tflops", 2.0 * static_cast<double>(f.t1_shape.m) * static_cast<double>(f.t1_shape.n) *
                              static_cast<double>(f.t1_shape.k) / (*f.t1_ms * 1e-3) * 1e-12}};
  }
  if (f.efficiency) j["efficiency"] = *f.efficiency;
  return j;
}

std::string gb(double bytes) { return fmt::format("{:.2f} GB", bytes * 1e-9); }

// Per GPU, "0.12, 3.40" (milliseconds).
std::string per_gpu_ms(const std::vector<double>& seconds) {
  std::string text;
  for (const double s : seconds) text += fmt::format("{}{:.2f}", text.empty() ? "" : ", ", s * 1e3);
  return text;
}

}  // namespace

nlohmann::json distributed_json(const DistributedResults& results, const RunContext& context) {
  using nlohmann::json;
  json doc = to_json(results.records, context);
  doc["command"] = kDistributedCommand;
  json decompositions = json::array(), placements = json::array();
  for (const Decomposition d : results.job.decompositions) decompositions.push_back(to_string(d));
  for (const Placement p : results.job.placements) placements.push_back(to_string(p));
  doc["settings"]["gpus"] = results.devices.size();
  doc["settings"]["devices"] = results.devices;
  doc["settings"]["decompositions"] = std::move(decompositions);
  doc["settings"]["placements"] = std::move(placements);
  doc["settings"]["variant"] = results.job.variant;
  doc["settings"]["broadcast_ctas"] = results.job.broadcast_ctas;
  doc["settings"]["panel_transport"] = to_string(results.job.transport);
  doc["settings"]["cut"] = to_string(results.job.cut);
  if (results.job.panel_width > 0) doc["settings"]["panel_width"] = results.job.panel_width;
  if (results.job.anchors && context.options.dtype == DType::F32) doc["settings"]["xt_block_dims"] = results.job.xt_block_dims;
  if (results.job.device_memory_limit > 0) doc["settings"]["device_memory_limit_per_gpu"] = results.job.device_memory_limit;
  doc["nccl_version"] = results.nccl_version;
  if (results.peer_link) {
    const PeerLink& l = *results.peer_link;
    doc["peer_link"] = {{"bytes", l.bytes},
                        {"gpus", l.gpus},
                        {"copy_bytes_per_second", l.copy},
                        {"copy_both_bytes_per_second", l.copy_both},
                        {"broadcast_bus_bytes_per_second", l.broadcast_bus},
                        {"all_gather_bus_bytes_per_second", l.all_gather_bus},
                        {"broadcast_algorithm_bytes_per_second", l.broadcast_algorithm}};
  } else {
    doc["peer_link"] = nullptr;
  }
  json& items = doc["results"];
  for (std::size_t i = 0; i < results.records.size() && i < items.size(); ++i)
    items[i]["distributed"] = figures_json(results.figures[i], results.records[i]);
  return doc;
}

std::string format_distributed_table(const DistributedResults& results, const RunContext& context) {
  std::string out = format_table(results.records, context);
  if (results.peer_link) {
    const PeerLink& l = *results.peer_link;
    out += fmt::format("\nlink between the GPUs ({} GPUs, {} MB transfers): copies {:.1f} GB/s one way (the model's "
                       "link rate for the copy engines), {:.1f} each way at once; NCCL broadcast {:.1f} GB/s bus ({:.1f} "
                       "received per GPU, the model's link rate for broadcasts), all-gather {:.1f} bus\n",
                       l.gpus, l.bytes >> 20, l.copy * 1e-9, l.copy_both * 1e-9, l.broadcast_bus * 1e-9,
                       l.broadcast_algorithm * 1e-9, l.all_gather_bus * 1e-9);
  }
  std::string notes;
  for (std::size_t i = 0; i < results.records.size(); ++i) {
    const Record& r = results.records[i];
    const DistributedFigures& f = results.figures[i];
    if (f.mode != "device" && f.mode != "host") continue;
    if (r.status != "ok") continue;
    notes += fmt::format("  {} {}x{}x{} on {} GPUs (devices {}){}:\n", r.variant, r.m, r.n, r.k, f.devices.size(),
                         devices_text(f.devices), f.scaling == "weak" ? ", weak scaling" : "");
    if (f.mode == "device") {
      std::string same;
      for (const Decomposition d : f.same_grid) same += fmt::format("; {} chose the same grid: run once", to_string(d));
      if (f.planned) {
        const DistributedModel& m = f.plan.model;
        notes += fmt::format("    {}{}\n", f.plan.describe(), same);
        if (!f.bytes_received.empty()) {
          double total = 0;
          for (const double b : f.bytes_received) total += b;
          notes += fmt::format("    received {} per GPU at most, {} in all{}; waited for panels {} ms per GPU\n",
                               gb(*std::ranges::max_element(f.bytes_received)), gb(total),
                               f.transport == PanelTransport::CopyEngines ? " (on the copy engines)"
                               : f.transport                              ? " (by broadcasts)"
                                                                          : "",
                               per_gpu_ms(f.wait_seconds));
        }
        // The slowest GPU's: its compute at the rung's rate, its panels' bytes over the link, and
        // the time its products wait for them (the first panel's fill included).
        notes += fmt::format("    model: compute {:.2f} ms per GPU at {}; comm {:.2f} ms ({} per GPU, {:.0f} MB per "
                             "panel, over {}); products waiting {:.2f} ms (fill {:.2f}) -> {:.2f} ms",
                             m.compute_seconds * 1e3,
                             f.rates.flops_per_second > 0
                                 ? fmt::format("{:.1f} TFLOP/s (the rung on one GPU's block, less its cost per "
                                               "tile: {:.0f} of K)",
                                               f.rates.flops_per_second * 1e-12, f.rates.tile_overhead_k)
                                 : std::string("a nominal rate"),
                             m.comm_seconds * 1e3, gb(m.bytes_received_per_gpu_max), m.panel_bytes_received_max * 1e-6,
                             f.rates.link_bytes_per_second > 0
                                 ? fmt::format("{:.1f} GB/s", f.rates.link_bytes_per_second * 1e-9)
                                 : std::string("a nominal link"),
                             m.wait_seconds * 1e3, m.fill_seconds * 1e3, m.model_seconds * 1e3);
        if (r.timed && m.model_seconds > 0)
          notes += fmt::format("; measured {:.2f} ms = {:.2f}x the model", r.timing.median_ms,
                               r.timing.median_ms * 1e-3 / m.model_seconds);
        notes += "\n";
      }
      if (f.t1_ms && f.efficiency)
        notes += fmt::format("    t1 {:.2f} ms ({} on 1 GPU, {}x{}x{}): {} efficiency {:.3f}\n", *f.t1_ms, f.t1_variant,
                             f.t1_shape.m, f.t1_shape.n, f.t1_shape.k, f.scaling == "weak" ? "weak-scaling" : "strong-scaling",
                             *f.efficiency);
    } else {
      if (!r.config.empty()) notes += fmt::format("    {}\n", r.config);
      if (f.ratio_to_best_xt)
        notes += fmt::format("    {:.3f}x cublasXt's best (blockDim {})\n", *f.ratio_to_best_xt, f.best_xt_block_dim);
    }
  }
  if (!notes.empty()) out += "\ndistributed runs, their plans and models:\n" + notes;
  return out;
}

}  // namespace gemmlab::bench
