#include "bench/harness.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <new>

#include "core/element.hpp"
#include "core/random.hpp"
#include "core/reference.hpp"
#include "gemmlab/gemm.hpp"
#include "gemmlab/registry.hpp"

namespace gemmlab::bench {
namespace {

// One operand: its descriptor, its values on the host (as floats, already rounded to the
// storage type), the same values in the storage type when that is not float32, and its
// copy where the backend computes.
struct Operand {
  Matrix desc;
  std::vector<float> host;
  std::vector<std::byte> encoded;  // 2-byte types only: float32 storage uses `host` itself
  std::unique_ptr<Buffer> device;

  std::size_t bytes() const { return host.size() * storage_bytes(desc.dtype); }
  // The storage the device copy and the reference read: exactly the rounded values.
  const void* stored() const {
    return storage_bytes(desc.dtype) == sizeof(float) ? static_cast<const void*>(host.data()) : encoded.data();
  }
};

// Independent random streams per operand of a shape.
enum RandomStream : std::uint64_t { kStreamA = 1, kStreamB = 2, kStreamC = 3, kStreamPad = 4 };

Matrix describe(std::int64_t rows, std::int64_t cols, Layout layout, std::int64_t padding, DType type) {
  Matrix x;
  x.rows = rows;
  x.cols = cols;
  x.layout = layout;
  x.dtype = type;
  x.ld = std::max<std::int64_t>(1, x.contiguous_extent()) + padding;
  return x;
}

// Fills the elements between the contiguous extent and ld with `fill` values.
void fill_padding(Operand& x, const std::vector<float>& fill) {
  const std::int64_t extent = x.desc.contiguous_extent();
  for (std::int64_t line = 0; line < x.desc.lines(); ++line)
    for (std::int64_t e = extent; e < x.desc.ld; ++e) {
      const auto idx = static_cast<std::size_t>(line * x.desc.ld + e);
      x.host[idx] = round_to_storage(fill[idx], x.desc.dtype);
    }
}

// Random values in [-1, 1) drawn as floats and rounded to the storage type (or NaN), and
// the device buffer for them; upload() copies them once the padding is filled too.
Status make_operand(Executor& ex, Operand& x, std::uint64_t seed, std::uint64_t stream, bool nan_fill) {
  const std::int64_t elements = x.desc.lines() * x.desc.ld;
  x.host.assign(static_cast<std::size_t>(elements), 0.0f);
  if (nan_fill) std::fill(x.host.begin(), x.host.end(), std::numeric_limits<float>::quiet_NaN());
  else fill_random(x.host, seed, stream);
  for (float& value : x.host) value = round_to_storage(value, x.desc.dtype);
  GEMMLAB_TRY(ex.allocate(x.bytes(), x.device));
  x.desc.data = x.device->data();
  return Status::ok();
}

Status upload(Executor& ex, Operand& x) {
  if (storage_bytes(x.desc.dtype) != sizeof(float)) x.encoded = encode(x.host, x.desc.dtype);
  return ex.upload(x.device->data(), x.stored(), x.bytes());
}

double percentile(std::vector<double> sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

// On a GPU, timing is interleaved: after every rung's warm-up, each round times one
// repetition of every rung still short of its repetitions (the anchor among them), so the
// device's slow drifts (an H100's clock follows its power draw: cuBLAS alone moved 655-766
// TFLOP/s from one minute to the next) fall on the rung and its anchor alike and cancel in
// their ratio. On a CPU the rungs are timed one after another: OpenBLAS's worker threads
// spin for a while after each call and would take a core from the next rung of a round.
// A rung stops on its own rules (min_reps and min_seconds, or floor_reps once past
// max_seconds, or max_reps).
//
// `c_initial`: with beta != 0 every run reads C, so C is restored from this copy before
// each repetition (outside the timed region); otherwise |beta| > 1 would grow C until it
// overflows, and the timed runs would compute on infinities.
struct TimedRung {
  const Variant* variant;
  Record* record;
  std::vector<double> samples;
  double total_ms = 0;
  bool wants_more(const Options& o) const {
    const int reps = static_cast<int>(samples.size());
    if (reps >= o.max_reps) return false;
    if (reps >= o.floor_reps && total_ms > o.max_seconds * 1e3) return false;
    return reps < o.min_reps || total_ms < o.min_seconds * 1e3;
  }
};

Status summarise(const std::vector<double>& unsorted, Timing& timing) {
  if (unsorted.empty()) return {StatusCode::InvalidValue, "timing options allow no repetition (max_reps < 1)"};
  std::vector<double> samples = unsorted;
  std::sort(samples.begin(), samples.end());
  timing.reps = static_cast<int>(samples.size());
  timing.median_ms = percentile(samples, 0.5);
  timing.min_ms = samples.front();
  timing.max_ms = samples.back();
  timing.spread = (percentile(samples, 0.75) - percentile(samples, 0.25)) / timing.median_ms;
  return Status::ok();
}

// Times every rung of `rungs` (interleaved or in sequence, above); a rung whose launch fails is marked
// as an error in its record and leaves the rounds.
void time_rungs(const Options& o, Executor& ex, const GemmProblem& problem, const Buffer* c_initial,
                      std::vector<TimedRung>& rungs) {
  const auto fail = [](TimedRung& t, const Status& s) {
    t.record->status = "error";
    t.record->message = s.describe();
  };
  std::vector<TimedRung*> live;
  for (TimedRung& t : rungs) {
    t.samples.reserve(static_cast<std::size_t>(std::max(o.max_reps, 0)));
    live.push_back(&t);
  }
  // Interleaved: one repetition of each live rung per round. In sequence: the first live
  // rung until it has its repetitions, then the next.
  const bool interleave = ex.backend() == Backend::Cuda;
  while (!live.empty()) {
    std::vector<TimedRung*> next;
    for (TimedRung* t : live) {
      if (!t->wants_more(o)) continue;
      if (!interleave && !next.empty()) {  // an earlier rung is still being timed
        next.push_back(t);
        continue;
      }
      Status s = Status::ok();
      if (t->samples.empty()) {  // warm-up, just before the rung's first repetition
        for (int i = 0; s && i < o.warmup; ++i) s = gemm(problem, *t->variant, ex.stream());
        if (s) s = ex.synchronize();
      }
      if (s && c_initial) s = ex.copy_within(problem.c.data, c_initial->data(), c_initial->bytes());
      if (s) s = ex.flush_caches(o.flush);
      double ms = 0;
      if (s) s = ex.time_once([&] { return gemm(problem, *t->variant, ex.stream()); }, ms);
      if (!s) {
        fail(*t, s);
        continue;
      }
      t->samples.push_back(ms);
      t->total_ms += ms;
      next.push_back(t);
    }
    live = std::move(next);
  }
  for (TimedRung& t : rungs) {
    if (t.record->status == "error") continue;
    if (Status s = summarise(t.samples, t.record->timing); !s) {
      fail(t, s);
      continue;
    }
    t.record->timed = true;
    t.record->gflops = t.record->model.flops / (t.record->timing.median_ms * 1e-3) * 1e-9;
  }
}

Status run_shape(const Options& o, Executor& ex, const Shape& shape, std::uint64_t seed,
                 const std::vector<Variant>& selected, std::vector<Record>& records) {
  const bool ta = o.op_a == Op::T, tb = o.op_b == Op::T;
  const Precision precision = *precision_for(o.dtype);  // select_variants() checked it
  Operand a, b, c;
  a.desc = describe(ta ? shape.k : shape.m, ta ? shape.m : shape.k, o.layout, o.ld_padding, precision.input);
  b.desc = describe(tb ? shape.n : shape.k, tb ? shape.k : shape.n, o.layout, o.ld_padding, precision.input);
  c.desc = describe(shape.m, shape.n, o.layout, o.ld_padding, precision.output);
  if (storage_bytes(c.desc.dtype) != sizeof(float))
    return {StatusCode::NotSupported, fmt::format("the harness keeps C in float32, not {}", to_string(c.desc.dtype))};
  // Padding of A and B holds NaN, so a rung that reads past a row poisons its result;
  // C holds NaN where beta = 0 (it must not be read, and unwritten elements stay NaN).
  GEMMLAB_TRY(make_operand(ex, a, seed, kStreamA, false));
  GEMMLAB_TRY(make_operand(ex, b, seed, kStreamB, false));
  GEMMLAB_TRY(make_operand(ex, c, seed, kStreamC, o.beta == 0.0));
  {
    std::vector<float> canary(std::max({a.host.size(), b.host.size(), c.host.size()}));
    fill_random(canary, seed, kStreamPad);
    std::vector<float> nans(canary.size(), std::numeric_limits<float>::quiet_NaN());
    fill_padding(a, nans);
    fill_padding(b, nans);
    fill_padding(c, canary);  // C's padding: random canaries, compared bitwise afterwards
    GEMMLAB_TRY(upload(ex, a));
    GEMMLAB_TRY(upload(ex, b));
    GEMMLAB_TRY(upload(ex, c));
  }

  GemmProblem problem;
  problem.m = shape.m;
  problem.n = shape.n;
  problem.k = shape.k;
  problem.op_a = o.op_a;
  problem.op_b = o.op_b;
  problem.alpha = o.alpha;
  problem.beta = o.beta;
  problem.a = a.desc;
  problem.b = b.desc;
  problem.c = c.desc;
  problem.compute = precision.compute;
  GEMMLAB_TRY(validate(problem));

  ReferenceResult reference;
  if (o.verify) {
    // The reference reads the very values the device got: A and B in their storage type.
    GemmProblem host = problem;
    host.a.data = const_cast<void*>(a.stored());
    host.b.data = const_cast<void*>(b.stored());
    host.c.data = c.host.data();
    if (o.progress && static_cast<double>(shape.m) * static_cast<double>(shape.n) * static_cast<double>(shape.k) > 5e8)
      o.progress(fmt::format("float64 reference for {}x{}x{} (seed {})", shape.m, shape.n, shape.k, seed));
    GEMMLAB_TRY(ex.reference(host, reference));
  }

  std::vector<float> result(c.host.size());
  std::unique_ptr<Buffer> c_initial;
  if (o.time && o.beta != 0.0) {
    GEMMLAB_TRY(ex.allocate(c.host.size() * sizeof(float), c_initial));
    GEMMLAB_TRY(ex.upload(c_initial->data(), c.host.data(), c.host.size() * sizeof(float)));
  }
  // Rungs that ran without an error (whatever the verification verdict), by record index:
  // the records vector does not move while they are timed.
  std::vector<std::pair<const Variant*, std::size_t>> ran;
  for (const Variant& selected_variant : selected) {
    const Variant* v = &selected_variant;
    Record r;
    r.backend = std::string(to_string(v->backend));
    r.variant = v->name;
    r.technique = v->technique;
    r.config = v->config.to_string();
    r.config_name = v->config_name;
    r.dtype = std::string(to_string(o.dtype));
    r.anchor = v->anchor;
    r.threads = v->threads;
    r.m = shape.m;
    r.n = shape.n;
    r.k = shape.k;
    r.lda = a.desc.ld;
    r.ldb = b.desc.ld;
    r.ldc = c.desc.ld;
    r.trans = fmt::format("{}{}", to_string(o.op_a), to_string(o.op_b));
    r.layout = std::string(to_string(o.layout));
    r.alpha = o.alpha;
    r.beta = o.beta;
    r.seed = seed;
    r.model = v->model(problem);
    if (Status why = v->can_implement(problem); !why) {
      r.status = "skipped";
      r.message = why.message();
      records.push_back(std::move(r));
      continue;
    }
    if (o.progress) o.progress(fmt::format("{} {} {}x{}x{}", r.backend, r.variant, shape.m, shape.n, shape.k));
    Status status = Status::ok();
    if (o.verify) {
      status = ex.upload(c.device->data(), c.host.data(), c.host.size() * sizeof(float));
      if (status) status = gemm(problem, *v, ex.stream());
      if (status) status = ex.synchronize();
      if (status) status = ex.download(result.data(), c.device->data(), result.size() * sizeof(float));
      if (status) {
        r.verified = true;
        r.verification = verify(problem, result, c.host, reference, o.beta == 0.0, v->tolerance);
      }
    }
    if (!status) {
      r.status = "error";
      r.message = status.describe();
    }
    records.push_back(std::move(r));
    if (status) ran.push_back({v, records.size() - 1});
  }
  if (o.time) {
    std::vector<TimedRung> rungs;
    for (const auto& [v, index] : ran) rungs.push_back({v, &records[index], {}, 0.0});
    time_rungs(o, ex, problem, c_initial.get(), rungs);
  }
  if (o.inspect)
    for (const auto& [v, index] : ran)
      if (records[index].status == "ok") o.inspect(problem, *v, records[index]);
  return Status::ok();
}

}  // namespace

Status select_variants(const Options& o, Backend backend, std::vector<Variant>& selected) {
  selected.clear();
  const std::optional<Precision> precision = precision_for(o.dtype);
  if (!precision)
    return {StatusCode::InvalidValue,
            fmt::format("--dtype {}: no rung computes in {} (f32, tf32, bf16 or f16)", to_string(o.dtype),
                        to_string(o.dtype))};
  if (o.variants.empty()) {
    if (!o.config.empty())
      return {StatusCode::InvalidValue,
              fmt::format("--config {} needs --variants naming the rungs it configures (gemmlab list --configs "
                          "shows each rung's configurations)",
                          o.config)};
    for (const Variant& v : variants(backend))
      if (v.precision() == *precision) selected.push_back(v);
    if (selected.empty() && !variants(backend).empty())
      return {StatusCode::InvalidValue,
              fmt::format("--dtype {}: the {} backend has no {} variant (gemmlab list shows each variant's types)",
                          to_string(o.dtype), to_string(backend), to_string(o.dtype))};
    return Status::ok();
  }
  for (std::size_t i = 0; i < o.variants.size(); ++i) {
    const std::string& name = o.variants[i];
    for (std::size_t j = 0; j < i; ++j)
      if (o.variants[j] == name)
        return {StatusCode::InvalidValue, fmt::format("--variants names '{}' twice", name)};
    const Variant* v = find_variant(backend, name);
    if (!v)
      return {StatusCode::InvalidValue,
              fmt::format("no {} variant named '{}' (gemmlab list shows them)", to_string(backend), name)};
    if (v->precision() != *precision) {
      const std::optional<DType> its = dtype_name(v->precision());
      return {StatusCode::InvalidValue,
              fmt::format("variant '{}' computes {} ({} inputs, {} math), not --dtype {}{}", name,
                          its ? to_string(*its) : "another precision", to_string(v->input),
                          to_string(v->compute), to_string(o.dtype),
                          its ? fmt::format(" (run it with --dtype {})", to_string(*its)) : "")};
    }
    Variant configured;
    // The anchor runs as the vendor ships it; every other named rung takes the configuration.
    GEMMLAB_TRY(configure(*v, v->anchor ? std::string_view{} : std::string_view{o.config}, configured));
    selected.push_back(std::move(configured));
  }
  return Status::ok();
}

Status run(const Options& o, Executor& ex, std::vector<Record>& records) {
  std::vector<Variant> selected;
  GEMMLAB_TRY(select_variants(o, ex.backend(), selected));
  if (selected.empty())
    return {StatusCode::NotSupported, fmt::format("the {} backend has no variants in this build",
                                                  to_string(ex.backend()))};
  try {
    for (std::size_t i = 0; i < o.shapes.size(); ++i)
      // Fresh inputs for every shape, replayable from the printed seed.
      GEMMLAB_TRY(run_shape(o, ex, o.shapes[i], o.seed + i, selected, records));
  } catch (const std::bad_alloc&) {
    return {StatusCode::AllocFailed, "host memory ran out building the problem or its reference"};
  }
  attach_anchor_ratios(records);
  return Status::ok();
}

void attach_anchor_ratios(std::vector<Record>& records) {
  for (Record& r : records) {
    const Record* best = nullptr;
    for (const Record& a : records) {
      if (!a.anchor || !a.timed || a.backend != r.backend || a.dtype != r.dtype || a.m != r.m || a.n != r.n ||
          a.k != r.k || a.trans != r.trans || a.layout != r.layout)
        continue;
      // CPU rungs compare with the anchor on as many threads; otherwise the first anchor.
      if (!best || (a.threads == r.threads && best->threads != r.threads)) best = &a;
    }
    if (best && r.timed) {
      r.anchor_variant = best->variant;
      r.ratio_to_anchor = best->timing.median_ms / r.timing.median_ms;
    }
  }
}

}  // namespace gemmlab::bench
