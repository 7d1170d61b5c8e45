#include "bench/harness.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <cmath>
#include <limits>
#include <new>
#include <stdexcept>

#include "bench/memory_plan.hpp"
#include "core/element.hpp"
#include "core/quantise.hpp"
#include "cpu/thread_pool.hpp"
#include "core/random.hpp"
#include "core/reference.hpp"
#include "gemmlab/availability.hpp"
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
  std::vector<std::byte> encoded;  // 1- and 2-byte types only: float32 storage uses `host` itself
  std::unique_ptr<Buffer> device;
  // FP8: the per-tensor scale; `host` holds the stored elements, the values over the scale.
  float scale = 1.0f;

  std::size_t bytes() const { return host.size() * storage_bytes(desc.dtype); }
  // The storage the device copy and the reference read: exactly the rounded values.
  const void* stored() const {
    return storage_bytes(desc.dtype) == sizeof(float) ? static_cast<const void*>(host.data()) : encoded.data();
  }
};

// Independent random streams per operand of a shape.
enum RandomStream : std::uint64_t { kStreamA = 1, kStreamB = 2, kStreamC = 3, kStreamPad = 4 };

// Fills the elements between the contiguous extent and ld: NaN, or with `canaries` the
// random values of stream kStreamPad, one per padding element (lines x padding of them,
// nothing the size of the matrix).
void fill_padding(Operand& x, std::uint64_t seed, bool canaries) {
  const std::int64_t extent = x.desc.contiguous_extent(), padding = x.desc.ld - extent;
  if (padding <= 0) return;
  std::vector<float> fill(static_cast<std::size_t>(x.desc.lines() * padding), std::numeric_limits<float>::quiet_NaN());
  if (canaries) fill_random(fill, seed, kStreamPad);
  for (std::int64_t line = 0; line < x.desc.lines(); ++line)
    for (std::int64_t e = extent; e < x.desc.ld; ++e)
      x.host[static_cast<std::size_t>(line * x.desc.ld + e)] =
          round_to_storage(fill[static_cast<std::size_t>(line * padding + e - extent)], x.desc.dtype);
}

// Random values in [-1, 1) drawn as floats and rounded to the storage type (FP8: quantised
// per tensor), or NaN, and the device buffer for them; upload() copies them once the padding
// is filled too.
Status make_operand(Executor& ex, Operand& x, std::uint64_t seed, std::uint64_t stream, bool nan_fill) {
  const std::int64_t elements = x.desc.lines() * x.desc.ld;
  x.host.assign(static_cast<std::size_t>(elements), 0.0f);
  if (nan_fill) std::fill(x.host.begin(), x.host.end(), std::numeric_limits<float>::quiet_NaN());
  else fill_random(x.host, seed, stream);
  if (is_fp8(x.desc.dtype) && !nan_fill) {
    // The ld padding's values set no scale: fill_padding replaces them.
    x.scale = quantise_per_tensor(x.desc, x.desc.dtype, x.host);
  } else {
    for (float& value : x.host) value = round_to_storage(value, x.desc.dtype);
  }
  GEMMLAB_TRY(ex.allocate(x.bytes(), x.device));
  x.desc.data = x.device->data();
  return Status::ok();
}

Status upload(Executor& ex, Operand& x) {
  if (storage_bytes(x.desc.dtype) != sizeof(float)) x.encoded = encode(x.host, x.desc.dtype);
  return ex.upload(x.device->data(), x.stored(), x.bytes());
}

// The device copy as floats in `out` (x.host's size): 1- and 2-byte storage comes down into
// `scratch` and is decoded, exactly, so a result compares with x.host bit for bit.
Status download(Executor& ex, const Operand& x, std::vector<float>& out, std::vector<std::byte>& scratch) {
  if (storage_bytes(x.desc.dtype) == sizeof(float)) return ex.download(out.data(), x.device->data(), x.bytes());
  scratch.resize(x.bytes());
  GEMMLAB_TRY(ex.download(scratch.data(), x.device->data(), x.bytes()));
  decode(scratch, x.desc.dtype, out);
  return Status::ok();
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
// their ratio. On a CPU the rungs are timed one after another by default: OpenBLAS's worker
// threads spin for a while after each call and would take a core from the next rung of a
// round. Interleaving on a CPU (Options::interleave, for a shared machine whose speed
// drifts) runs one untimed call before each timed one, which absorbs that spin.
// A rung stops on its own rules (min_reps and min_seconds, or max_reps), or when
// max_seconds caps it; a cap that stops it short of the first rules is recorded.
//
// `c_initial`: with beta != 0 every run reads C, so C is restored from this copy before
// each repetition (outside the timed region); otherwise |beta| > 1 would grow C until it
// overflows, and the timed runs would compute on infinities.
struct TimedRung {
  const Variant* variant = nullptr;
  Record* record = nullptr;
  double estimate_ms = -1;  // one call's time before timing (its verification run); < 0: unknown
  std::vector<double> samples;
  double total_ms = 0;
  bool capped = false;

  int reps() const { return static_cast<int>(samples.size()); }
  bool satisfied(const Options& o) const { return reps() >= o.min_reps && total_ms >= o.min_seconds * 1e3; }
  bool wants_more(const Options& o) {
    if (reps() >= o.max_reps || satisfied(o)) return false;
    if (o.max_seconds > 0 && reps() >= 1 && total_ms >= o.max_seconds * 1e3) {
      capped = true;
      return false;
    }
    return true;
  }
  // About how many milliseconds of calls this rung has left (its warm-up included); < 0: unknown.
  double left_ms(const Options& o) const {
    const double per_call = reps() > 0 ? total_ms / reps() : estimate_ms;
    if (per_call < 0) return -1;
    int wanted = std::max(o.min_reps - reps(), 0);
    if (per_call > 0)
      wanted = std::max(wanted, static_cast<int>(std::ceil((o.min_seconds * 1e3 - total_ms) / per_call)));
    wanted = std::min(wanted, o.max_reps - reps());
    double left = wanted * per_call;
    if (o.max_seconds > 0) left = std::min(left, std::max(o.max_seconds * 1e3 - total_ms, per_call));
    if (reps() == 0) left += o.warmup * per_call;
    return left;
  }
};

std::string shape_text(const Shape& s) { return fmt::format("{}x{}x{}", s.m, s.n, s.k); }

// Times every rung of `rungs` (interleaved or in turn, above); a rung whose launch fails is marked
// as an error in its record and leaves the rounds.
void time_rungs(const Options& o, Executor& ex, const GemmProblem& problem, const Shape& shape,
                const Buffer* c_initial, std::vector<TimedRung>& rungs) {
  const auto fail = [](TimedRung& t, const Status& s) {
    t.record->status = "error";
    t.record->message = s.describe();
  };
  std::vector<TimedRung*> live;
  for (TimedRung& t : rungs) {
    t.samples.reserve(static_cast<std::size_t>(std::clamp(o.max_reps, 0, 100000)));
    live.push_back(&t);
  }
  // Interleaved: one repetition of each live rung per round. In turn: the first live
  // rung until it has its repetitions, then the next.
  const bool interleave = o.interleave.value_or(ex.backend() == Backend::Cuda);
  const bool rewarm = interleave && ex.backend() == Backend::Cpu;
  const auto report = [&](const TimedRung& t, const std::vector<TimedRung*>& pending) {
    if (!o.progress) return;
    Progress p;
    p.phase = Progress::Phase::Time;
    p.variant = t.variant->name;
    p.shape = shape;
    p.done = t.reps();
    p.total = std::max(o.min_reps, t.reps());
    double left = 0;
    for (const TimedRung* other : pending) {
      const double ms = other->left_ms(o);
      if (ms < 0) {
        left = -1e3;
        break;
      }
      left += ms;
    }
    p.eta_seconds = left * 1e-3;
    o.progress(p);
  };
  while (!live.empty()) {
    std::vector<TimedRung*> next;
    for (std::size_t i = 0; i < live.size(); ++i) {
      TimedRung* t = live[i];
      if (!t->wants_more(o)) continue;
      if (!interleave && !next.empty()) {  // an earlier rung is still being timed
        next.push_back(t);
        continue;
      }
      Status s = Status::ok();
      const std::string name = t->variant->name + " " + shape_text(shape);
      if (t->samples.empty() || rewarm) {  // warm-up, just before the rung's first repetition
        const ProfilerRange range(ex, "gemmlab warm-up " + name);
        const int calls = t->samples.empty() ? o.warmup : 1;
        for (int w = 0; s && w < calls; ++w) s = gemm(ex.context(), problem, *t->variant);
        if (s) s = ex.synchronize();
      }
      if (s && c_initial) s = ex.copy_within(problem.c.data, c_initial->data(), c_initial->bytes());
      if (s) s = ex.flush_caches(o.flush);
      double ms = 0;
      if (s) {
        const ProfilerRange range(ex, "gemmlab time " + name);
        s = ex.time_once(
            [&] {
              Status call = Status::ok();
              for (int b = 0; call && b < o.back_to_back; ++b) call = gemm(ex.context(), problem, *t->variant);
              return call;
            },
            ms);
        ms /= o.back_to_back;
      }
      if (!s) {
        fail(*t, s);
        continue;
      }
      t->samples.push_back(ms);
      t->total_ms += ms;
      next.push_back(t);
      std::vector<TimedRung*> pending = next;
      pending.insert(pending.end(), live.begin() + static_cast<std::ptrdiff_t>(i) + 1, live.end());
      report(*t, pending);
    }
    live = std::move(next);
  }
  for (TimedRung& t : rungs) {
    if (t.record->status == "error") continue;
    if (Status s = summarise(t.samples, t.record->timing); !s) {
      fail(t, s);
      continue;
    }
    t.record->timing.capped = t.capped;
    t.record->timed = true;
    t.record->gflops = t.record->model.flops / (t.record->timing.median_ms * 1e-3) * 1e-9;
  }
}

// What one shape's run learns for the next: the float64 reference's rate, for its estimate.
struct RunState {
  double reference_flops_per_second = 0;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The float64 reference of the shape as its plan says: in full by the executor, or at the
// sampled positions (drawn with the shape's seed) on the host.
Status compute_reference(Executor& ex, const GemmProblem& host, const MemoryPlan& plan, std::uint64_t seed,
                         SamplePositions& positions, ReferenceResult& reference) {
  if (plan.verification == VerifyMode::Sampled) {
    positions = sample_positions(host.m, host.n, seed);
    return reference_sampled(host, positions, reference);
  }
  return ex.reference(host, reference);
}

Status run_shape(const Options& o, Executor& ex, const Shape& shape, std::uint64_t seed, const MemoryPlan& plan,
                 const std::vector<Variant>& selected, RunState& state, std::vector<Record>& records) {
  const Precision precision = *precision_for(o.dtype, o.out_dtype);  // select_variants() checked it
  Operand a, b, c;
  const OperandLayout layout = operand_layout(o, shape);  // as the memory plan counted them, C in its storage type
  a.desc = layout.a;
  b.desc = layout.b;
  c.desc = layout.c;
  // Padding of A and B holds NaN, so a rung that reads past a row poisons its result;
  // C holds NaN where beta = 0 (it must not be read, and unwritten elements stay NaN; a
  // 2-byte C holds that type's NaN).
  GEMMLAB_TRY(make_operand(ex, a, seed, kStreamA, false));
  GEMMLAB_TRY(make_operand(ex, b, seed, kStreamB, false));
  GEMMLAB_TRY(make_operand(ex, c, seed, kStreamC, o.beta == 0.0));
  fill_padding(a, seed, /*canaries=*/false);
  fill_padding(b, seed, /*canaries=*/false);
  fill_padding(c, seed, /*canaries=*/true);  // C's padding: random canaries, compared bitwise afterwards
  GEMMLAB_TRY(upload(ex, a));
  GEMMLAB_TRY(upload(ex, b));
  GEMMLAB_TRY(upload(ex, c));

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
  problem.scale_a = a.scale;
  problem.scale_b = b.scale;
  GEMMLAB_TRY(validate(problem));

  ReferenceResult reference;
  SamplePositions positions;  // of a sampled check
  const double flops = 2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) * static_cast<double>(shape.k);
  const bool verifying = o.verify && !o.profile;
  if (verifying) {
    // The reference reads the very values the device got: A, B and beta's C0 in their
    // storage types (FP8: the stored elements, their scales applied with alpha, in float64).
    GemmProblem host = problem;
    host.a.data = const_cast<void*>(a.stored());
    host.b.data = const_cast<void*>(b.stored());
    host.c.data = const_cast<void*>(c.stored());
    if (o.progress) {
      Progress p;
      p.phase = Progress::Phase::Reference;
      p.shape = shape;
      p.total = 1;
      if (state.reference_flops_per_second > 0 && plan.verification == VerifyMode::Full)
        p.eta_seconds = flops / state.reference_flops_per_second;
      o.progress(p);
    }
    const auto start = std::chrono::steady_clock::now();
    {
      const ProfilerRange range(ex, "gemmlab reference " + shape_text(shape));
      GEMMLAB_TRY(compute_reference(ex, host, plan, seed, positions, reference));
    }
    const double seconds = seconds_since(start);
    if (seconds > 0 && flops > 0 && plan.verification == VerifyMode::Full)
      state.reference_flops_per_second = flops / seconds;
  }

  std::vector<float> result(verifying ? c.host.size() : 0);  // C as a rung left it, as floats
  std::vector<std::byte> result_stored;                       // ... and in a 2-byte C's storage
  std::unique_ptr<Buffer> c_initial;
  if (o.time && !o.profile && o.beta != 0.0) {
    GEMMLAB_TRY(ex.allocate(c.bytes(), c_initial));
    GEMMLAB_TRY(ex.upload(c_initial->data(), c.stored(), c.bytes()));
  }
  // Rungs that ran without an error (whatever the verification verdict), by record index:
  // the records vector does not move while they are timed.
  std::vector<std::pair<const Variant*, std::size_t>> ran;
  std::vector<double> call_ms;  // each ran rung's verification call, the first estimate of its timing
  double verify_seconds = 0;
  int verified = 0;
  std::deque<Variant> auto_choices;  // what auto runs for this shape (stable: `ran` points at them)
  for (const Variant& selected_variant : selected) {
    const Variant* v = &selected_variant;
    if (v->name == kAutoVariant) {
      // auto: the rung the library chooses for this problem, timed and verified as itself
      // (its own error bound), recorded under the name auto with what it chose.
      // Where nothing takes the problem, the record says why (the placeholder refuses it).
      Variant chosen;
      if (const Status s = resolve_variant(ex.context(), problem, {}, chosen); s) {
        chosen.technique = fmt::format("auto chose {}: {}", chosen.name, chosen.technique);
        chosen.name = std::string(kAutoVariant);
        chosen.rung = 0;
      } else {
        chosen = *v;
        chosen.can_implement = [s](const GemmProblem&) { return s; };
      }
      v = &auto_choices.emplace_back(std::move(chosen));
    }
    Record r = shape_record(o, shape);
    r.backend = std::string(to_string(v->backend));
    r.variant = v->name;
    r.technique = v->technique;
    r.config = v->config.to_string();
    r.config_name = v->config_name;
    r.anchor = v->anchor;
    r.threads = v->threads;
    r.seed = seed;
    r.scale_a = problem.scale_a;
    r.scale_b = problem.scale_b;
    r.model = v->model(problem);
    // A rung this GPU or this build cannot run (what it needs: Variant::min_compute_capability,
    // arch_specific) is skipped by name, before its can_implement.
    if (const std::string not_here = unavailable_here(*v); !not_here.empty()) {
      r.status = "skipped";
      r.message = "cannot run here: " + not_here;
      records.push_back(std::move(r));
      continue;
    }
    if (Status why = v->can_implement(problem); !why) {
      r.status = "skipped";
      r.message = why.message();
      records.push_back(std::move(r));
      continue;
    }
    Status status = Status::ok();
    double ms = -1;
    if (o.profile) {
      if (o.progress) {
        Progress p;
        p.phase = Progress::Phase::Profile;
        p.variant = v->name;
        p.shape = shape;
        o.progress(p);
      }
      const ProfilerRange range(ex, "gemmlab profile " + v->name + " " + shape_text(shape));
      status = gemm(ex.context(), problem, *v);
      if (status) status = ex.synchronize();
      r.profiled = static_cast<bool>(status);
    } else if (o.verify) {
      if (o.progress) {
        Progress p;
        p.phase = Progress::Phase::Verify;
        p.variant = v->name;
        p.shape = shape;
        p.done = verified;
        p.total = static_cast<int>(selected.size());
        if (verified > 0) p.eta_seconds = verify_seconds / verified * static_cast<double>(selected.size() - verified);
        o.progress(p);
      }
      const auto start = std::chrono::steady_clock::now();
      status = ex.upload(c.device->data(), c.stored(), c.bytes());
      if (status) {
        const ProfilerRange range(ex, "gemmlab verify " + v->name + " " + shape_text(shape));
        const auto call = std::chrono::steady_clock::now();
        status = gemm(ex.context(), problem, *v);
        if (status) status = ex.synchronize();
        ms = seconds_since(call) * 1e3;
      }
      if (status) status = download(ex, c, result, result_stored);
      if (status) {
        r.verified = true;
        if (plan.verification == VerifyMode::Sampled) {
          r.verification = verify_sampled(problem, result, c.host, positions, reference, o.beta == 0.0, v->tolerance);
          r.verification_note = plan.why_sampled;
        } else {
          r.verification = verify(problem, result, c.host, reference, o.beta == 0.0, v->tolerance);
        }
      }
      verify_seconds += seconds_since(start);
      ++verified;
    }
    if (!status) {
      r.status = "error";
      r.message = status.describe();
    }
    records.push_back(std::move(r));
    if (status) {
      ran.push_back({v, records.size() - 1});
      call_ms.push_back(ms);
    }
  }
  if (o.time && !o.profile) {
    std::vector<TimedRung> rungs;
    for (std::size_t i = 0; i < ran.size(); ++i) {
      TimedRung t;
      t.variant = ran[i].first;
      t.record = &records[ran[i].second];
      t.estimate_ms = call_ms[i];
      rungs.push_back(std::move(t));
    }
    time_rungs(o, ex, problem, shape, c_initial.get(), rungs);
  }
  if (o.inspect)
    for (const auto& [v, index] : ran)
      if (records[index].status == "ok") o.inspect(problem, *v, records[index]);
  return Status::ok();
}

}  // namespace

std::string_view to_string(Progress::Phase phase) {
  switch (phase) {
    case Progress::Phase::Reference: return "reference";
    case Progress::Phase::Verify: return "verify";
    case Progress::Phase::Time: return "time";
    case Progress::Phase::Profile: return "profile";
  }
  return "?";
}

Record shape_record(const Options& o, const Shape& shape) {
  const OperandLayout l = operand_layout(o, shape);
  Record r;
  r.dtype = std::string(to_string(o.dtype));
  r.out_dtype = std::string(to_string(o.out_dtype));
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
  return r;
}

Status summarise(const std::vector<double>& measured, Timing& timing) {
  if (measured.empty()) return {StatusCode::InvalidValue, "timing options allow no repetition (max_reps < 1)"};
  std::vector<double> sorted = measured;
  std::sort(sorted.begin(), sorted.end());
  timing.reps = static_cast<int>(sorted.size());
  timing.median_ms = percentile(sorted, 0.5);
  timing.min_ms = sorted.front();
  timing.max_ms = sorted.back();
  timing.spread = timing.median_ms > 0 ? (percentile(sorted, 0.75) - percentile(sorted, 0.25)) / timing.median_ms : 0;
  timing.samples = measured;
  return Status::ok();
}

Status run(const Options& o, Executor& ex, std::vector<Record>& records) {
  std::vector<Variant> selected;
  GEMMLAB_TRY(select_variants(o, ex.backend(), selected));
  if (selected.empty())
    return {StatusCode::NotSupported, fmt::format("the {} backend has no variants in this build",
                                                  to_string(ex.backend()))};
  // Nothing is allocated for a run that cannot fit; the plan also says how each shape is verified.
  MemoryCheck memory;
  GEMMLAB_TRY(check_memory(o, ex, memory));
  RunState state;
  try {
    for (std::size_t i = 0; i < o.shapes.size(); ++i)
      // Fresh inputs for every shape, replayable from the printed seed.
      GEMMLAB_TRY(run_shape(o, ex, o.shapes[i], o.seed + i, memory.plans[i], selected, state, records));
  } catch (const std::bad_alloc&) {
    return {StatusCode::AllocFailed, "host memory ran out building the problem or its reference"};
  } catch (const std::length_error&) {
    return {StatusCode::AllocFailed, "the problem is larger than host memory can address"};
  }
  attach_anchor_ratios(records);
  flag_noise(records, o);
  return Status::ok();
}

void attach_anchor_ratios(std::vector<Record>& records) {
  for (Record& r : records) {
    const Record* best = nullptr;
    for (const Record& a : records) {
      if (!a.anchor || !a.timed || a.backend != r.backend || a.dtype != r.dtype || a.out_dtype != r.out_dtype ||
          a.m != r.m || a.n != r.n || a.k != r.k || a.trans != r.trans || a.layout != r.layout)
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

namespace gemmlab::bench {

void flag_noise(std::vector<Record>& records, const Options& o) {
  for (Record& r : records) {
    if (!r.timed) continue;
    if (r.timing.spread > o.max_spread) {
      r.noisy = true;
      r.warnings.push_back(fmt::format("noisy: repetitions spread {:.1f}% (interquartile range over median), above "
                                       "--max-spread {:.1f}%",
                                       100 * r.timing.spread, 100 * o.max_spread));
    }
    if (r.timing.capped) {
      r.noisy = true;
      r.warnings.push_back(fmt::format("capped: {} repetitions of the {} asked, --max-time {:g} s cut the timing short",
                                       r.timing.reps, o.min_reps, o.max_seconds));
    }
  }
  // A multi-thread anchor (threads 0: all cores) against its single-thread twin of the same
  // problem, where the twin takes long enough (kMinThreadedTwinMs) for threads to pay.
  for (Record& r : records) {
    if (!r.anchor || !r.timed || r.threads == 1 || (r.threads == 0 && cpu::usable_cores() < 2)) continue;
    for (const Record& twin : records) {
      if (!twin.anchor || !twin.timed || twin.threads != 1 || twin.backend != r.backend || twin.dtype != r.dtype ||
          twin.out_dtype != r.out_dtype || twin.m != r.m || twin.n != r.n || twin.k != r.k || twin.trans != r.trans ||
          twin.layout != r.layout)
        continue;
      if (twin.timing.median_ms < kMinThreadedTwinMs) break;
      const double speedup = twin.timing.median_ms / r.timing.median_ms;
      if (speedup < kMinThreadSpeedup) {
        r.noisy = true;
        r.warnings.push_back(fmt::format("suspect: on {} threads no faster than {} ({:.2f}x); another load on the "
                                         "cores? ratios against it are not to be trusted",
                                         r.threads > 0 ? r.threads : cpu::usable_cores(), twin.variant, speedup));
      }
      break;
    }
  }
  // A ratio is only as good as its anchor.
  for (Record& r : records) {
    if (r.anchor || !r.ratio_to_anchor) continue;
    for (const Record& a : records)
      if (a.anchor && a.noisy && a.variant == r.anchor_variant && a.backend == r.backend && a.dtype == r.dtype &&
          a.out_dtype == r.out_dtype && a.m == r.m && a.n == r.n && a.k == r.k && a.trans == r.trans &&
          a.layout == r.layout) {
        r.noisy = true;
        r.warnings.push_back(fmt::format("anchor {} is flagged: its ratio is not to be trusted", a.variant));
        break;
      }
  }
}

}  // namespace gemmlab::bench
