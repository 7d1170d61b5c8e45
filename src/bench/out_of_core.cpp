#include "bench/out_of_core.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <thread>

#include "bench/memory_plan.hpp"
#include "core/element.hpp"
#include "core/host_info.hpp"
#include "core/random.hpp"
#include "core/reference.hpp"
#include "cpu/thread_pool.hpp"
#include "cuda/backend.hpp"
#include "cuda/runtime/device.hpp"
#include "core/out_of_core_plan.hpp"
#include "gemmlab/availability.hpp"
#include "gemmlab/gemm.hpp"
#include "library/workspace.hpp"

namespace gemmlab::bench {
namespace {

// The random streams of the harness (harness.cpp), so a shape and seed give the same values.
enum RandomStream : std::uint64_t { kStreamA = 1, kStreamB = 2, kStreamC = 3 };
// The host link is timed with copies of this size, the median of this many.
constexpr std::size_t kLinkBytes = std::size_t{256} << 20;
constexpr int kLinkReps = 5;
// Repetitions of a block product for the model's in-core rate.
constexpr int kBlockRateReps = 3;
// The job leaves this share of the host's available memory to everything else.
constexpr double kHostShare = 0.9;
// Device memory left free beside an in-core run's operands (libraries, module code).
constexpr std::uint64_t kDeviceMargin = std::uint64_t{512} << 20;

// Fills `x` (host memory, storage type) with the harness's values: the random stream, rounded
// to the storage type, drawn whole lines at a time on every core; or NaN.
void fill_matrix(const Matrix& x, std::uint64_t seed, std::uint64_t stream, bool nan) {
  const std::int64_t lines = x.lines(), ld = x.ld;
  const std::size_t element = storage_bytes(x.dtype);
  const int threads = std::max(1, std::min<int>(cpu::usable_cores(), static_cast<int>(std::max<std::int64_t>(lines, 1))));
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
        if (element == sizeof(float)) std::memcpy(out, values.data(), values.size() * sizeof(float));
        else {
          const std::vector<std::byte> encoded = encode(values, x.dtype);
          std::memcpy(out, encoded.data(), encoded.size());
        }
      }
    });
  for (std::thread& t : team) t.join();
}

std::uint64_t matrix_bytes(const Matrix& x) { return buffer_elements(x) * storage_bytes(x.dtype); }

// One shape's operands in page-locked host memory.
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

// A record of the job, its fields but the result's filled in.
Record new_record(const Options& o, const GemmProblem& p, const std::string& name, const std::string& technique,
                  const std::string& mode) {
  Record r;
  r.backend = "cuda";
  r.variant = name;
  r.technique = technique;
  r.dtype = std::string(to_string(o.dtype));
  r.m = p.m;
  r.n = p.n;
  r.k = p.k;
  r.lda = p.a.ld;
  r.ldb = p.b.ld;
  r.ldc = p.c.ld;
  r.trans = fmt::format("{}{}", to_string(o.op_a), to_string(o.op_b));
  r.layout = std::string(to_string(o.layout));
  r.alpha = o.alpha;
  r.beta = o.beta;
  r.model.flops = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
  r.out_of_core.emplace();
  r.out_of_core->mode = mode;
  return r;
}

// The sampled check and its reference, made once per shape before any run writes C.
struct SampledCheck {
  SamplePositions positions;
  ReferenceResult reference;
  std::string note;
};

// What one run of the job does, besides its own work.
struct Calls {
  std::function<Status()> call;            // the work timed
  std::function<Status()> set_up_check;    // before the checked call: C as the problem starts
  std::function<Status()> result_to_host;  // after it: C's result in the host problem's C
  std::function<Status()> restore_c;       // before each timed call, where beta != 0 (C is read)
  // The work returns only once it is complete (host operands): timed by the host's clock.
  bool blocking = true;
};

Status nothing() { return Status::ok(); }

// Runs the work once and checks C at the sample, then times it as the options say (C restored
// before every repetition that reads it, outside the timed region). A failure goes into the
// record, not out: the other runs of the shape still run.
void verify_and_time(const Options& o, Executor& ex, const GemmProblem& p, const SampledCheck& check,
                     const std::optional<Tolerance>& tolerance, const Calls& calls, Record& r) {
  Status s = Status::ok();
  if (o.verify) {
    s = calls.set_up_check();
    if (s) s = calls.call();
    if (s) s = calls.result_to_host();
    if (s) {
      const std::span<const float> c(static_cast<const float*>(p.c.data), buffer_elements(p.c));
      r.verified = true;
      // No padding (the job refuses --pad): C's buffer has nothing between rows to compare.
      r.verification = verify_sampled(p, c, c, check.positions, check.reference, p.beta == 0.0, tolerance);
      r.verification_note = check.note;
    }
  }
  if (s && o.time) {
    std::vector<double> samples;
    for (int w = 0; s && w < o.warmup; ++w) s = calls.call();
    double total_ms = 0;
    while (s && static_cast<int>(samples.size()) < o.max_reps &&
           (static_cast<int>(samples.size()) < o.min_reps || total_ms < o.min_seconds * 1e3)) {
      if (o.max_seconds > 0 && !samples.empty() && total_ms >= o.max_seconds * 1e3) {
        r.timing.capped = true;
        break;
      }
      if (p.beta != 0.0) s = calls.restore_c();
      if (s) s = ex.flush_caches(o.flush);
      double ms = 0;
      if (s) s = calls.blocking ? ex.time_blocking(calls.call, ms) : ex.time_once(calls.call, ms);
      if (s) {
        samples.push_back(ms);
        total_ms += ms;
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
  if (!s) {
    r.status = "error";
    r.message = s.describe();
  }
}

// The rung's rate on one block product of the plan (device operands): alone, the in-core rate
// the schedule's tiles can reach at best; and while copies go both ways over the host link, as
// they do all through the schedule (measured on an H100: kernels run several percent slower
// beside the copies' traffic).
struct BlockRates {
  double alone = 0, beside_copies = 0;
};

Status block_rate(Executor& ex, const GemmProblem& host, const Variant& v, const OutOfCorePlan& plan, BlockRates& out) {
  const RowMajorGemm g = canonicalize(host);
  const std::int64_t tm = std::min(plan.tile_m, g.m), tn = std::min(plan.tile_n, g.n), tk = std::min(plan.tile_k, g.k);
  const std::size_t in = storage_bytes(host.a.dtype);
  const OutOfCoreShape shape{g.m, g.n, g.k, g.trans_a, g.trans_b, in, sizeof(float), true};
  const TileElements e = tile_elements(shape, tm, tn, tk);
  std::unique_ptr<Buffer> a, b, c;
  GEMMLAB_TRY(ex.allocate(static_cast<std::size_t>(e.a) * in, a));
  GEMMLAB_TRY(ex.allocate(static_cast<std::size_t>(e.b) * in, b));
  GEMMLAB_TRY(ex.allocate(static_cast<std::size_t>(e.c) * sizeof(float), c));
  // Values do not change the rate: the host operands' first bytes, the rest as allocated.
  GEMMLAB_TRY(ex.upload(a->data(), host.a.data, std::min(a->bytes(), static_cast<std::size_t>(host.a.span_elements()) * in)));
  GEMMLAB_TRY(ex.upload(b->data(), host.b.data, std::min(b->bytes(), static_cast<std::size_t>(host.b.span_elements()) * in)));
  const GemmProblem p = block_problem(shape, host.a.dtype, DType::F32, host.compute, tm, tn, tk, a->data(), b->data(),
                                      c->data(), 1.0, 1.0);
  GEMMLAB_TRY(gemm(ex.context(), p, v));  // warm-up (and workspace)
  const double flops = 2.0 * static_cast<double>(tm) * static_cast<double>(tn) * static_cast<double>(tk);
  const auto median_rate = [&](double& rate) -> Status {
    std::vector<double> samples;
    for (int r = 0; r < kBlockRateReps; ++r) {
      double ms = 0;
      GEMMLAB_TRY(ex.time_once([&] { return gemm(ex.context(), p, v); }, ms));
      samples.push_back(ms);
    }
    std::sort(samples.begin(), samples.end());
    rate = flops / (samples[samples.size() / 2] * 1e-3);
    return Status::ok();
  };
  GEMMLAB_TRY(median_rate(out.alone));
  // Copies for twice as long as the repetitions take alone, so the link stays busy throughout.
  const double seconds = 2.0 * kBlockRateReps * flops / out.alone;
  return cuda::under_link_traffic(seconds, [&] { return median_rate(out.beside_copies); });
}

// The in-core rung on device copies of the operands, where they fit the device.
void run_in_core(const Options& o, Executor& ex, const HostProblem& host, const SampledCheck& check,
                 const Variant& v, std::vector<Record>& records) {
  const GemmProblem& hp = host.problem;
  Record r = new_record(o, hp, v.name, "in-core: " + v.technique, "in_core");
  r.config_name = v.config_name;
  const std::uint64_t a = matrix_bytes(hp.a), b = matrix_bytes(hp.b), c = matrix_bytes(hp.c);
  const std::uint64_t need = a + b + c + workspace_bound(v, hp.m, hp.n, hp.k) + kDeviceMargin;
  release_out_of_core_buffers(ex.context());
  cuda::DeviceMemoryState memory;
  if (Status s = cuda::current_device_memory(memory); !s || memory.free_bytes < need) {
    r.status = "skipped";
    r.message = s ? fmt::format("the operands do not fit the device in core ({:.1f} GB needed, {:.1f} GB free)",
                                static_cast<double>(need) * 1e-9, static_cast<double>(memory.free_bytes) * 1e-9)
                  : s.describe();
    records.push_back(std::move(r));
    return;
  }
  std::unique_ptr<Buffer> da, db, dc;
  GemmProblem dp = hp;
  Status s = ex.allocate(a, da);
  if (s) s = ex.allocate(b, db);
  if (s) s = ex.allocate(c, dc);
  if (s) s = ex.upload(da->data(), hp.a.data, a);
  if (s) s = ex.upload(db->data(), hp.b.data, b);
  if (!s) {
    r.status = "error";
    r.message = s.describe();
    records.push_back(std::move(r));
    return;
  }
  dp.a.data = da->data();
  dp.b.data = db->data();
  dp.c.data = dc->data();
  // With beta != 0 every call reads C: its initial values stay in a second device buffer.
  std::unique_ptr<Buffer> c_initial;
  if (hp.beta != 0.0) {
    host.reset_c();
    s = ex.allocate(c, c_initial);
    if (s) s = ex.upload(c_initial->data(), hp.c.data, c);
  }
  Calls calls;
  calls.blocking = false;
  calls.call = [&] { return gemm(ex.context(), dp, v); };
  calls.set_up_check = [&] {
    host.reset_c();
    return ex.upload(dc->data(), hp.c.data, c);
  };
  calls.result_to_host = [&] { return ex.download(hp.c.data, dc->data(), c); };
  calls.restore_c = [&] { return ex.copy_within(dc->data(), c_initial->data(), c); };
  if (s) verify_and_time(o, ex, hp, check, v.tolerance, calls, r);
  else {
    r.status = "error";
    r.message = s.describe();
  }
  records.push_back(std::move(r));
}

}  // namespace

std::vector<std::string> default_in_core_rungs(DType dtype) {
  if (dtype == DType::F32) return {"pipelined", "wgmma_3xtf32"};
  return {std::string(kAutoVariant)};
}

std::uint64_t out_of_core_host_bytes(const Options& o, const Shape& shape) {
  const OperandLayout l = operand_layout(o, shape);
  return matrix_bytes(l.a) + matrix_bytes(l.b) + matrix_bytes(l.c);
}

Status run_out_of_core(const Options& o, const OutOfCoreJob& job, Executor& ex, std::vector<Record>& records,
                       HostLink& link) {
  if (ex.backend() != Backend::Cuda)
    return {StatusCode::InvalidValue, "--out-of-core streams host operands through a GPU: use --backend cuda"};
  if (o.ld_padding != 0)
    return {StatusCode::InvalidValue,
            "--out-of-core does not take --pad (the library's out-of-core GEMM does: its tests cover padded leading "
            "dimensions)"};
  const std::vector<std::string> rungs = job.in_core.empty() ? default_in_core_rungs(o.dtype) : job.in_core;
  // Refused before anything is allocated or filled: a shape the host cannot hold.
  const std::optional<std::uint64_t> host_available = host_memory_available();
  for (const Shape& s : o.shapes) {
    const std::uint64_t bytes = out_of_core_host_bytes(o, s);
    if (host_available && static_cast<double>(bytes) > kHostShare * static_cast<double>(*host_available))
      return {StatusCode::AllocFailed,
              fmt::format("{}x{}x{} ({}) needs {} of page-locked host memory for A, B and C; {} is available "
                          "(at most {:.0f}% of it is used): choose a smaller size",
                          s.m, s.n, s.k, to_string(o.dtype), format_bytes(bytes), format_bytes(*host_available),
                          kHostShare * 100)};
  }
  cuda::HostLinkRates rates;
  GEMMLAB_TRY(cuda::measure_host_link(kLinkBytes, kLinkReps, rates));
  link = {rates.bytes, rates.h2d, rates.d2h, rates.h2d_both, rates.d2h_both, rates.h2d_strided};

  for (std::size_t i = 0; i < o.shapes.size(); ++i) {
    const Shape& shape = o.shapes[i];
    const std::size_t first_record = records.size();
    HostProblem host;
    GEMMLAB_TRY(make_host_problem(o, ex, shape, o.seed + i, host));
    const GemmProblem& p = host.problem;
    SampledCheck check;
    if (o.verify) {
      check.positions = sample_positions(p.m, p.n, host.seed);
      GEMMLAB_TRY(reference_sampled(p, check.positions, check.reference));
      check.note = fmt::format("{} elements of C checked against float64 dot products: a full reference of host "
                               "operands this large is not made",
                               check.positions.count());
    }
    const std::uint64_t limit = job.device_memory_share
                                    ? static_cast<std::uint64_t>(*job.device_memory_share *
                                                                 static_cast<double>(out_of_core_host_bytes(o, shape)))
                                    : o.device_memory_limit.value_or(0);
    for (const std::string& rung : rungs) {
      OutOfCoreOptions options;
      options.in_core.variant = rung;
      options.in_core.config = o.config;
      options.device_memory_limit = limit;
      Variant v;
      OutOfCorePlan plan;
      Record r = new_record(o, p, "ooc_" + rung, "", "out_of_core");
      r.out_of_core->device_memory_limit = limit;
      // The plan at nominal rates; the block product's rate measured at its tiles and taken
      // back to the rate of a block that fills the SMs (block_efficiency); the plan again at
      // that rate and the measured link: the tiles the model chooses for this machine. The
      // final block's rate, measured too, is the compute term of the bound.
      Status s = plan_out_of_core(ex.context(), p, options, plan);
      if (s) {
        GemmOptions named = options.in_core;
        named.variant = plan.variant;
        s = resolve_variant(ex.context(), p, named, v);
      }
      BlockRates rate;
      if (s) {
        release_out_of_core_buffers(ex.context());
        s = block_rate(ex, p, v, plan, rate);
      }
      if (s) {
        options.in_core.variant = plan.variant;
        const int sms = cuda::device_sm_count();
        options.rates.flops_per_second = rate.alone / block_efficiency(std::min(plan.tile_m, p.m), std::min(plan.tile_n, p.n),
                                                                      std::min(plan.tile_k, p.k), sms);
        options.rates.h2d_bytes_per_second = link.h2d;
        options.rates.d2h_bytes_per_second = link.d2h;
        options.rates.h2d_both_bytes_per_second = link.h2d_both;
        options.rates.d2h_both_bytes_per_second = link.d2h_both;
        options.rates.h2d_strided_bytes_per_second = link.h2d_strided;
        options.rates.multiprocessors = sms;
        const OutOfCorePlan first = plan;
        s = plan_out_of_core(ex.context(), p, options, plan);
        if (s && (plan.tile_m != first.tile_m || plan.tile_n != first.tile_n || plan.tile_k != first.tile_k))
          s = block_rate(ex, p, v, plan, rate);
      }
      if (!s) {
        r.status = s.code() == StatusCode::NotSupported ? "skipped" : "error";
        r.message = s.describe();
        records.push_back(std::move(r));
        continue;
      }
      r.variant = "ooc_" + plan.variant;
      r.technique = fmt::format("out-of-core: tiles of C by {} on host operands, copies up and down overlapped "
                                "with the block products on three streams",
                                plan.variant);
      r.config = plan.describe();
      r.config_name = v.config_name;
      Calls calls;
      calls.call = [&] { return gemm_out_of_core(ex.context(), p, options, &plan); };
      calls.set_up_check = calls.restore_c = [&] {
        host.reset_c();
        return Status::ok();
      };
      calls.result_to_host = nothing;
      verify_and_time(o, ex, p, check, v.tolerance, calls, r);
      // The model at the block rate measured for these very tiles beside the copies.
      plan.compute_seconds = plan.flops / rate.beside_copies;
      plan.model_seconds = plan.fill_seconds + std::max({plan.compute_seconds, plan.h2d_seconds, plan.d2h_seconds});
      r.out_of_core->plan = plan;
      r.out_of_core->block_flops_per_second = rate.beside_copies;
      r.out_of_core->block_alone_flops_per_second = rate.alone;
      records.push_back(std::move(r));
      if (job.time_in_core) run_in_core(o, ex, host, check, v, records);
    }
    release_out_of_core_buffers(ex.context());
    if (o.dtype == DType::F32)
      for (const int dim : job.xt_block_dims) {
        int block = dim;
        Record r = new_record(o, p, "cublasxt_sgemm", "cuBLAS's out-of-core layer on host operands", "cublasxt");
        r.anchor = true;
        Status s = dim > 0 ? Status::ok() : cuda::cublasxt_default_block_dim(ex.context().resources(), {ex.context().device()}, block);
        r.out_of_core->block_dim = block;
        r.out_of_core->default_block_dim = dim <= 0;
        r.config = fmt::format("blockDim={}{}", block, dim <= 0 ? " (default)" : "");
        r.config_name = dim <= 0 ? "default" : fmt::format("b{}", block);
        if (!s) {
          r.status = "error";
          r.message = s.describe();
          records.push_back(std::move(r));
          continue;
        }
        const std::vector<int> devices = {ex.context().device()};
        Calls calls;
        calls.call = [&] { return cuda::cublasxt_sgemm(p, devices, block, ex.context().resources()); };
        calls.set_up_check = calls.restore_c = [&] {
          host.reset_c();
          return Status::ok();
        };
        calls.result_to_host = nothing;
        verify_and_time(o, ex, p, check, std::nullopt, calls, r);
        records.push_back(std::move(r));
      }
    // The model's bound and the overlap achieved, at the rates measured in this run; ratios
    // against the fastest cublasXt of the shape.
    const Record* best_xt = nullptr;
    for (std::size_t j = first_record; j < records.size(); ++j)
      if (records[j].out_of_core->mode == "cublasxt" && records[j].timed &&
          (!best_xt || records[j].timing.median_ms < best_xt->timing.median_ms))
        best_xt = &records[j];
    for (std::size_t j = first_record; j < records.size(); ++j) {
      Record& r = records[j];
      if (r.out_of_core->mode == "out_of_core" && r.timed) {
        const OutOfCorePlan& plan = r.out_of_core->plan;
        // Each direction at the rate it keeps while the other runs, as the schedule runs them.
        const double compute = plan.compute_seconds;
        const double up = plan.h2d_seconds, down = plan.d2h_seconds;
        const double longest = std::max({compute, up, down}), sum = compute + up + down;
        r.out_of_core->bound_ms = longest * 1e3;
        const double measured = r.timing.median_ms * 1e-3;
        r.out_of_core->overlap = sum > longest ? std::clamp((sum - measured) / (sum - longest), 0.0, 1.0) : 1.0;
      }
      if (best_xt && r.timed) {
        r.anchor_variant = fmt::format("{} {}", best_xt->variant, best_xt->config);
        r.ratio_to_anchor = best_xt->timing.median_ms / r.timing.median_ms;
      }
    }
  }
  flag_noise(records, o);
  return Status::ok();
}

}  // namespace gemmlab::bench
