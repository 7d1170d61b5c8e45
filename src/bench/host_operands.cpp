#include "bench/host_operands.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "bench/memory_plan.hpp"
#include "core/element.hpp"
#include "core/host_info.hpp"
#include "core/random.hpp"
#include "core/verify.hpp"
#include "cpu/thread_pool.hpp"
#include "cuda/backend.hpp"
#include "gemmlab/gemm.hpp"

namespace gemmlab::bench {
namespace {

// The random streams of the harness (harness.cpp), so a shape and seed give the same values.
enum RandomStream : std::uint64_t { kStreamA = 1, kStreamB = 2, kStreamC = 3 };
// The jobs leave this share of the host's available memory to everything else.
constexpr double kHostShare = 0.9;

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

}  // namespace

Status check_host_job_types(const Options& o, std::string_view job) {
  if (is_fp8(o.dtype))
    return {StatusCode::InvalidValue,
            fmt::format("{} does not take --dtype {}: its block products carry no per-tensor scales (FP8 runs in "
                        "core: drop {})",
                        job, to_string(o.dtype), job)};
  if (o.out_dtype == DType::F32) return Status::ok();
  return {StatusCode::InvalidValue,
          fmt::format("{} keeps C in float32, so it takes --out-dtype f32 only, not {} (a 16-bit C runs in "
                      "core: drop {})",
                      job, to_string(o.out_dtype), job)};
}

std::uint64_t matrix_bytes(const Matrix& x) { return buffer_elements(x) * storage_bytes(x.dtype); }

std::uint64_t host_operand_bytes(const Options& o, const Shape& shape) {
  const OperandLayout l = operand_layout(o, shape);
  return matrix_bytes(l.a) + matrix_bytes(l.b) + matrix_bytes(l.c);
}

Status check_host_memory(const Options& o, const Shape& shape) {
  const std::uint64_t bytes = host_operand_bytes(o, shape);
  const std::optional<std::uint64_t> available = host_memory_available();
  if (available && static_cast<double>(bytes) > kHostShare * static_cast<double>(*available))
    return {StatusCode::AllocFailed,
            fmt::format("{}x{}x{} ({}) needs {} of page-locked host memory for A, B and C; {} is available (at "
                        "most {:.0f}% of it is used)",
                        shape.m, shape.n, shape.k, to_string(o.dtype), format_bytes(bytes),
                        format_bytes(*available), kHostShare * 100)};
  return Status::ok();
}

void HostProblem::reset_c() const { fill_matrix(problem.c, seed, kStreamC, problem.beta == 0.0); }

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
  p.compute = precision_for(o.dtype, o.out_dtype)->compute;
  out.seed = seed;
  fill_matrix(p.a, seed, kStreamA, false);
  fill_matrix(p.b, seed, kStreamB, false);
  out.reset_c();
  return validate(p);
}

Status make_sampled_check(const Options& o, const HostProblem& host, std::string_view operands, SampledCheck& out) {
  if (!o.verify) return Status::ok();
  const GemmProblem& p = host.problem;
  out.positions = sample_positions(p.m, p.n, host.seed);
  GEMMLAB_TRY(reference_sampled(p, out.positions, out.reference));
  out.note = fmt::format("{} elements of C checked against float64 dot products: a full reference of {} this "
                         "large is not made",
                         out.positions.count(), operands);
  return Status::ok();
}

Record host_record(const Options& o, const Shape& shape, const std::string& name, const std::string& technique) {
  Record r = shape_record(o, shape);
  r.backend = "cuda";
  r.variant = name;
  r.technique = technique;
  r.model.flops = 2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) * static_cast<double>(shape.k);
  return r;
}

HostCalls host_operand_calls(const HostProblem& host, std::function<Status()> call) {
  HostCalls calls;
  calls.call = std::move(call);
  calls.set_up_check = calls.restore_c = [&host] {
    host.reset_c();
    return Status::ok();
  };
  return calls;
}

Status copy_to_device(Executor& ex, const HostProblem& host, DeviceCopies& out) {
  const GemmProblem& hp = host.problem;
  const std::uint64_t a = matrix_bytes(hp.a), b = matrix_bytes(hp.b), c = matrix_bytes(hp.c);
  GEMMLAB_TRY(ex.allocate(a, out.a));
  GEMMLAB_TRY(ex.allocate(b, out.b));
  GEMMLAB_TRY(ex.allocate(c, out.c));
  GEMMLAB_TRY(ex.upload(out.a->data(), hp.a.data, a));
  GEMMLAB_TRY(ex.upload(out.b->data(), hp.b.data, b));
  out.problem = hp;
  out.problem.a.data = out.a->data();
  out.problem.b.data = out.b->data();
  out.problem.c.data = out.c->data();
  if (hp.beta != 0.0) {
    host.reset_c();
    GEMMLAB_TRY(ex.allocate(c, out.c_initial));
    GEMMLAB_TRY(ex.upload(out.c_initial->data(), hp.c.data, c));
  }
  return Status::ok();
}

HostCalls device_copy_calls(Executor& ex, const HostProblem& host, const DeviceCopies& copies, const Variant& v) {
  const GemmProblem& hp = host.problem;
  const std::uint64_t c = matrix_bytes(hp.c);
  HostCalls calls;
  calls.blocking = false;
  calls.call = [&ex, &copies, &v] { return gemm(ex.context(), copies.problem, v); };
  calls.set_up_check = [&ex, &host, &copies, c] {
    host.reset_c();
    return ex.upload(copies.c->data(), host.problem.c.data, c);
  };
  calls.result_to_host = [&ex, &host, &copies, c] { return ex.download(host.problem.c.data, copies.c->data(), c); };
  calls.restore_c = [&ex, &copies, c] { return ex.copy_within(copies.c->data(), copies.c_initial->data(), c); };
  calls.tolerance = [&v] { return v.tolerance; };
  return calls;
}

void verify_and_time(const Options& o, Executor& timer, const HostProblem& host, const SampledCheck& check,
                     const HostCalls& calls, Record& r) {
  const GemmProblem& p = host.problem;
  const int timer_device = timer.context().device();
  Status s = Status::ok();
  if (o.verify) {
    report_progress(o, Progress::Phase::Verify, r, 0, 1);
    s = calls.set_up_check();
    if (s) s = calls.call();
    if (s && calls.result_to_host) s = calls.result_to_host();
    if (s) {
      const std::span<const float> c(static_cast<const float*>(p.c.data), buffer_elements(p.c));
      r.verified = true;
      // No padding (the jobs refuse --pad): C's buffer has nothing between rows to compare.
      r.verification = verify_sampled(p, c, c, check.positions, check.reference, p.beta == 0.0,
                                      calls.tolerance ? calls.tolerance() : std::nullopt);
      r.verification_note = check.note;
    }
  }
  if (s && o.time) {
    std::vector<double> samples;
    for (int w = 0; s && w < o.warmup; ++w) {
      if (calls.restore_c_for_warmup && p.beta != 0.0) s = calls.restore_c();
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

}  // namespace gemmlab::bench
