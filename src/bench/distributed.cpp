#include "bench/distributed.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <thread>

#include "bench/memory_plan.hpp"
#include "core/element.hpp"
#include "core/host_info.hpp"
#include "core/random.hpp"
#include "core/reference.hpp"
#include "cpu/thread_pool.hpp"
#include "cuda/backend.hpp"
#include "cuda/distributed.hpp"
#include "gemmlab/distributed.hpp"
#include "gemmlab/gemm.hpp"
#include "gemmlab/registry.hpp"

namespace gemmlab::bench {
namespace {

// The random streams of the harness (harness.cpp): a shape and seed give the values the
// harness and the out-of-core job give it.
enum RandomStream : std::uint64_t { kStreamA = 1, kStreamB = 2, kStreamC = 3 };
// The link between the GPUs and the host link are timed with transfers of this size, the
// median of this many.
constexpr std::size_t kLinkBytes = std::size_t{256} << 20;
constexpr int kLinkReps = 5;
// Repetitions of one GPU's block product for the model's compute rate.
constexpr int kLocalRateReps = 3;
// The job leaves this share of the host's available memory to everything else.
constexpr double kHostShare = 0.9;
// Device memory left free beside a GPU's operands (libraries, NCCL's own buffers, module code).
constexpr std::uint64_t kDeviceMargin = std::uint64_t{1} << 30;

std::uint64_t matrix_bytes(const Matrix& x) { return buffer_elements(x) * storage_bytes(x.dtype); }

std::string shape_text(const Shape& s) { return fmt::format("{}x{}x{}", s.m, s.n, s.k); }

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

// Fills `x` (host memory, storage type) with the harness's values: the random stream, rounded
// to the storage type, drawn whole lines at a time on every core; or NaN.
void fill_matrix(const Matrix& x, std::uint64_t seed, std::uint64_t stream, bool nan) {
  const std::int64_t lines = x.lines(), ld = x.ld;
  const std::size_t element = storage_bytes(x.dtype);
  const int threads =
      std::max(1, std::min<int>(cpu::usable_cores(), static_cast<int>(std::max<std::int64_t>(lines, 1))));
  std::vector<std::thread> team;
  for (int t = 0; t < threads; ++t)
    team.emplace_back([&, t] {
      const std::int64_t first = lines * t / threads, last = lines * (t + 1) / threads;
      constexpr std::int64_t kChunkLines = 64;
      std::vector<float> values;
      for (std::int64_t line = first; line < last; line += kChunkLines) {
        const std::int64_t count = std::min(kChunkLines, last - line);
        values.assign(static_cast<std::size_t>(count * ld), std::numeric_limits<float>::quiet_NaN());
        if (!nan) fill_random_at(values, seed, stream, static_cast<std::uint64_t>(line * ld));
        for (float& v : values) v = round_to_storage(v, x.dtype);
        std::byte* out = static_cast<std::byte*>(x.data) + static_cast<std::size_t>(line * ld) * element;
        if (element == sizeof(float)) {
          std::memcpy(out, values.data(), values.size() * sizeof(float));
        } else {
          const std::vector<std::byte> encoded = encode(values, x.dtype);
          std::memcpy(out, encoded.data(), encoded.size());
        }
      }
    });
  for (std::thread& t : team) t.join();
}

// One shape's operands in page-locked host memory: what the GPUs' blocks are uploaded from,
// what the host-operand runs read, and what every result is downloaded into and checked in.
struct HostProblem {
  std::unique_ptr<Buffer> a, b, c;
  GemmProblem problem;  // pointing at them
  std::uint64_t seed = 0;
  // C as every run must find it: its random values (beta != 0) or NaN (beta = 0: not read, and
  // an element still NaN afterwards was never written).
  void reset_c() const { fill_matrix(problem.c, seed, kStreamC, problem.beta == 0.0); }
};

Status make_host_problem(const Options& o, Executor& ex, const Shape& shape, std::uint64_t seed, HostProblem& out) {
  const OperandLayout l = operand_layout(o, shape);
  GEMMLAB_TRY(ex.allocate_host(matrix_bytes(l.a), out.a));
  GEMMLAB_TRY(ex.allocate_host(matrix_bytes(l.b), out.b));
  GEMMLAB_TRY(ex.allocate_host(matrix_bytes(l.c), out.c));
  GemmProblem& p = out.problem;
  p.m = shape.m;
  p.n = shape.n;
  p.k = shape.k;
  p.op_a = o.op_a;
  p.op_b = o.op_b;
  p.alpha = o.alpha;
  p.beta = o.beta;
  p.a = l.a;
  p.b = l.b;
  p.c = l.c;
  p.a.data = out.a->data();
  p.b.data = out.b->data();
  p.c.data = out.c->data();
  p.compute = precision_for(o.dtype)->compute;
  out.seed = seed;
  fill_matrix(p.a, seed, kStreamA, false);
  fill_matrix(p.b, seed, kStreamB, false);
  out.reset_c();
  return validate(p);
}

// The sampled check of a shape and its float64 reference, made once before any run writes C.
struct SampledCheck {
  SamplePositions positions;
  ReferenceResult reference;
  std::string note;
};

Status make_check(const Options& o, const HostProblem& host, SampledCheck& out) {
  if (!o.verify) return Status::ok();
  const GemmProblem& p = host.problem;
  out.positions = sample_positions(p.m, p.n, host.seed);
  GEMMLAB_TRY(reference_sampled(p, out.positions, out.reference));
  out.note = fmt::format("{} elements of C checked against float64 dot products: a full reference of problems "
                         "this large is not made",
                         out.positions.count());
  return Status::ok();
}

// One run of the job: its record for the report and what the distributed job adds.
struct Entry {
  Record record;
  DistributedFigures figures;
};

Entry new_entry(const Options& o, const Shape& shape, const std::vector<int>& devices, const std::string& name,
                const std::string& technique, const std::string& mode) {
  Entry e;
  Record& r = e.record;
  const OperandLayout l = operand_layout(o, shape);
  r.backend = "cuda";
  r.variant = name;
  r.technique = technique;
  r.dtype = std::string(to_string(o.dtype));
  r.m = shape.m;
  r.n = shape.n;
  r.k = shape.k;
  r.lda = l.a.ld;
  r.ldb = l.b.ld;
  r.ldc = l.c.ld;
  r.trans = fmt::format("{}{}", to_string(o.op_a), to_string(o.op_b));
  r.layout = std::string(to_string(o.layout));
  r.alpha = o.alpha;
  r.beta = o.beta;
  r.model.flops = 2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) * static_cast<double>(shape.k);
  e.figures.mode = mode;
  e.figures.devices = devices;
  return e;
}

void fail(Entry& e, const Status& s) {
  // What the machine cannot hold is a skip with its reason; anything else an error.
  e.record.status = s.code() == StatusCode::AllocFailed || s.code() == StatusCode::NotSupported ? "skipped" : "error";
  e.record.message = s.code() == StatusCode::AllocFailed ? s.message() : s.describe();
}

// What one run does besides its own work.
struct Calls {
  std::function<Status()> call;            // the work, verified once and then timed
  std::function<Status()> set_up_check;    // before the checked call: C as the problem starts
  std::function<Status()> result_to_host;  // after it: C's result in the host problem's C
  std::function<Status()> restore_c;       // before each timed call, where beta != 0 (C is read)
  std::function<void()> after_timed_call;  // after each timed call (the distributed run's figures)
  // The rung's error bound, known once the checked call has run (absent: the types' own).
  std::function<std::optional<Tolerance>()> tolerance;
  // The work waits for its own completion (every GPU's, or the host's C): timed by the host's
  // clock; otherwise by CUDA events on `timer`'s stream.
  bool blocking = true;
};

Status nothing() { return Status::ok(); }

void report_progress(const Options& o, Progress::Phase phase, const Record& r, int done, int total) {
  if (!o.progress) return;
  Progress p;
  p.phase = phase;
  p.variant = r.variant;
  p.shape = {r.m, r.n, r.k};
  p.done = done;
  p.total = total;
  o.progress(p);
}

// Runs the work once and checks C at the sample (and everywhere for the poison), then times it
// as the options say: warm-up, then repetitions until a count and a time, C restored before
// each one that reads it and the first GPU's L2 flushed, both outside the timed region. `timer`
// is an executor on the first GPU (its device is made current again before each timed call:
// the distributed calls leave another current). A failure goes into the record, not out.
void verify_and_time(const Options& o, Executor& timer, int timer_device, const HostProblem& host,
                     const SampledCheck& check, const Calls& calls, Record& r) {
  const GemmProblem& p = host.problem;
  Status s = Status::ok();
  if (o.verify) {
    report_progress(o, Progress::Phase::Verify, r, 0, 1);
    s = calls.set_up_check();
    if (s) s = calls.call();
    if (s) s = calls.result_to_host();
    if (s) {
      const std::span<const float> c(static_cast<const float*>(p.c.data), buffer_elements(p.c));
      r.verified = true;
      // No padding (the job refuses --pad): C's buffer has nothing between rows to compare.
      r.verification = verify_sampled(p, c, c, check.positions, check.reference, p.beta == 0.0,
                                      calls.tolerance ? calls.tolerance() : std::nullopt);
      r.verification_note = check.note;
    }
  }
  if (s && o.time) {
    std::vector<double> samples;
    for (int w = 0; s && w < o.warmup; ++w) {
      if (p.beta != 0.0) s = calls.restore_c();
      if (s) s = calls.call();
    }
    double total_ms = 0;
    while (s && static_cast<int>(samples.size()) < o.max_reps &&
           (static_cast<int>(samples.size()) < o.min_reps || total_ms < o.min_seconds * 1e3)) {
      if (o.max_seconds > 0 && !samples.empty() && total_ms >= o.max_seconds * 1e3) {
        r.timing.capped = true;
        break;
      }
      if (p.beta != 0.0) s = calls.restore_c();
      if (s) s = cuda::make_current(timer_device);
      if (s) s = timer.flush_caches(o.flush);
      double ms = 0;
      if (s) s = calls.blocking ? timer.time_blocking(calls.call, ms) : timer.time_once(calls.call, ms);
      if (s) {
        samples.push_back(ms);
        total_ms += ms;
        if (calls.after_timed_call) calls.after_timed_call();
        report_progress(o, Progress::Phase::Time, r, static_cast<int>(samples.size()), o.min_reps);
      }
    }
    if (s) {
      const bool capped = r.timing.capped;
      s = summarise(samples, r.timing);
      r.timing.capped = capped;
    }
    if (s) {
      r.timed = true;
      r.gflops = r.model.flops / (r.timing.median_ms * 1e-3) * 1e-9;
    }
  }
  if (Status home = cuda::make_current(timer_device); s && !home) s = home;
  if (!s) {
    r.status = "error";
    r.message = s.describe();
  }
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
  std::unique_ptr<Buffer> da, db, dc, c_initial;
  if (s) s = ex->allocate(a, da);
  if (s) s = ex->allocate(b, db);
  if (s) s = ex->allocate(c, dc);
  if (s) s = ex->upload(da->data(), hp.a.data, a);
  if (s) s = ex->upload(db->data(), hp.b.data, b);
  // With beta != 0 every call reads C: its initial values stay in a second device buffer.
  if (s && hp.beta != 0.0) {
    host.reset_c();
    s = ex->allocate(c, c_initial);
    if (s) s = ex->upload(c_initial->data(), hp.c.data, c);
  }
  if (!s) return fail(e, s);
  GemmProblem dp = hp;
  dp.a.data = da->data();
  dp.b.data = db->data();
  dp.c.data = dc->data();
  Calls calls;
  calls.blocking = false;
  calls.call = [&] { return gemm(ex->context(), dp, v); };
  calls.set_up_check = [&] {
    host.reset_c();
    return ex->upload(dc->data(), hp.c.data, c);
  };
  calls.result_to_host = [&] { return ex->download(hp.c.data, dc->data(), c); };
  calls.restore_c = [&] { return ex->copy_within(dc->data(), c_initial->data(), c); };
  calls.tolerance = [&] { return v.tolerance; };
  verify_and_time(o, *ex, device, host, check, calls, r);
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
  Calls calls;
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
  verify_and_time(o, timer, job.devices.front(), host, check, calls, e.record);
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
  Calls calls;
  calls.call = [&] { return gemm_distributed_host(group, hp, options, &f.host_plans); };
  calls.set_up_check = calls.restore_c = [&] {
    host.reset_c();
    return Status::ok();
  };
  calls.result_to_host = nothing;
  calls.tolerance = [&]() -> std::optional<Tolerance> {
    const Variant* v = f.host_plans.empty() ? nullptr : find_variant(Backend::Cuda, f.host_plans.front().variant);
    return v ? v->tolerance : std::nullopt;
  };
  verify_and_time(o, timer, job.devices.front(), host, check, calls, e.record);
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
    Calls calls;
    calls.call = [&] { return cuda::cublasxt_sgemm(hp, job.devices, block, context->resources()); };
    calls.set_up_check = calls.restore_c = [&] {
      host.reset_c();
      return Status::ok();
    };
    calls.result_to_host = nothing;
    verify_and_time(o, timer, job.devices.front(), host, check, calls, e.record);
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

// AllocFailed where the host cannot hold a shape's operands (page-locked) beside everything else.
Status check_host_memory(const Options& o, const Shape& shape) {
  const std::uint64_t bytes = distributed_host_bytes(o, shape);
  const std::optional<std::uint64_t> available = host_memory_available();
  if (available && static_cast<double>(bytes) > kHostShare * static_cast<double>(*available))
    return {StatusCode::AllocFailed,
            fmt::format("{} ({}) needs {} of page-locked host memory for A, B and C; {} is available (at most "
                        "{:.0f}% of it is used)",
                        shape_text(shape), to_string(o.dtype), format_bytes(bytes), format_bytes(*available),
                        kHostShare * 100)};
  return Status::ok();
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

std::uint64_t distributed_host_bytes(const Options& o, const Shape& shape) {
  const OperandLayout l = operand_layout(o, shape);
  return matrix_bytes(l.a) + matrix_bytes(l.b) + matrix_bytes(l.c);
}

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
      if (s) s = make_check(o, problem, check);
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
      if (s) s = make_check(o, problem, check);
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
