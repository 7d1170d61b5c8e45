#include "bench/distributed.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "bench/host_operands.hpp"
#include "bench/memory_plan.hpp"
#include "core/element.hpp"
#include "cuda/backend.hpp"
#include "cuda/distributed.hpp"
#include "gemmlab/distributed.hpp"
#include "gemmlab/gemm.hpp"
#include "gemmlab/registry.hpp"

namespace gemmlab::bench {
namespace {

// The link between the GPUs and the host link are timed with transfers of this size, the
// median of this many.
constexpr std::size_t kLinkBytes = std::size_t{256} << 20;
constexpr int kLinkReps = 5;
// Repetitions of one GPU's block product for the model's compute rate.
constexpr int kLocalRateReps = 3;
// Device memory left free beside a GPU's operands (libraries, NCCL's own buffers, module code).
constexpr std::uint64_t kDeviceMargin = std::uint64_t{1} << 30;

std::string grid_text(const ProcessGrid& g) { return fmt::format("{}x{}", g.rows, g.cols); }

std::string devices_text(const std::vector<int>& devices) {
  std::string text;
  for (const int d : devices) text += fmt::format("{}{}", text.empty() ? "" : ",", d);
  return text;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t half = values.size() / 2;
  return values.size() % 2 == 1 ? values[half] : 0.5 * (values[half - 1] + values[half]);
}

// One run of the job: its record for the report and what the distributed job adds.
struct Entry {
  Record record;
  DistributedFigures figures;
};

Entry new_entry(const Options& o, const Shape& shape, const std::vector<int>& devices, const std::string& name,
                const std::string& technique, const std::string& mode) {
  Entry e{host_record(o, shape, name, technique), {}};
  e.figures.mode = mode;
  e.figures.devices = devices;
  return e;
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

// t1: the rung on the first GPU alone, on device copies of the host operands, timed as the
// harness times in-core rungs (CUDA events, L2 flushed before every repetition). A fresh
// executor: the rung's workspace goes with it, not into the distributed runs' memory.
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

// The rung's rate on GPU `rank` 0's block of C (the largest: the first parts of a balanced cut
// are the longer) with all of K, on the first GPU: what DistributedRates::flops_per_second
// means. Values are the host operands' first bytes (values do not change the rate). 0 where
// the block does not fit beside what the GPU holds (the model then assumes a nominal rate).
Status local_rate(const Options& o, const DistributedJob& job, const HostProblem& host, const ProcessGrid& grid,
                  double& rate) {
  rate = 0;
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
  GEMMLAB_TRY(gemm(ex->context(), p, v));  // warm-up (and workspace)
  std::vector<double> samples;
  for (int rep = 0; rep < kLocalRateReps; ++rep) {
    double ms = 0;
    GEMMLAB_TRY(ex->flush_caches(o.flush));
    GEMMLAB_TRY(ex->time_once([&] { return gemm(ex->context(), p, v); }, ms));
    samples.push_back(ms);
  }
  rate = 2.0 * static_cast<double>(block.m) * static_cast<double>(block.n) * static_cast<double>(block.k) /
         (median(samples) * 1e-3);
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

std::string device_technique(const GridRun& g, int gpus, const std::string& scaling) {
  const std::string how = g.grid.cols == 1 ? "B's panels broadcast over NCCL" : "A's panels along grid rows, B's along columns";
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
  f.bytes_received = per_gpu_median(&DistributedRun::bytes_received);
  f.wait_seconds = per_gpu_median(&DistributedRun::wait_seconds);
  f.seconds = per_gpu_median(&DistributedRun::seconds);
}

// gemm_distributed_host() on the page-locked host operands: each GPU a block of C, out of core.
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

// cublasXt over the same GPUs on the same host operands, at each blockDim of the job. Its
// handle lives in a context of its own, gone (with the memory it keeps) after the shape.
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

// Skipped records for every run a shape would have had, with the reason.
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
                          device_technique(g, gpus, scaling), "device");
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

// The distributed runs of one host problem on device operands, one per grid.
void run_device_grids(const Options& o, Executor& timer, const DistributedJob& job, const HostProblem& host,
                      const SampledCheck& check, const std::string& scaling, const std::optional<PeerLink>& link,
                      DeviceGroup& group, std::vector<Entry>& entries) {
  const GemmProblem& hp = host.problem;
  const int gpus = group.size();
  for (const GridRun& g : grid_runs(job, {hp.m, hp.n, hp.k})) {
    Entry e = new_entry(o, {hp.m, hp.n, hp.k}, job.devices, fmt::format("dist_{}", to_string(g.decomposition)),
                        device_technique(g, gpus, scaling), "device");
    e.figures.scaling = scaling;
    // The model at this machine's rates: the rung on one GPU's block, the link as measured.
    DistributedRates rates;
    if (g.status)
      if (Status s = local_rate(o, job, host, g.grid, rates.flops_per_second); !s) {
        rates.flops_per_second = 0;
        e.record.warnings.push_back(fmt::format("model: the rung's rate on one GPU's block was not measured ({}); "
                                                "the model assumes a nominal rate",
                                                s.describe()));
      }
    if (link) rates.link_bytes_per_second = link->broadcast_algorithm;
    (void)cuda::make_current(job.devices.front());
    rates.multiprocessors = cuda::device_sm_count();
    run_device(o, timer, job, group, host, check, g, rates, e);
    entries.push_back(std::move(e));
  }
}

}  // namespace

std::string_view to_string(Placement placement) {
  switch (placement) {
    case Placement::Device: return "device";
    case Placement::Host: return "host";
  }
  return "?";
}

std::optional<Placement> parse_placement(std::string_view text) {
  for (const Placement p : {Placement::Device, Placement::Host})
    if (text == to_string(p)) return p;
  return std::nullopt;
}

std::vector<Shape> default_distributed_shapes() {
  return {{8192, 8192, 8192}, {16384, 16384, 16384}, {32768, 32768, 32768}, {16383, 16385, 4097}};
}

std::uint64_t distributed_host_bytes(const Options& o, const Shape& shape) { return host_operand_bytes(o, shape); }

Status distributed_block_bytes(const Options& o, const Shape& shape, Decomposition decomposition, int gpus,
                               std::vector<std::uint64_t>& per_gpu) {
  per_gpu.clear();
  ProcessGrid grid;
  GEMMLAB_TRY(decomposition_grid(decomposition, gpus, shape.m, shape.n, grid));
  const std::uint64_t in = storage_bytes(precision_for(o.dtype).value_or(Precision{}).input);
  const auto u = [](std::int64_t x) { return static_cast<std::uint64_t>(x); };
  for (int g = 0; g < gpus; ++g) {
    const LocalBlocks b = local_blocks(shape.m, shape.n, shape.k, grid, g);
    per_gpu.push_back(u(b.rows.count) * u(b.a_k.count) * in + u(b.b_k.count) * u(b.cols.count) * in +
                      u(b.rows.count) * u(b.cols.count) * sizeof(float));
  }
  return Status::ok();
}

Status run_distributed(const Options& o, const DistributedJob& job, Executor& ex, DistributedResults& out) {
  if (ex.backend() != Backend::Cuda)
    return {StatusCode::InvalidValue, "the distributed GEMM runs on GPUs: use --backend cuda"};
  if (job.devices.empty()) return {StatusCode::InvalidValue, "the distributed job needs at least one GPU"};
  if (o.ld_padding != 0)
    return {StatusCode::InvalidValue,
            "--gpus does not take --pad (the job's blocks are dense copies of the host matrices)"};
  const bool device = std::ranges::find(job.placements, Placement::Device) != job.placements.end();
  const bool host = std::ranges::find(job.placements, Placement::Host) != job.placements.end();
  const int gpus = static_cast<int>(job.devices.size());
  std::string why;
  if (device && !distributed_available(&why))
    return {StatusCode::NotSupported,
            fmt::format("the distributed GEMM on device operands needs NCCL: {} (--placement host runs without it)", why)};
  out = {};
  out.devices = job.devices;
  out.nccl_version = nccl_version();
  // Every GPU named exists and, for device operands, reaches every other's memory: said now,
  // before minutes of random fill.
  DeviceGroupOptions group_options;
  group_options.devices = job.devices;
  group_options.require_peer_access = device;
  {
    std::unique_ptr<DeviceGroup> group;
    GEMMLAB_TRY(DeviceGroup::create(group_options, group));
  }
  GEMMLAB_TRY(cuda::make_current(job.devices.front()));
  if (gpus >= 2) {
    cuda::PeerLinkRates rates;
    GEMMLAB_TRY(cuda::measure_peer_link(job.devices, kLinkBytes, kLinkReps, rates));
    out.peer_link = PeerLink{rates.bytes,         rates.gpus,           rates.copy,
                             rates.copy_both,     rates.broadcast_bus,  rates.all_gather_bus,
                             rates.broadcast_algorithm};
    GEMMLAB_TRY(cuda::make_current(job.devices.front()));
  }
  if (host) {
    cuda::HostLinkRates rates;
    GEMMLAB_TRY(cuda::measure_host_link(kLinkBytes, kLinkReps, rates));
    out.host_link = HostLink{rates.bytes, rates.h2d, rates.d2h, rates.h2d_both, rates.d2h_both, rates.h2d_strided};
  }

  std::vector<Entry> entries;
  for (std::size_t i = 0; i < o.shapes.size(); ++i) {
    const Shape& shape = o.shapes[i];
    const std::uint64_t seed = o.seed + i;
    const std::size_t first = entries.size();
    std::optional<double> t1_ms;
    std::string t1_variant;
    // The strong-scaling problem: the anchor, the device runs, the host runs and cublasXt.
    // Each kind of run in a group of its own: communicators, panel buffers and the rungs'
    // workspaces go with it, and the next finds the GPUs' memory as the shape began.
    if (Status s = check_host_memory(o, shape); !s) {
      skip_shape(o, job, shape, "strong", s, entries);
    } else {
      HostProblem problem;
      SampledCheck check;
      s = make_host_problem(o, ex, shape, seed, problem);
      if (s) s = make_sampled_check(o, problem, "problems", check);
      if (!s && s.code() != StatusCode::AllocFailed) return s;
      if (!s) skip_shape(o, job, shape, "strong", s, entries);
      if (s && job.anchors) {
        Entry e = new_entry(o, shape, {job.devices.front()}, job.variant, "1 GPU, device operands (t1)", "single_gpu");
        run_single_gpu(o, job, problem, check, e);
        if (e.record.timed) {
          t1_ms = e.record.timing.median_ms;
          t1_variant = e.record.variant;
        }
        entries.push_back(std::move(e));
      }
      if (s && device) {
        std::unique_ptr<DeviceGroup> group;
        GEMMLAB_TRY(DeviceGroup::create(group_options, group));
        run_device_grids(o, ex, job, problem, check, "strong", out.peer_link, *group, entries);
        group.reset();
        GEMMLAB_TRY(cuda::make_current(job.devices.front()));
      }
      if (s && host) {
        Entry e = new_entry(o, shape, job.devices, "dist_host",
                            fmt::format("{} GPUs, host operands: a block of C each, out of core", gpus), "host");
        OutOfCoreRates rates;
        if (out.host_link) {
          rates.h2d_bytes_per_second = out.host_link->h2d;
          rates.d2h_bytes_per_second = out.host_link->d2h;
          rates.h2d_both_bytes_per_second = out.host_link->h2d_both;
          rates.d2h_both_bytes_per_second = out.host_link->d2h_both;
          rates.h2d_strided_bytes_per_second = out.host_link->h2d_strided;
        }
        // The rung's rate on the whole problem stands for its rate on a tile.
        if (t1_ms)
          rates.flops_per_second = 2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) *
                                   static_cast<double>(shape.k) / (*t1_ms * 1e-3);
        rates.multiprocessors = cuda::device_sm_count();
        std::unique_ptr<DeviceGroup> group;
        GEMMLAB_TRY(DeviceGroup::create(group_options, group));
        run_host(o, ex, job, *group, problem, check, rates, e);
        entries.push_back(std::move(e));
        group.reset();
        GEMMLAB_TRY(cuda::make_current(job.devices.front()));
        if (job.anchors && o.dtype == DType::F32) run_cublasxt(o, ex, job, problem, check, entries);
      }
    }
    // Weak scaling: P times the rows, so each GPU keeps the single-GPU problem's work.
    if (device && job.anchors && shape.m == shape.n && shape.n == shape.k && gpus >= 2) {
      const Shape weak{shape.m * gpus, shape.n, shape.k};
      HostProblem problem;
      SampledCheck check;
      Status s = check_host_memory(o, weak);
      if (s) s = make_host_problem(o, ex, weak, seed, problem);
      if (s) s = make_sampled_check(o, problem, "problems", check);
      if (!s) {
        if (s.code() != StatusCode::AllocFailed) return s;
        skip_shape(o, job, weak, "weak", s, entries);
      } else {
        std::unique_ptr<DeviceGroup> group;
        GEMMLAB_TRY(DeviceGroup::create(group_options, group));
        run_device_grids(o, ex, job, problem, check, "weak", out.peer_link, *group, entries);
        group.reset();
        GEMMLAB_TRY(cuda::make_current(job.devices.front()));
      }
    }
    // The anchor of every run of the shape: t1 for the device runs (speedup = t1 / tP, the
    // efficiency that over P; weak: t1(m) / tP(P m)), the fastest cublasXt for the host run.
    const Entry* best_xt = nullptr;
    for (std::size_t j = first; j < entries.size(); ++j)
      if (entries[j].figures.mode == "cublasxt" && entries[j].record.timed &&
          (!best_xt || entries[j].record.timing.median_ms < best_xt->record.timing.median_ms))
        best_xt = &entries[j];
    for (std::size_t j = first; j < entries.size(); ++j) {
      Entry& e = entries[j];
      DistributedFigures& f = e.figures;
      Record& r = e.record;
      if (f.mode == "device" && t1_ms) {
        f.t1_ms = t1_ms;
        f.t1_shape = shape;
        f.t1_variant = t1_variant;
        if (r.timed) {
          const double ratio = *t1_ms / r.timing.median_ms;
          r.anchor_variant = fmt::format("{} on 1 GPU", t1_variant);
          r.ratio_to_anchor = ratio;
          f.efficiency = f.scaling == "weak" ? ratio : ratio / gpus;
        }
      }
      if (f.mode == "host" && best_xt && r.timed) {
        f.ratio_to_best_xt = best_xt->record.timing.median_ms / r.timing.median_ms;
        f.best_xt_block_dim = best_xt->figures.block_dim;
        r.anchor_variant = fmt::format("cublasxt_sgemm {}", best_xt->record.config);
        r.ratio_to_anchor = f.ratio_to_best_xt;
      }
      r.seed = seed;
    }
  }
  for (Entry& e : entries) {
    out.records.push_back(std::move(e.record));
    out.figures.push_back(std::move(e.figures));
  }
  flag_noise(out.records, o);
  out.job = job;
  return Status::ok();
}

namespace {

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
      j["panels"] = p.panels.size();
      j["panel_width"] = p.panel_width;
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
                             {"multiprocessors", f.rates.multiprocessors}};
      if (r.timed && m.model_seconds > 0) j["model"]["measured_over_model"] = r.timing.median_ms * 1e-3 / m.model_seconds;
    }
    if (!f.bytes_received.empty()) {
      double total = 0;
      for (const double b : f.bytes_received) total += b;
      j["bytes_received"] = {{"per_gpu", f.bytes_received},
                             {"total", total},
                             {"max", *std::ranges::max_element(f.bytes_received)}};
    }
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
    out += fmt::format("\nlink between the GPUs ({} GPUs, {} MB transfers): copies {:.1f} GB/s one way, {:.1f} each way "
                       "at once; NCCL broadcast {:.1f} GB/s bus ({:.1f} received per GPU, the model's link rate), "
                       "all-gather {:.1f} bus\n",
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
          notes += fmt::format("    received {} per GPU at most, {} in all; waited for panels {} ms per GPU\n",
                               gb(*std::ranges::max_element(f.bytes_received)), gb(total), per_gpu_ms(f.wait_seconds));
        }
        // The slowest GPU's: its compute at the rung's rate, its panels' bytes over the link, and
        // the time its products wait for them (the first panel's fill included).
        notes += fmt::format("    model: compute {:.2f} ms per GPU at {}; comm {:.2f} ms ({} per GPU, {:.0f} MB per "
                             "panel, over {}); products waiting {:.2f} ms (fill {:.2f}) -> {:.2f} ms",
                             m.compute_seconds * 1e3,
                             f.rates.flops_per_second > 0
                                 ? fmt::format("{:.1f} TFLOP/s (the rung on one GPU's block)",
                                               f.rates.flops_per_second * 1e-12)
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
