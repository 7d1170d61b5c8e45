#include "bench/explain.hpp"

#include <fmt/format.h>

#include <map>

#include "bench/memory_plan.hpp"
#include "cpu/ladder/rungs.hpp"
#include "gemmlab/registry.hpp"
#include "cpu/thread_pool.hpp"

namespace gemmlab::bench {
namespace {

std::string key(const std::string& variant, std::int64_t m, std::int64_t n, std::int64_t k) {
  return fmt::format("{}|{}x{}x{}", variant, m, n, k);
}

KernelReport inspect_kernel(const GemmProblem& problem, const Variant& v, const cuda::DeviceFacts& facts) {
  KernelReport r;
  if (!v.kernel_info) {
    r.why_not = v.anchor ? "a vendor library: its kernels are not ours to inspect"
                         : "this rung does not name its kernel (no kernel_info)";
    return r;
  }
  if (Status s = v.kernel_info(problem, r.info); !s) {
    r.why_not = s.describe();
    return r;
  }
  if (Status s = cuda::kernel_attributes(r.info, r.attributes); !s) {
    r.why_not = s.describe();
    return r;
  }
  r.available = true;
  r.limits = sm_limits(facts, r.attributes.reserved_smem_per_block);
  r.model = occupancy(r.limits, {r.info.threads_per_block, r.attributes.registers,
                                 r.attributes.static_smem_bytes + r.info.dynamic_smem_bytes});
  r.api_agrees = r.model.blocks == r.attributes.api_blocks_per_sm;
  return r;
}

// How a tensor-core peak was reached, for the explain table.
std::string tensor_peak_text(const ExplainContext& c, DType input) {
  const cuda::DevicePeaks& p = c.peaks;
  const int per_clock = input == DType::BF16 ? p.bf16_flops
                        : input == DType::F16 ? p.f16_flops
                        : is_fp8(input)       ? p.fp8_flops
                                              : p.tf32_flops;
  // e4m3 and e5m2 share the one FP8 rate.
  const std::string_view type = input == DType::F32 ? "tf32" : is_fp8(input) ? "fp8" : to_string(input);
  return fmt::format("{}{} tensor-core peak (table: {} flops per SM per clock{}) x {} SMs x {} MHz",
                     input == DType::F32 ? "a third of the " : "", type,
                     per_clock, p.halved ? ", GeForce half rate" : "", c.facts.sm_count, c.facts.max_sm_clock_mhz);
}

// The FMA peak on one thread and on all usable cores (the same kernel, the same options).
Status measure_cpu_peaks(ExplainContext::CpuPeaks& peaks) {
  cpu::FmaPeakOptions o;
  GEMMLAB_TRY(cpu::measure_fma_peak(o, peaks.one_thread));
  o.threads = cpu::usable_cores();
  if (o.threads == 1) {
    peaks.all_cores = peaks.one_thread;
    return Status::ok();
  }
  return cpu::measure_fma_peak(o, peaks.all_cores);
}

}  // namespace

const cpu::FmaPeak& matching_peak(const ExplainContext::CpuPeaks& peaks, int threads) {
  return threads == 1 ? peaks.one_thread : peaks.all_cores;
}

CpuModel cpu_model(const GemmProblem& problem, const Config& config) {
  CpuModel m;
  const cpu::LoopOrder order = cpu::choose_loop_order(canonicalize(problem));
  m.cost = order.cost;
  constexpr const char* kLoop[] = {"i", "j", "p"};
  m.order = fmt::format("{} {} {}", kLoop[order.loops[0]], kLoop[order.loops[1]], kLoop[order.loops[2]]);
  m.caches = cpu::cache_sizes();
  const auto get = [&](const char* name) { return config.get(name, 0); };
  const long long f = sizeof(float);
  const auto add = [&](std::string tile, long long bytes, const char* cache, long long cache_bytes) {
    if (bytes > 0) m.footprints.push_back({std::move(tile), bytes, cache, cache_bytes});
  };
  add("B tile (BK, BN)", get("BK") * get("BN") * f, "L2", m.caches.l2);
  add("register block (TM, TN)", get("TM") * get("TN") * f, "registers", 0);
  add("B micro-panel (KC, NR)", get("KC") * get("NR") * f, "L1d", m.caches.l1d);
  add("A block (MC, KC)", get("MC") * get("KC") * f, "L2", m.caches.l2);
  add("B panel (KC, NC)", get("KC") * get("NC") * f, "L3", m.caches.l3);
  if (get("MR") > 0) m.micro_kernel = micro_kernel_loads(get("MR"), get("NR"), get("VEC_BITS"));
  return m;
}

Status explain(const Options& options, Executor& executor, ExplainContext& context, std::vector<Explanation>& out) {
  MemoryCheck memory;  // before the ceilings' buffers: a run that cannot fit is refused first
  GEMMLAB_TRY(check_memory(options, executor, memory));
  const bool on_cuda = executor.backend() == Backend::Cuda;
  if (on_cuda) {
    // A brief re-measure: the bound and the measurement come from the same run.
    cuda::CeilingOptions co;
    co.read = false;
    co.sgemm = false;
    co.timing = {1, 5};
    GEMMLAB_TRY(cuda::measure_ceilings(co, context.facts, context.ceilings));  // on the executor's device
    context.have_ceilings = true;
    context.peaks = cuda::device_peaks(context.facts);
  } else {
    ExplainContext::CpuPeaks peaks;
    GEMMLAB_TRY(measure_cpu_peaks(peaks));
    context.cpu_peaks = peaks;
  }
  std::map<std::string, KernelReport> kernels;
  std::map<std::string, CpuModel> cpus;
  Options o = options;
  o.inspect = [&](const GemmProblem& problem, const Variant& v, const Record& r) {
    const std::string k = key(r.variant, r.m, r.n, r.k);
    if (v.backend == Backend::Cuda) {
      kernels[k] = inspect_kernel(problem, v, context.facts);
    } else {
      CpuModel m = cpu_model(problem, v.config);
      m.threads = v.threads > 0 ? v.threads : cpu::usable_cores();
      cpus[k] = std::move(m);
    }
  };
  std::vector<Record> records;
  GEMMLAB_TRY(run(o, executor, records));
  out.clear();
  for (Record& r : records) {
    Explanation e;
    const std::string k = key(r.variant, r.m, r.n, r.k);
    if (auto it = kernels.find(k); it != kernels.end()) e.kernel = it->second;
    if (auto it = cpus.find(k); it != cpus.end()) e.cpu = it->second;
    if (e.cpu && context.cpu_peaks) {
      e.cpu->peak = matching_peak(*context.cpu_peaks, e.cpu->threads);
      if (r.timed && e.cpu->peak->gflops > 0) e.cpu->fraction_of_peak = r.gflops / e.cpu->peak->gflops;
    }
    // SIMT f32 rungs are bound by the FP32 FMA rate measured in this run; tensor-core rungs
    // by their input type's tensor-core peak from the device's table row (none is measured).
    const Variant* variant = find_variant(executor.backend(), r.variant);
    const auto dtype = parse_dtype(r.dtype);
    if (on_cuda && context.have_ceilings && variant != nullptr && dtype) {
      const double peak = cuda::peak_for(context.peaks, *dtype, variant->tensor_cores);
      if (peak > 0) {
        e.peak_gflops = peak;
        if (r.timed) e.fraction_of_peak = r.gflops / peak;
      }
      const bool simt_f32 = !variant->tensor_cores && *dtype == DType::F32;
      const double compute = simt_f32 ? context.ceilings.fma_gflops : peak;
      if (compute > 0) {
        e.roofline = roofline(r.model, context.ceilings.memcpy_gbs, compute);
        e.roofline->compute_what = simt_f32 ? "FP32 FMA rate (measured)" : tensor_peak_text(context, *dtype);
        if (r.timed && r.timing.median_ms > 0) {
          e.fraction_of_bound = e.roofline->bound_ms / r.timing.median_ms;
          e.fraction_of_seed_bound = e.roofline->seed_ms / r.timing.median_ms;
        }
      }
    }
    e.record = std::move(r);
    out.push_back(std::move(e));
  }
  return Status::ok();
}

}  // namespace gemmlab::bench
