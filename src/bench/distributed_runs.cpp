#include "bench/distributed_runs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "bench/memory_plan.hpp"
#include "core/out_of_core_plan.hpp"
#include "cuda/backend.hpp"
#include "cuda/distributed.hpp"
#include "gemmlab/gemm.hpp"
#include "gemmlab/registry.hpp"

namespace gemmlab::bench {
namespace {

// Repetitions of one GPU's block product for the model's compute rate, after running it back
// to back for at least this long: the timed runs of a job hold the GPU busy for longer than a
// few short products, and at bf16's power draw the clock drops within that time (on an H200,
// a 8192 x 16384 x 16384 block timed cold ran about 10 % faster than inside the bench's runs).
constexpr int kLocalRateReps = 3;
constexpr double kLocalRateWarmMs = 200;
constexpr int kLocalRateWarmRunsMax = 1000;  // (tiny products: launches, not the clock)
// The tile overhead is measured only where a quarter of K is at least this long.
constexpr std::int64_t kOverheadMinK = 1024;
// Device memory left free beside a GPU's operands (libraries, NCCL's own buffers, module code).
constexpr std::uint64_t kDeviceMargin = std::uint64_t{1} << 30;

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t half = values.size() / 2;
  return values.size() % 2 == 1 ? values[half] : 0.5 * (values[half - 1] + values[half]);
}

void fail(Entry& e, const Status& s) {
  // What the machine cannot hold is a skip with its reason; anything else an error.
  e.record.status = s.code() == StatusCode::AllocFailed || s.code() == StatusCode::NotSupported ? "skipped" : "error";
  e.record.message = s.code() == StatusCode::AllocFailed ? s.message() : s.describe();
}

// The job's runs find C as the problem starts before every warm-up call too.
void check_and_time(const Options& o, Executor& timer, const HostProblem& host, const SampledCheck& check,
                    HostCalls calls, Record& r) {
  calls.restore_c_for_warmup = true;
  verify_and_time(o, timer, host, check, calls, r);
}

// AllocFailed naming the first GPU whose free memory cannot hold `need[rank]` and the margin.
Status check_device_memory(const std::vector<int>& devices, const std::vector<std::uint64_t>& need,
                           const std::string& what) {
  for (std::size_t rank = 0; rank < devices.size(); ++rank) {
    std::uint64_t free = 0;
    GEMMLAB_TRY(cuda::free_device_bytes(devices[rank], free));
    if (free < need[rank] + kDeviceMargin)
      return {StatusCode::AllocFailed,
              fmt::format("{} need {} on GPU {} (device {}), which has {} free ({} kept for the libraries)", what,
                          format_bytes(need[rank]), rank, devices[rank], format_bytes(free),
                          format_bytes(kDeviceMargin))};
  }
  return cuda::make_current(devices.front());  // free_device_bytes made each current in turn
}

// The rung on GPU `rank` 0's block of C (the largest: the first parts of a balanced cut are the
// longer), on the first GPU: its fixed cost per output tile from the block with all of K and
// with a quarter of it (t = c0 + c1 k: c0 / c1 in units of K), and its rate with all of K taken
// back to a block without that cost, as DistributedRates means them. Values are the host
// operands' first bytes (values do not change the rate). Both 0 where the block does not fit
// beside what the GPU holds (the model then assumes nominal figures); the overhead 0 where K
// is too short to cut or the times too close to tell it.
Status local_rate(const Options& o, const DistributedJob& job, const HostProblem& host, const ProcessGrid& grid,
                  DistributedRates& rates) {
  rates.flops_per_second = 0;
  rates.tile_overhead_k = 0;
  rates.tile_m = rates.tile_n = 0;
  const GemmProblem& hp = host.problem;
  const LocalBlocks blocks = local_blocks(hp.m, hp.n, hp.k, grid, 0);
  const Shape block{blocks.rows.count, blocks.cols.count, hp.k};
  if (block.m == 0 || block.n == 0 || block.k == 0) return Status::ok();
  Options local = o;
  local.ld_padding = 0;
  const OperandLayout l = operand_layout(local, block);
  std::unique_ptr<Executor> ex;
  GEMMLAB_TRY(make_cuda_executor(ex, job.devices.front()));
  GemmProblem p = hp;
  p.m = block.m;
  p.n = block.n;
  p.k = block.k;
  p.a = l.a;
  p.b = l.b;
  p.c = l.c;
  p.alpha = 1.0;
  p.beta = 0.0;
  const GemmOptions rung{job.variant, o.config};
  Variant v;
  // The workspace bound of the rung the whole problem takes, for the check; then the rung the
  // block itself takes, for the run (auto may choose per shape).
  GEMMLAB_TRY(resolve_variant(ex->context(), hp, rung, v));
  const std::uint64_t a = matrix_bytes(l.a), b = matrix_bytes(l.b), c = matrix_bytes(l.c);
  if (!check_device_memory({job.devices.front()}, {a + b + c + workspace_bound(v, o, block)}, "one GPU's block"))
    return Status::ok();
  std::unique_ptr<Buffer> da, db, dc;
  GEMMLAB_TRY(ex->allocate(a, da));
  GEMMLAB_TRY(ex->allocate(b, db));
  GEMMLAB_TRY(ex->allocate(c, dc));
  GEMMLAB_TRY(ex->upload(da->data(), hp.a.data, std::min(a, matrix_bytes(hp.a))));
  GEMMLAB_TRY(ex->upload(db->data(), hp.b.data, std::min(b, matrix_bytes(hp.b))));
  p.a.data = da->data();
  p.b.data = db->data();
  p.c.data = dc->data();
  GEMMLAB_TRY(resolve_variant(ex->context(), p, rung, v));
  rates.tile_m = v.config.get("BM", 0);  // the tile the model counts waves in
  rates.tile_n = v.config.get("BN", 0);
  const auto median_ms = [&](const GemmProblem& product, double& ms) -> Status {
    GEMMLAB_TRY(gemm(ex->context(), product, v));  // the workspace
    double warm = 0;
    for (int run = 0; warm < kLocalRateWarmMs && run < kLocalRateWarmRunsMax; ++run, warm += ms)
      GEMMLAB_TRY(ex->time_once([&] { return gemm(ex->context(), product, v); }, ms));
    std::vector<double> samples;
    for (int rep = 0; rep < kLocalRateReps; ++rep) {
      GEMMLAB_TRY(ex->flush_caches(o.flush));
      GEMMLAB_TRY(ex->time_once([&] { return gemm(ex->context(), product, v); }, ms));
      samples.push_back(ms);
    }
    ms = median(samples);
    return Status::ok();
  };
  double whole_ms = 0;
  GEMMLAB_TRY(median_ms(p, whole_ms));
  if (block.k / 4 >= kOverheadMinK) {
    // A quarter of K: the first quarter of A's columns (or rows under T) and of B's rows
    // (columns under T), in the same storage.
    GemmProblem quarter = p;
    quarter.k = block.k / 4;
    (p.op_a == Op::N ? quarter.a.cols : quarter.a.rows) = quarter.k;
    (p.op_b == Op::N ? quarter.b.rows : quarter.b.cols) = quarter.k;
    double quarter_ms = 0;
    // A rung that cannot take the quarter leaves the overhead unmeasured, not the rate.
    if (const Status s = median_ms(quarter, quarter_ms); !s) {
      if (s.code() != StatusCode::NotSupported) return s;
    } else {
      const double per_k = (whole_ms - quarter_ms) / static_cast<double>(block.k - quarter.k);
      if (per_k > 0) rates.tile_overhead_k = std::max(1.0, (whole_ms - per_k * static_cast<double>(block.k)) / per_k);
    }
  }
  const double measured = 2.0 * static_cast<double>(block.m) * static_cast<double>(block.n) *
                          static_cast<double>(block.k) / (whole_ms * 1e-3);
  rates.flops_per_second =
      measured / block_efficiency(block.m, block.n, block.k, cuda::device_sm_count(), rates.tile_overhead_k,
                                  rates.tile_m, rates.tile_n);
  return Status::ok();
}

// One grid the job runs on device operands: the decomposition that asked for it first and the
// others that chose the same grid.
struct GridRun {
  Decomposition decomposition = Decomposition::Summa;
  ProcessGrid grid;
  std::vector<Decomposition> same_grid;
  Status status = Status::ok();  // InvalidValue where the grid cannot be made (m < P)
};

std::vector<GridRun> grid_runs(const DistributedJob& job, const Shape& shape) {
  std::vector<GridRun> runs;
  const int gpus = static_cast<int>(job.devices.size());
  for (const Decomposition d : job.decompositions) {
    GridRun run;
    run.decomposition = d;
    run.status = decomposition_grid(d, gpus, shape.m, shape.n, run.grid);
    const auto same = std::find_if(runs.begin(), runs.end(),
                                   [&](const GridRun& r) { return r.status && run.status && r.grid == run.grid; });
    if (same != runs.end()) same->same_grid.push_back(d);
    else runs.push_back(std::move(run));
  }
  return runs;
}

std::string device_technique(const GridRun& g, int gpus, const std::string& scaling, PanelTransport transport) {
  const std::string what = g.grid.only_b_moves()   ? "B's panels"
                           : g.grid.only_a_moves() ? "A's panels"
                                                   : "A's panels along grid rows, B's along columns,";
  const bool copy_engines = transport == PanelTransport::CopyEngines && g.grid.one_operand_moves();
  const std::string how = what + (copy_engines ? " all-gathered on NCCL's copy engines" : " broadcast over NCCL");
  return fmt::format("{} GPUs, device operands, {} grid: {}{}", gpus, grid_text(g.grid), how,
                     scaling == "weak" ? fmt::format(" (weak scaling: {}x the rows)", gpus) : "");
}

// gemm_distributed() on operands uploaded into every GPU's blocks, as the grid cuts them.
void run_device(const Options& o, Executor& timer, const DistributedJob& job, DeviceGroup& group,
                const HostProblem& host, const SampledCheck& check, const GridRun& g, const DistributedRates& rates,
                Entry& e) {
  const GemmProblem& hp = host.problem;
  DistributedFigures& f = e.figures;
  f.decomposition = g.decomposition;
  f.same_grid = g.same_grid;
  f.grid = g.grid;
  f.rates = rates;
  if (!g.status) {  // no such grid for this shape (fewer rows than GPUs): nothing to run
    e.record.status = "skipped";
    e.record.message = g.status.message();
    return;
  }
  DistributedGemmProblem dp;
  dp.m = hp.m;
  dp.n = hp.n;
  dp.k = hp.k;
  dp.op_a = hp.op_a;
  dp.op_b = hp.op_b;
  dp.alpha = hp.alpha;
  dp.beta = hp.beta;
  dp.compute = hp.compute;
  dp.decomposition = g.decomposition;
  // Each GPU's blocks must fit beside what the libraries keep, before any is allocated.
  std::vector<std::uint64_t> need;
  Status s = distributed_block_bytes(o, {hp.m, hp.n, hp.k}, g.decomposition, group.size(), need);
  if (s) s = check_device_memory(group.devices(), need, "its blocks of A, B and C");
  DistributedBuffers buffers;
  if (s) s = DistributedBuffers::allocate(group, dp, hp.a, hp.b, hp.c, buffers);
  if (s) s = buffers.upload(group, dp, Operand::A, hp.a);
  if (s) s = buffers.upload(group, dp, Operand::B, hp.b);
  DistributedOptions options;
  options.local = GemmOptions{job.variant, o.config};
  options.device_memory_limit = job.device_memory_limit;
  options.broadcast_ctas = job.broadcast_ctas;
  options.transport = job.transport;
  options.cut = job.cut;
  options.panel_width = job.panel_width;
  options.rates = rates;
  if (s) s = plan_distributed(group, dp, options, f.plan);
  if (!s) {
    (void)cuda::make_current(job.devices.front());
    return fail(e, s);
  }
  f.planned = true;
  e.record.config = f.plan.describe();
  DistributedRun last;
  std::vector<DistributedRun> timed;
  HostCalls calls;
  calls.call = [&] { return gemm_distributed(group, dp, options, &last); };
  calls.set_up_check = calls.restore_c = [&] {
    host.reset_c();
    return buffers.upload(group, dp, Operand::C, hp.c);
  };
  calls.result_to_host = [&] { return buffers.download(group, dp, Operand::C, hp.c); };
  calls.after_timed_call = [&] { timed.push_back(last); };
  calls.tolerance = [&]() -> std::optional<Tolerance> {
    const Variant* v = find_variant(Backend::Cuda, last.variant);
    return v ? v->tolerance : std::nullopt;
  };
  check_and_time(o, timer, host, check, calls, e.record);
  f.local_variant = last.variant;
  f.local_config = last.config;
  if (!last.plan.panels.empty()) f.plan = last.plan;  // the plan the calls ran
  const std::vector<DistributedRun>& runs = timed.empty() ? std::vector<DistributedRun>{last} : timed;
  const auto per_gpu_median = [&](std::vector<double> DistributedRun::*field) {
    std::vector<double> out;
    for (std::size_t rank = 0; rank < static_cast<std::size_t>(group.size()); ++rank) {
      std::vector<double> values;
      for (const DistributedRun& run : runs)
        if (rank < (run.*field).size()) values.push_back((run.*field)[rank]);
      if (values.empty()) return std::vector<double>{};
      out.push_back(median(values));
    }
    return out;
  };
  f.transport = last.transport;
  f.bytes_received = per_gpu_median(&DistributedRun::bytes_received);
  f.wait_seconds = per_gpu_median(&DistributedRun::wait_seconds);
  f.seconds = per_gpu_median(&DistributedRun::seconds);
}

}  // namespace

std::string grid_text(const ProcessGrid& g) { return fmt::format("{}x{}", g.rows, g.cols); }

Entry new_entry(const Options& o, const Shape& shape, const std::vector<int>& devices, const std::string& name,
                const std::string& technique, const std::string& mode) {
  Entry e{host_record(o, shape, name, technique), {}};
  e.figures.mode = mode;
  e.figures.devices = devices;
  return e;
}

void run_single_gpu(const Options& o, const DistributedJob& job, const HostProblem& host, const SampledCheck& check,
                    Entry& e) {
  const GemmProblem& hp = host.problem;
  Record& r = e.record;
  const int device = job.devices.front();
  std::unique_ptr<Executor> ex;
  Variant v;
  Status s = make_cuda_executor(ex, device);
  if (s) s = resolve_variant(ex->context(), hp, GemmOptions{job.variant, o.config}, v);
  if (!s) return fail(e, s);
  r.variant = v.name;
  r.technique = fmt::format("1 GPU, device operands (t1): {}{}", job.variant == kAutoVariant ? "auto chose " : "",
                            v.technique);
  r.config = v.config.to_string();
  r.config_name = v.config_name;
  e.figures.local_variant = v.name;
  e.figures.local_config = v.config_name;
  e.figures.devices = {device};
  e.figures.grid = {1, 1};
  const std::uint64_t a = matrix_bytes(hp.a), b = matrix_bytes(hp.b), c = matrix_bytes(hp.c);
  const std::uint64_t need = a + b + c * (hp.beta != 0.0 ? 2 : 1) + workspace_bound(v, o, {hp.m, hp.n, hp.k});
  s = check_device_memory({device}, {need}, "A, B and C in core and the rung's workspace");
  DeviceCopies copies;
  if (s) s = copy_to_device(*ex, host, copies);
  if (!s) return fail(e, s);
  check_and_time(o, *ex, host, check, device_copy_calls(*ex, host, copies, v), r);
}

void run_host(const Options& o, Executor& timer, const DistributedJob& job, DeviceGroup& group,
              const HostProblem& host, const SampledCheck& check, const OutOfCoreRates& rates, Entry& e) {
  const GemmProblem& hp = host.problem;
  DistributedFigures& f = e.figures;
  if (Status s = process_grid(group.size(), hp.m, hp.n, f.grid); !s) return fail(e, s);
  OutOfCoreOptions options;
  options.in_core = GemmOptions{job.variant, o.config};
  options.rates = rates;
  HostCalls calls = host_operand_calls(host, [&] { return gemm_distributed_host(group, hp, options, &f.host_plans); });
  calls.tolerance = [&]() -> std::optional<Tolerance> {
    const Variant* v = f.host_plans.empty() ? nullptr : find_variant(Backend::Cuda, f.host_plans.front().variant);
    return v ? v->tolerance : std::nullopt;
  };
  check_and_time(o, timer, host, check, calls, e.record);
  for (int rank = 0; rank < group.size(); ++rank) release_out_of_core_buffers(group.context(rank));
  if (!f.host_plans.empty()) {
    f.local_variant = f.host_plans.front().variant;
    f.local_config = f.host_plans.front().config;
    e.record.config = fmt::format("{} grid of C, GPU 0: {}", grid_text(f.grid), f.host_plans.front().describe());
  }
}

void run_cublasxt(const Options& o, Executor& timer, const DistributedJob& job, const HostProblem& host,
                  const SampledCheck& check, std::vector<Entry>& entries) {
  const GemmProblem& hp = host.problem;
  const Shape shape{hp.m, hp.n, hp.k};
  const int gpus = static_cast<int>(job.devices.size());
  std::unique_ptr<Context> context;
  ContextOptions context_options;
  context_options.backend = Backend::Cuda;
  context_options.device = job.devices.front();
  const Status made = Context::create(context_options, context);
  for (const int dim : job.xt_block_dims) {
    Entry e = new_entry(o, shape, job.devices, "cublasxt_sgemm",
                        fmt::format("cublasXt over {} GPUs, host operands", gpus), "cublasxt");
    e.record.anchor = true;
    int block = dim;
    Status s = made;
    if (s && dim <= 0) s = cuda::cublasxt_default_block_dim(context->resources(), job.devices, block);
    e.figures.block_dim = block;
    e.figures.default_block_dim = dim <= 0;
    e.record.config = fmt::format("blockDim={}{}", block, dim <= 0 ? " (default)" : "");
    e.record.config_name = dim <= 0 ? "default" : fmt::format("b{}", block);
    if (!s) {
      fail(e, s);
      entries.push_back(std::move(e));
      continue;
    }
    const auto xt = [&] { return cuda::cublasxt_sgemm(hp, job.devices, block, context->resources()); };
    check_and_time(o, timer, host, check, host_operand_calls(host, xt), e.record);
    entries.push_back(std::move(e));
  }
}

void skip_shape(const Options& o, const DistributedJob& job, const Shape& shape, const std::string& scaling,
                const Status& why, std::vector<Entry>& entries) {
  const int gpus = static_cast<int>(job.devices.size());
  const auto add = [&](Entry e) {
    fail(e, why);
    entries.push_back(std::move(e));
  };
  const bool device = std::ranges::find(job.placements, Placement::Device) != job.placements.end();
  const bool host = std::ranges::find(job.placements, Placement::Host) != job.placements.end();
  if (scaling == "strong" && job.anchors) add(new_entry(o, shape, {job.devices.front()}, job.variant, "1 GPU, device operands (t1)", "single_gpu"));
  if (device)
    for (const GridRun& g : grid_runs(job, shape)) {
      Entry e = new_entry(o, shape, job.devices, fmt::format("dist_{}", to_string(g.decomposition)),
                          device_technique(g, gpus, scaling, job.transport), "device");
      e.figures.scaling = scaling;
      e.figures.decomposition = g.decomposition;
      e.figures.same_grid = g.same_grid;
      e.figures.grid = g.grid;
      add(std::move(e));
    }
  if (host && scaling == "strong") {
    add(new_entry(o, shape, job.devices, "dist_host", fmt::format("{} GPUs, host operands", gpus), "host"));
    if (job.anchors && o.dtype == DType::F32)
      for (const int dim : job.xt_block_dims) {
        Entry e = new_entry(o, shape, job.devices, "cublasxt_sgemm", fmt::format("cublasXt over {} GPUs", gpus), "cublasxt");
        e.record.anchor = true;
        e.figures.block_dim = dim;
        e.figures.default_block_dim = dim <= 0;
        e.record.config_name = dim <= 0 ? "default" : fmt::format("b{}", dim);
        add(std::move(e));
      }
  }
}

void run_device_grids(const Options& o, Executor& timer, const DistributedJob& job, const HostProblem& host,
                      const SampledCheck& check, const std::string& scaling, const std::optional<PeerLink>& link,
                      DeviceGroup& group, std::vector<Entry>& entries) {
  const GemmProblem& hp = host.problem;
  const int gpus = group.size();
  for (const GridRun& g : grid_runs(job, {hp.m, hp.n, hp.k})) {
    Entry e = new_entry(o, {hp.m, hp.n, hp.k}, job.devices, fmt::format("dist_{}", to_string(g.decomposition)),
                        device_technique(g, gpus, scaling, job.transport), "device");
    e.figures.scaling = scaling;
    // The model at this machine's rates: the rung on one GPU's block, the link as measured.
    DistributedRates rates;
    if (g.status)
      if (Status s = local_rate(o, job, host, g.grid, rates); !s) {
        rates.flops_per_second = 0;
        rates.tile_overhead_k = 0;
        e.record.warnings.push_back(fmt::format("model: the rung's rate on one GPU's block was not measured ({}); "
                                                "the model assumes a nominal rate",
                                                s.describe()));
      }
    // Copy engines move panels at the copy rate where one operand moves (as the driver
    // decides); NCCL's broadcasts at theirs.
    const bool copy_engines = job.transport == PanelTransport::CopyEngines && g.grid.one_operand_moves();
    if (link) rates.link_bytes_per_second = copy_engines ? link->copy : link->broadcast_algorithm;
    (void)cuda::make_current(job.devices.front());
    rates.multiprocessors = cuda::device_sm_count();
    run_device(o, timer, job, group, host, check, g, rates, e);
    entries.push_back(std::move(e));
  }
}

}  // namespace gemmlab::bench
