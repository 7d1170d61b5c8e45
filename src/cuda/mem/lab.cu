// gemmlab mem: measures the copy ceiling, then runs the selected experiments on one
// stream with one timer and one checker.
#include <algorithm>
#include <cmath>
#include <utility>

#include "cuda/mem/check.cuh"
#include "cuda/mem/experiment.hpp"

namespace gemmlab::cuda {
namespace mem {

std::size_t streaming_buffer_bytes(const DeviceFacts& facts, double l2_multiple) {
  constexpr double kMin = 64.0 * 1024 * 1024;
  constexpr std::size_t kGranule = 64 * 1024;
  double bytes = std::max(kMin, l2_multiple * static_cast<double>(facts.l2_bytes));
  if (facts.global_memory_bytes > 0) bytes = std::min(bytes, static_cast<double>(facts.global_memory_bytes) / 8);
  const auto whole = static_cast<std::size_t>(bytes) / kGranule * kGranule;
  return std::max(whole, kGranule);
}

MemRow make_row(std::string variant, std::string param_name, long long param, double bytes, std::string note) {
  MemRow row;
  row.variant = std::move(variant);
  row.param_name = std::move(param_name);
  row.param = param;
  row.bytes = bytes;
  row.note = std::move(note);
  return row;
}

Status time_row(MemContext& ctx, MemRow& row, const std::function<Status()>& work) {
  GEMMLAB_TRY(ctx.timer.measure(ctx.stream, ctx.timing, work, row.time));
  row.gbs = row.time.median_ms > 0 ? row.bytes / (row.time.median_ms * 1e-3) * 1e-9 : 0;
  row.ratio_to_copy = ctx.copy_ceiling_gbs > 0 ? row.gbs / ctx.copy_ceiling_gbs : 0;
  row.pct_of_theoretical =
      ctx.facts.theoretical_bandwidth_gbs > 0 ? 100.0 * row.gbs / ctx.facts.theoretical_bandwidth_gbs : 0;
  return Status::ok();
}

void record_check(MemRow& row, long long mismatches) {
  row.checked = true;
  row.mismatches += mismatches;
  row.passed = row.mismatches == 0;
}

}  // namespace mem

Status run_mem(const MemOptions& o, MemReport& out) {
  std::vector<const mem::Experiment*> selected;
  for (const std::string& name : o.experiments) {
    const auto& table = mem::registry();
    const auto it = std::find_if(table.begin(), table.end(), [&](const mem::Experiment& e) { return name == e.name; });
    if (it == table.end())
      return {StatusCode::InvalidValue, "--experiments: no experiment named '" + name + "' (gemmlab mem --list shows them)"};
    selected.push_back(&*it);
  }
  if (o.experiments.empty())
    for (const mem::Experiment& e : mem::registry()) selected.push_back(&e);

  if (!device_present()) return {StatusCode::NotSupported, "no CUDA device is present on this machine"};

  // The copy ceiling of this run: cudaMemcpy device to device and the copy kernels.
  CeilingOptions ceiling_options;
  ceiling_options.device = o.device;  // chosen there; the experiments below run on it
  ceiling_options.read = ceiling_options.fma = ceiling_options.sgemm = false;
  ceiling_options.buffer_l2_multiple = o.buffer_l2_multiple;
  ceiling_options.timing = o.timing;
  out = MemReport{};
  if (o.progress) o.progress("ceilings: cudaMemcpy device to device and the copy kernels");
  GEMMLAB_TRY(measure_ceilings(ceiling_options, out.facts, out.ceilings));

  StreamOwner stream;
  GEMMLAB_TRY(make_stream(stream));
  EventTimer timer;
  GEMMLAB_TRY(timer.init());
  mem::Checker checker;
  GEMMLAB_TRY(checker.init());
  mem::MemContext ctx{out.facts, stream.get(), o.timing, out.ceilings.memcpy_gbs,
                      mem::streaming_buffer_bytes(out.facts, o.buffer_l2_multiple), checker, timer};
  for (const mem::Experiment* e : selected) {
    if (o.progress) o.progress(std::string(e->name) + ": " + e->title);
    std::vector<MemRow> rows;
    GEMMLAB_TRY(e->run(ctx, rows));
    for (MemRow& r : rows) {
      r.experiment = e->name;
      out.rows.push_back(std::move(r));
    }
  }
  CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  return Status::ok();
}

}  // namespace gemmlab::cuda
