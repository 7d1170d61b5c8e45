#include "bench/lab_report.hpp"

#include <fmt/format.h>

#include "bench/report.hpp"
#include "core/build_info.hpp"
#include "cuda/runtime/peaks.hpp"

#include <cstdlib>

namespace gemmlab::bench {
namespace {

using nlohmann::json;

std::string version(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

json build_json() {
  const BuildInfo b = build_info();
  return {{"commit", b.commit},
          {"build_type", b.build_type},
          {"version", b.version},
          {"cxx_compiler", b.cxx_compiler},
          {"cuda_compiler", b.cuda_compiler},
          {"cuda_architectures", b.cuda_architectures}};
}

json header(const char* command) {
  return {{"schema_version", kSchemaVersion}, {"tool", "gemmlab"}, {"command", command}, {"build", build_json()}};
}

json peaks_json(const cuda::DeviceFacts& f) {
  const cuda::DevicePeaks p = cuda::device_peaks(f);
  json out = {{"dram_gbs", p.dram_gbs},
              {"basis", "max SM clock x SMs x the per-SM rates of the compute capability's table row; DRAM: 2 x max "
                        "memory clock x bus width"}};
  if (!p.arch) {
    out["table_row"] = nullptr;
    return out;
  }
  out["table_row"] = fmt::format("sm_{}{} {}", p.arch->cc_major, p.arch->cc_minor, p.arch->family);
  out["fp32_lanes_per_sm"] = p.arch->fp32_lanes;
  out["geforce_half_rate"] = p.halved;
  out["fp32_gflops"] = p.fp32_gflops;
  const auto tensor = [&](const char* key, int per_clock, double gflops) {
    if (per_clock > 0) out[key] = {{"flops_per_sm_clock", per_clock}, {"gflops", gflops}};
  };
  tensor("tf32", p.tf32_flops, p.tf32_gflops);
  tensor("bf16", p.bf16_flops, p.bf16_gflops);
  tensor("f16", p.f16_flops, p.f16_gflops);
  tensor("fp8", p.fp8_flops, p.fp8_gflops);
  return out;
}

json facts_json(const cuda::DeviceFacts& f) {
  json out = {{"ordinal", f.ordinal},
          {"name", f.name},
          {"pci_bus_id", f.pci_bus_id},
          {"uuid", f.uuid},
          {"compute_capability", fmt::format("{}.{}", f.cc_major, f.cc_minor)},
          {"sm_count", f.sm_count},
          {"max_sm_clock_mhz", f.max_sm_clock_mhz},
          {"max_memory_clock_mhz", f.max_memory_clock_mhz},
          {"memory_bus_bits", f.memory_bus_bits},
          {"theoretical_bandwidth_gbs", f.theoretical_bandwidth_gbs},
          {"l2_bytes", f.l2_bytes},
          {"global_memory_bytes", f.global_memory_bytes},
          {"smem_per_block", f.smem_per_block},
          {"smem_per_block_optin", f.smem_per_block_optin},
          {"smem_per_sm", f.smem_per_sm},
          {"regs_per_sm", f.regs_per_sm},
          {"regs_per_block", f.regs_per_block},
          {"max_threads_per_sm", f.max_threads_per_sm},
          {"max_threads_per_block", f.max_threads_per_block},
          {"max_blocks_per_sm", f.max_blocks_per_sm},
          {"warp_size", f.warp_size},
          {"constant_memory_bytes", f.constant_memory_bytes},
          {"async_engines", f.async_engines},
          {"ecc", f.ecc},
          {"driver_version", version(f.driver_version)},
          {"runtime_version", version(f.runtime_version)},
          {"current_sm_clock_mhz", f.current_sm_clock_mhz},
          {"current_memory_clock_mhz", f.current_memory_clock_mhz},
          {"peaks", peaks_json(f)}};
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) out["cuda_visible_devices"] = visible;
  return out;
}

json fma_peak_json(const cpu::FmaPeak& p) {
  return {{"isa", std::string(to_string(p.isa))},
          {"kernel", p.kernel},
          {"threads", p.threads},
          {"chains", p.chains},
          {"lanes", p.lanes},
          {"gflops", p.gflops},
          {"min_gflops", p.min_gflops},
          {"max_gflops", p.max_gflops},
          {"reps", p.reps},
          {"seconds_per_rep", p.seconds_per_rep},
          {"steps_per_thread", p.steps_per_thread}};
}

json cpu_peaks_json(const ExplainContext::CpuPeaks& p) {
  return {{"one_thread", fma_peak_json(p.one_thread)}, {"all_cores", fma_peak_json(p.all_cores)}};
}

json timing_json(const cuda::Timing& t) {
  return {{"median", t.median_ms}, {"min", t.min_ms}, {"max", t.max_ms}, {"reps", t.reps}};
}

json ceilings_json(const cuda::Ceilings& c) {
  json rows = json::array();
  for (const cuda::CeilingRow& r : c.rows)
    rows.push_back({{"name", r.name},
                    {"what", r.what},
                    {"value", r.value},
                    {"unit", r.unit},
                    {"work", r.work},
                    {"time_ms", timing_json(r.time)},
                    {"checked", r.checked},
                    {"passed", r.passed},
                    {"check", r.check}});
  json out = {{"buffer_bytes", c.buffer_bytes}, {"rows", rows}};
  if (c.memcpy_gbs > 0) out["memcpy_d2d_gbs"] = c.memcpy_gbs;
  if (c.copy_kernel_gbs > 0) {
    out["copy_kernel_gbs"] = c.copy_kernel_gbs;
    out["copy_kernel"] = c.copy_kernel;
  }
  if (c.read_gbs > 0) {
    out["read_gbs"] = c.read_gbs;
    out["read_kernel"] = c.read_kernel;
  }
  if (c.fma_gflops > 0) out["fma_gflops"] = c.fma_gflops;
  if (c.sgemm_gflops > 0) {
    out["sgemm_gflops"] = c.sgemm_gflops;
    out["sgemm_n"] = c.sgemm_n;
  }
  return out;
}

std::string bytes_text(double bytes) {
  if (bytes >= 1e9) return fmt::format("{:.2f} GB", bytes * 1e-9);
  if (bytes >= 1e6) return fmt::format("{:.1f} MB", bytes * 1e-6);
  if (bytes >= 1e3) return fmt::format("{:.1f} kB", bytes * 1e-3);
  return fmt::format("{:.0f} B", bytes);
}

// The peaks computed from the facts (cuda/runtime/peaks.hpp), with how each was reached.
std::string peaks_text(const cuda::DeviceFacts& f) {
  const cuda::DevicePeaks p = cuda::device_peaks(f);
  std::string out = "\npeaks (computed at the max SM clock; dense tensor-core rates, f32 accumulation)\n";
  out += fmt::format("  {:<38} {:.0f} GB/s = 2 x {} MHz x {} bits\n", "DRAM", p.dram_gbs, f.max_memory_clock_mhz,
                     f.memory_bus_bits);
  if (!p.arch) {
    out += fmt::format("  {:<38} unknown: the table has no row for compute capability {}.{} (cuda/runtime/peaks.hpp)\n",
                       "FP32 and tensor cores", f.cc_major, f.cc_minor);
    return out;
  }
  const std::string per = fmt::format("x {} SMs x {} MHz", f.sm_count, f.max_sm_clock_mhz);
  out += fmt::format("  {:<38} {:.1f} TFLOP/s = {} lanes x 2 {} ({})\n", "FP32", p.fp32_gflops * 1e-3,
                     p.arch->fp32_lanes, per, p.arch->family);
  const auto tensor = [&](const char* name, int per_clock, double gflops) {
    if (per_clock > 0)
      out += fmt::format("  {:<38} {:.1f} TFLOP/s = {} flops per SM per clock {}{}\n", name, gflops * 1e-3, per_clock,
                         per, p.halved ? " (GeForce: half rate)" : "");
  };
  tensor("tensor cores tf32", p.tf32_flops, p.tf32_gflops);
  tensor("tensor cores bf16", p.bf16_flops, p.bf16_gflops);
  tensor("tensor cores f16", p.f16_flops, p.f16_gflops);
  tensor("tensor cores fp8", p.fp8_flops, p.fp8_gflops);
  return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> device_fields(const cuda::DeviceFacts& f) {
  std::vector<std::pair<std::string, std::string>> out;
  const json facts = facts_json(f);
  for (const auto& [key, value] : facts.items())
    out.emplace_back(key, value.is_string() ? value.get<std::string>() : value.dump());
  return out;
}

std::string format_device_table(const cuda::DeviceFacts& f, const cuda::Ceilings& c) {
  const BuildInfo b = build_info();
  std::string out = fmt::format("gemmlab device | {} | commit {} ({})\n\n", f.name, b.commit, b.build_type);
  // In the order of DeviceFacts, not alphabetical.
  const std::pair<const char*, std::string> rows[] = {
      {"device ordinal", std::to_string(f.ordinal)},
      {"PCI bus id", f.pci_bus_id},
      {"UUID", f.uuid},
      {"compute capability", fmt::format("{}.{}", f.cc_major, f.cc_minor)},
      {"SMs", std::to_string(f.sm_count)},
      {"SM clock max / now", fmt::format("{} / {} MHz", f.max_sm_clock_mhz, f.current_sm_clock_mhz)},
      {"memory clock max / now", fmt::format("{} / {} MHz", f.max_memory_clock_mhz, f.current_memory_clock_mhz)},
      {"memory bus", fmt::format("{} bits", f.memory_bus_bits)},
      {"theoretical bandwidth", fmt::format("{:.0f} GB/s (2 x clock x bus width)", f.theoretical_bandwidth_gbs)},
      {"L2", fmt::format("{} bytes", f.l2_bytes)},
      {"global memory", fmt::format("{} bytes", f.global_memory_bytes)},
      {"shared memory per block / opt-in / SM",
       fmt::format("{} / {} / {} bytes", f.smem_per_block, f.smem_per_block_optin, f.smem_per_sm)},
      {"registers per SM / block", fmt::format("{} / {}", f.regs_per_sm, f.regs_per_block)},
      {"threads per SM / block", fmt::format("{} / {}", f.max_threads_per_sm, f.max_threads_per_block)},
      {"blocks per SM", std::to_string(f.max_blocks_per_sm)},
      {"warp size", std::to_string(f.warp_size)},
      {"constant memory", fmt::format("{} bytes", f.constant_memory_bytes)},
      {"copy engines", std::to_string(f.async_engines)},
      {"ECC", f.ecc ? "on" : "off"},
      {"driver / runtime", fmt::format("{} / {}", version(f.driver_version), version(f.runtime_version))},
  };
  for (const auto& [name, value] : rows) out += fmt::format("  {:<38} {}\n", name, value);
  out += peaks_text(f);
  out += fmt::format("\nmeasured ceilings (CUDA events, median; buffers of {} each)\n", bytes_text(static_cast<double>(c.buffer_bytes)));
  out += fmt::format("  {:<16} {:>12} {:<8} {:>10} {:>5}  {:<44} {}\n", "name", "value", "unit", "median ms", "reps",
                     "check", "how");
  for (const cuda::CeilingRow& r : c.rows)
    out += fmt::format("  {:<16} {:>12.1f} {:<8} {:>10.4f} {:>5}  {:<44} {}\n", r.name, r.value, r.unit,
                       r.time.median_ms, r.time.reps, r.check, r.what);
  out += "\nsummary\n";
  if (c.memcpy_gbs > 0) out += fmt::format("  copy ceiling (cudaMemcpy D2D)   {:.0f} GB/s\n", c.memcpy_gbs);
  if (c.copy_kernel_gbs > 0)
    out += fmt::format("  best copy kernel                {:.0f} GB/s ({}, {:.3f}x cudaMemcpy)\n", c.copy_kernel_gbs,
                       c.copy_kernel, c.memcpy_gbs > 0 ? c.copy_kernel_gbs / c.memcpy_gbs : 0);
  if (c.read_gbs > 0)
    out += fmt::format("  read-only                       {:.0f} GB/s ({}, {:.1f}% of theoretical)\n", c.read_gbs,
                       c.read_kernel,
                       f.theoretical_bandwidth_gbs > 0 ? 100 * c.read_gbs / f.theoretical_bandwidth_gbs : 0);
  if (c.fma_gflops > 0) {
    const double peak = cuda::device_peaks(f).fp32_gflops;
    out += fmt::format("  FP32 FMA rate                   {:.1f} TFLOP/s{}\n", c.fma_gflops * 1e-3,
                       peak > 0 ? fmt::format(" ({:.1f}% of the FP32 peak)", 100 * c.fma_gflops / peak) : "");
  }
  if (c.sgemm_gflops > 0)
    out += fmt::format("  cuBLAS SGEMM {}^3             {:.1f} TFLOP/s\n", c.sgemm_n, c.sgemm_gflops * 1e-3);
  return out;
}

json device_json(const cuda::DeviceFacts& f, const cuda::Ceilings& c) {
  json doc = header("device");
  doc["device"] = facts_json(f);
  doc["ceilings"] = ceilings_json(c);
  return doc;
}

std::string format_devices_table(const std::vector<cuda::DeviceFacts>& all) {
  const BuildInfo b = build_info();
  std::string out = fmt::format("gemmlab device --all | {} visible | commit {} ({})\n", all.size(), b.commit,
                                b.build_type);
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) out += fmt::format("CUDA_VISIBLE_DEVICES={}\n", visible);
  out += fmt::format("\n{:>3}  {:<28} {:<13} {:>4} {:>4} {:>6} {:>8} {:>7} {:>9} {:>9} {:>9}  {}\n", "#", "name",
                     "PCI bus id", "cc", "SMs", "MHz", "memory", "DRAM", "FP32", "tf32", "bf16", "UUID");
  out += fmt::format("{:>3}  {:<28} {:<13} {:>4} {:>4} {:>6} {:>8} {:>7} {:>9} {:>9} {:>9}\n", "", "", "", "", "",
                     "max", "GiB", "GB/s", "TFLOP/s", "TFLOP/s", "TFLOP/s");
  const auto tflops = [](double gflops) { return gflops > 0 ? fmt::format("{:.1f}", gflops * 1e-3) : std::string("?"); };
  for (const cuda::DeviceFacts& f : all) {
    const cuda::DevicePeaks p = cuda::device_peaks(f);
    out += fmt::format("{:>3}  {:<28} {:<13} {:>4} {:>4} {:>6} {:>8.1f} {:>7.0f} {:>9} {:>9} {:>9}  {}\n", f.ordinal,
                       f.name, f.pci_bus_id, fmt::format("{}.{}", f.cc_major, f.cc_minor), f.sm_count,
                       f.max_sm_clock_mhz, static_cast<double>(f.global_memory_bytes) / (1 << 30), p.dram_gbs,
                       tflops(p.fp32_gflops), tflops(p.tf32_gflops), tflops(p.bf16_gflops), f.uuid);
  }
  out += "\nPeaks computed at the max SM clock (dense tensor cores, f32 accumulation; ? where the table has no "
         "row).\ngemmlab device --device N prints one device's every fact and measures its ceilings.\n";
  return out;
}

json devices_json(const std::vector<cuda::DeviceFacts>& all) {
  json list = json::array();
  for (const cuda::DeviceFacts& f : all) list.push_back(facts_json(f));
  return list;
}

std::string format_mem_table(const cuda::MemReport& m) {
  const BuildInfo b = build_info();
  std::string out = fmt::format("gemmlab mem | {} | commit {} ({})\n", m.facts.name, b.commit, b.build_type);
  out += fmt::format("copy ceiling: cudaMemcpy D2D {:.0f} GB/s (read + written); theoretical {:.0f} GB/s; "
                     "buffers of {}\n",
                     m.ceilings.memcpy_gbs, m.facts.theoretical_bandwidth_gbs,
                     bytes_text(static_cast<double>(m.ceilings.buffer_bytes)));
  std::string current;
  for (const cuda::MemRow& r : m.rows) {
    if (r.experiment != current) {
      current = r.experiment;
      out += fmt::format("\n{}\n", current);
      out += fmt::format("  {:<20} {:>18} {:>10} {:>9} {:>9} {:>7}  {:<8} {}\n", "variant", "param", "median ms",
                         "GB/s", "x copy", "% peak", "check", "target / note");
    }
    const std::string param = r.param_name.empty() ? "" : fmt::format("{}={}", r.param_name, r.param);
    const std::string check = !r.checked ? "-" : r.passed ? "ok" : fmt::format("FAIL {}", r.mismatches);
    std::string tail = r.target.empty() ? r.note : fmt::format("{} [{}] {}", r.target, r.target_met ? "met" : "NOT met", r.note);
    out += fmt::format("  {:<20} {:>18} {:>10.4f} {:>9.1f} {:>9.3f} {:>7.1f}  {:<8} {}\n", r.variant, param,
                       r.time.median_ms, r.gbs, r.ratio_to_copy, r.pct_of_theoretical, check, tail);
  }
  return out;
}

std::string format_mem_csv(const cuda::MemReport& m) {
  std::string out =
      "experiment,variant,param_name,param,bytes,reps,median_ms,min_ms,max_ms,gbs,ratio_to_copy,pct_of_theoretical,"
      "checked,passed,mismatches,target,target_met,note\n";
  for (const cuda::MemRow& r : m.rows) {
    std::string note = r.note;
    for (char& ch : note)
      if (ch == '"') ch = '\'';
    out += fmt::format("{},{},{},{},{:.0f},{},{:.6f},{:.6f},{:.6f},{:.3f},{:.4f},{:.2f},{},{},{},\"{}\",{},\"{}\"\n",
                       r.experiment, r.variant, r.param_name, r.param, r.bytes, r.time.reps, r.time.median_ms,
                       r.time.min_ms, r.time.max_ms, r.gbs, r.ratio_to_copy, r.pct_of_theoretical, r.checked ? 1 : 0,
                       r.passed ? 1 : 0, r.mismatches, r.target, r.target_met ? 1 : 0, note);
  }
  return out;
}

json mem_json(const cuda::MemReport& m) {
  json doc = header("mem");
  doc["device"] = facts_json(m.facts);
  doc["ceilings"] = ceilings_json(m.ceilings);
  json rows = json::array();
  for (const cuda::MemRow& r : m.rows) {
    json item = {{"experiment", r.experiment},
                 {"variant", r.variant},
                 {"param_name", r.param_name},
                 {"param", r.param},
                 {"bytes", r.bytes},
                 {"time_ms", timing_json(r.time)},
                 {"gbs", r.gbs},
                 {"ratio_to_copy", r.ratio_to_copy},
                 {"pct_of_theoretical", r.pct_of_theoretical},
                 {"checked", r.checked},
                 {"passed", r.passed},
                 {"mismatches", r.mismatches},
                 {"note", r.note}};
    if (!r.target.empty()) {
      item["target"] = r.target;
      item["target_met"] = r.target_met;
    }
    rows.push_back(std::move(item));
  }
  doc["results"] = std::move(rows);
  doc["passed"] = m.passed();
  return doc;
}

json explanation_json(const Explanation& e) {
  json out = json::object();
  if (e.roofline) {
    const Roofline& r = *e.roofline;
    out["model"] = {{"flops", r.flops},
                    {"global_load_bytes", r.load_bytes},
                    {"global_loads_words", r.load_bytes / 4},
                    {"cgma", r.cgma},
                    {"min_dram_bytes", r.min_dram_bytes},
                    {"intensity_flops_per_byte", r.intensity},
                    {"launches", e.record.model.launches}};
    out["roofline"] = {{"bandwidth_gbs", r.bandwidth_gbs},
                       {"compute_gflops", r.compute_gflops},
                       {"compute_ceiling", r.compute_what},
                       {"ridge_flops_per_byte", r.ridge},
                       {"compute_ms", r.compute_ms},
                       {"memory_ms", r.memory_ms},
                       {"bound_ms", r.bound_ms},
                       {"bound_by", r.memory_bound ? "memory" : "compute"},
                       {"seed_bound_gflops", r.seed_gflops},
                       {"seed_bound_ms", r.seed_ms}};
  }
  if (e.fraction_of_bound) out["fraction_of_bound"] = *e.fraction_of_bound;
  if (e.fraction_of_seed_bound) out["fraction_of_seed_bound"] = *e.fraction_of_seed_bound;
  if (e.peak_gflops) out["peak_gflops"] = *e.peak_gflops;
  if (e.fraction_of_peak) out["fraction_of_peak"] = *e.fraction_of_peak;
  if (e.kernel) {
    const KernelReport& k = *e.kernel;
    if (!k.available) {
      out["kernel"] = {{"available", false}, {"why", k.why_not}};
    } else {
      const Occupancy& o = k.model;
      json binding = json::array();
      for (Limiter l : o.binding) binding.push_back(std::string(to_string(l)));
      out["kernel"] = {{"available", true},
                       {"name", k.info.name},
                       {"threads_per_block", k.info.threads_per_block},
                       {"registers_per_thread", k.attributes.registers},
                       {"static_smem_bytes", k.attributes.static_smem_bytes},
                       {"dynamic_smem_bytes", k.info.dynamic_smem_bytes},
                       {"local_bytes_per_thread", k.attributes.local_bytes},
                       {"reserved_smem_per_block", k.attributes.reserved_smem_per_block},
                       {"ptx_version", k.attributes.ptx_version},
                       {"binary_version", k.attributes.binary_version}};
      out["occupancy"] = {{"blocks_per_sm", o.blocks},
                          {"by_threads", o.by_threads},
                          {"by_registers", o.by_registers},
                          {"by_smem", o.by_smem},
                          {"by_blocks", o.by_blocks},
                          {"limiter", std::string(to_string(o.limiter))},
                          {"binding", binding},
                          {"warps_per_sm", o.warps},
                          {"fraction", o.fraction},
                          {"api_blocks_per_sm", k.attributes.api_blocks_per_sm},
                          {"api_agrees", k.api_agrees}};
    }
  }
  if (e.cpu) {
    const CpuModel& c = *e.cpu;
    json footprints = json::array();
    for (const CpuModel::Footprint& f : c.footprints)
      footprints.push_back({{"tile", f.tile}, {"bytes", f.bytes}, {"cache", f.cache}, {"cache_bytes", f.cache_bytes}});
    out["cpu_model"] = {{"cm_i", c.cost[0]},
                        {"cm_j", c.cost[1]},
                        {"cm_p", c.cost[2]},
                        {"order_outermost_first", c.order},
                        {"l1d_bytes", c.caches.l1d},
                        {"l2_bytes", c.caches.l2},
                        {"l3_bytes", c.caches.l3},
                        {"cache_source", c.caches.source},
                        {"footprints", footprints},
                        {"threads", c.threads}};
    if (c.micro_kernel) {
      const MicroKernelLoads& l = *c.micro_kernel;
      out["cpu_model"]["micro_kernel"] = {{"lanes", l.lanes},
                                          {"fmas_per_step", l.fmas},
                                          {"broadcasts_per_step", l.broadcasts},
                                          {"vector_loads_per_step", l.vector_loads},
                                          {"loads_per_step", l.loads()},
                                          {"fma_per_load", l.fma_per_load()}};
    }
    if (c.peak) out["cpu_model"]["peak"] = fma_peak_json(*c.peak);
    if (c.fraction_of_peak) out["cpu_model"]["fraction_of_peak"] = *c.fraction_of_peak;
  }
  return out;
}

std::string format_explain_table(const std::vector<Explanation>& list, const ExplainContext& ctx) {
  const BuildInfo b = build_info();
  std::string out;
  for (const Explanation& e : list) {
    const Record& r = e.record;
    const std::string types = r.out_dtype == "f32" ? r.dtype : fmt::format("{} (C in {})", r.dtype, r.out_dtype);
    out += fmt::format("\ngemmlab explain {} | {} | {}x{}x{} {} {} {} | {} | commit {}\n", r.variant, r.backend, r.m,
                       r.n, r.k, types, r.trans, r.layout, r.backend == "cuda" ? ctx.facts.name : std::string("host"),
                       b.commit);
    out += fmt::format("  technique: {}\n  config:    {}\n", r.technique, r.config);
    if (r.status != "ok") {
      out += fmt::format("  {}: {}\n", r.status, r.message);
      continue;
    }
    const Traffic& t = r.model;
    out += "model (the rung's Traffic; seed 003 §4.1)\n";
    out += fmt::format("  flops                      {:.4g}\n", t.flops);
    out += fmt::format("  global loads issued        {:.4g} words ({})\n", t.global_load_bytes / 4,
                       bytes_text(t.global_load_bytes));
    out += fmt::format("  CGMA                       {:.3g} flops per word loaded\n", t.cgma);
    out += fmt::format("  minimum DRAM traffic       {} (inputs read once, C written once)\n", bytes_text(t.min_dram_bytes));
    out += fmt::format("  arithmetic intensity       {:.1f} flops per DRAM byte\n",
                       t.min_dram_bytes > 0 ? t.flops / t.min_dram_bytes : 0.0);
    if (t.smem_bytes_per_block > 0 || t.threads_per_block > 0)
      out += fmt::format("  per block (model)          {} threads, {} bytes of shared memory\n", t.threads_per_block,
                         t.smem_bytes_per_block);
    if (t.launches > 1)
      out += fmt::format("  launches (model)           {} sub-grids in sequence: one grid cannot cover {}x{}x{} "
                         "(seed 002's second level of blocking)\n",
                         t.launches, r.m, r.n, r.k);
    if (e.roofline) {
      const Roofline& rl = *e.roofline;
      out += "ceilings (measured in this run)\n";
      out += fmt::format("  copy bandwidth             {:.0f} GB/s (cudaMemcpy D2D, read + written)\n", rl.bandwidth_gbs);
      out += fmt::format("  compute                    {:.1f} TFLOP/s: {}\n", rl.compute_gflops * 1e-3, rl.compute_what);
      out += "bounds\n";
      out += fmt::format("  roofline                   {:.4f} ms = max(compute {:.4f} ms, DRAM {:.4f} ms): {}-bound "
                         "(ridge {:.1f} flops/byte)\n",
                         rl.bound_ms, rl.compute_ms, rl.memory_ms, rl.memory_bound ? "memory" : "compute", rl.ridge);
      out += fmt::format("  seed 003 bound             {:.4f} ms: every load from DRAM, CGMA x BW / 4 = {:.2f} TFLOP/s\n",
                         rl.seed_ms, rl.seed_gflops * 1e-3);
    } else if (r.backend == "cuda") {
      out += fmt::format("bounds\n  n/a: no compute ceiling for {} here (the peak table has no row for compute "
                         "capability {}.{})\n", r.dtype, ctx.facts.cc_major, ctx.facts.cc_minor);
    }
    if (e.kernel) {
      const KernelReport& k = *e.kernel;
      out += "kernel (cudaFuncGetAttributes)\n";
      if (!k.available) {
        out += fmt::format("  n/a: {}\n", k.why_not);
      } else {
        out += fmt::format("  {}: {} threads/block, {} registers/thread, shared {} static + {} dynamic bytes "
                           "(+{} reserved), local {} bytes/thread\n",
                           k.info.name, k.info.threads_per_block, k.attributes.registers, k.attributes.static_smem_bytes,
                           k.info.dynamic_smem_bytes, k.attributes.reserved_smem_per_block, k.attributes.local_bytes);
        const Occupancy& o = k.model;
        std::string binding;
        for (Limiter l : o.binding) binding += (binding.empty() ? "" : ", ") + std::string(to_string(l));
        out += "occupancy (seed 003 §4.4)\n";
        out += fmt::format("  blocks/SM by threads {}, by registers {}, by shared memory {}, by block slots {}\n",
                           o.by_threads, o.by_registers, o.by_smem, o.by_blocks);
        out += fmt::format("  model: {} blocks/SM = {} warps ({:.0f}% of {}), limited by {}\n", o.blocks, o.warps,
                           100 * o.fraction, k.limits.max_threads / std::max(1, k.limits.warp_size), binding);
        out += fmt::format("  occupancy API: {} blocks/SM ({})\n", k.attributes.api_blocks_per_sm,
                           k.api_agrees ? "agrees" : "DISAGREES with the model");
      }
    }
    if (e.cpu) {
      const CpuModel& c = *e.cpu;
      out += "seed 002 model (innermost-loop cost CM, cache lines per execution)\n";
      out += fmt::format("  CM(i) {:.4g}  CM(j) {:.4g}  CM(p) {:.4g}  -> order {} (outermost first)\n", c.cost[0],
                         c.cost[1], c.cost[2], c.order);
      out += fmt::format("  caches: L1d {} KiB, L2 {} KiB, L3 {} KiB ({})\n", c.caches.l1d >> 10, c.caches.l2 >> 10,
                         c.caches.l3 >> 10, c.caches.source);
      for (const CpuModel::Footprint& f : c.footprints)
        out += f.cache_bytes > 0
                   ? fmt::format("  {:<26} {:>10} bytes = {:.0f}% of {}\n", f.tile, f.bytes,
                                 100.0 * static_cast<double>(f.bytes) / static_cast<double>(f.cache_bytes), f.cache)
                   : fmt::format("  {:<26} {:>10} bytes ({})\n", f.tile, f.bytes, f.cache);
      if (c.micro_kernel) {
        const MicroKernelLoads& l = *c.micro_kernel;
        out += fmt::format("  micro-kernel per k step    {} vector FMAs per {} loads ({} broadcasts of A + {} vectors "
                           "of B, {} lanes) = {:.2f} FMA per load\n",
                           l.fmas, l.loads(), l.broadcasts, l.vector_loads, l.lanes, l.fma_per_load());
      }
      if (c.peak) {
        const cpu::FmaPeak& p = *c.peak;
        out += "FMA peak (register-only kernel, measured in this run)\n";
        out += fmt::format("  {} on {} thread{}: {:.1f} GFLOP/s (median of {}, {:.1f}-{:.1f}; {} chains x {} lanes)\n",
                           p.kernel, p.threads, p.threads == 1 ? "" : "s", p.gflops, p.reps, p.min_gflops,
                           p.max_gflops, p.chains, p.lanes);
      }
    }
    out += "measured\n";
    if (r.timed) {
      const double rate = r.gflops;
      out += fmt::format("  median {:.4f} ms over {} reps = {:.2f} {}", r.timing.median_ms, r.timing.reps,
                         r.backend == "cuda" ? rate * 1e-3 : rate, r.backend == "cuda" ? "TFLOP/s" : "GFLOP/s");
      if (r.ratio_to_anchor) out += fmt::format(", {:.3f}x {}", *r.ratio_to_anchor, r.anchor_variant);
      out += "\n";
    } else {
      out += "  not timed\n";
    }
    if (e.cpu && e.cpu->fraction_of_peak)
      out += fmt::format("  {:.1f}% of the FMA peak on {} thread{} ({:.1f} GFLOP/s, {})\n", 100 * *e.cpu->fraction_of_peak,
                         e.cpu->peak->threads, e.cpu->peak->threads == 1 ? "" : "s", e.cpu->peak->gflops,
                         to_string(e.cpu->peak->isa));
    if (e.fraction_of_bound)
      out += fmt::format("  {:.1f}% of the roofline bound; {:.1f}% of the seed 003 bound\n", 100 * *e.fraction_of_bound,
                         100 * e.fraction_of_seed_bound.value_or(0));
    if (e.fraction_of_peak)
      out += fmt::format("  {:.1f}% of the {} peak ({:.1f} TFLOP/s at the max SM clock)\n", 100 * *e.fraction_of_peak,
                         r.dtype, *e.peak_gflops * 1e-3);
    if (r.verified)
      out += fmt::format("  verification: {} (rel. error {:.1e})\n", r.verification.passed ? "ok" : r.verification.summary(),
                         r.verification.rel_frobenius);
  }
  return out;
}

json explain_json(const std::vector<Explanation>& list, const ExplainContext& ctx) {
  json doc = header("explain");
  if (ctx.have_ceilings) {
    doc["device"] = facts_json(ctx.facts);
    doc["ceilings"] = ceilings_json(ctx.ceilings);
  }
  if (ctx.cpu_peaks) doc["cpu_peak"] = cpu_peaks_json(*ctx.cpu_peaks);
  json results = json::array();
  for (const Explanation& e : list) {
    const Record& r = e.record;
    json item = {{"backend", r.backend}, {"variant", r.variant}, {"dtype", r.dtype}, {"out_dtype", r.out_dtype},
                 {"technique", r.technique},
                 {"config", r.config},
                 {"m", r.m}, {"n", r.n}, {"k", r.k}, {"trans", r.trans}, {"layout", r.layout},
                 {"status", r.status}, {"message", r.message}, {"seed", r.seed}};
    if (r.timed) {
      item["time_ms"] = {{"median", r.timing.median_ms}, {"min", r.timing.min_ms}, {"max", r.timing.max_ms},
                         {"reps", r.timing.reps}};
      item["gflops"] = r.gflops;
    }
    if (r.ratio_to_anchor) item["ratio_to_anchor"] = *r.ratio_to_anchor;
    if (r.verified) item["verification"] = {{"passed", r.verification.passed}, {"rel_frobenius", r.verification.rel_frobenius}};
    if (!e.roofline)  // CPU: the rung's model without a roofline
      item["model"] = {{"flops", r.model.flops}, {"global_load_bytes", r.model.global_load_bytes},
                       {"cgma", r.model.cgma}, {"min_dram_bytes", r.model.min_dram_bytes}};
    item["explain"] = explanation_json(e);
    results.push_back(std::move(item));
  }
  doc["results"] = std::move(results);
  return doc;
}

void attach_explanations(json& doc, const std::vector<Explanation>& explanations, const ExplainContext& ctx) {
  if (ctx.have_ceilings) {
    doc["explain_device"] = facts_json(ctx.facts);
    doc["explain_ceilings"] = ceilings_json(ctx.ceilings);
  }
  if (ctx.cpu_peaks) doc["explain_cpu_peak"] = cpu_peaks_json(*ctx.cpu_peaks);
  json& results = doc["results"];
  for (std::size_t i = 0; i < explanations.size() && i < results.size(); ++i)
    results[i]["explain"] = explanation_json(explanations[i]);
}

}  // namespace gemmlab::bench
