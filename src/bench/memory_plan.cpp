#include "bench/memory_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/element.hpp"
#include "core/host_info.hpp"
#include "core/reference.hpp"
#include "cuda/runtime/device.hpp"
#include "gemmlab/gemm.hpp"
#include "gemmlab/registry.hpp"
#include "library/workspace.hpp"

namespace gemmlab::bench {
namespace {

constexpr std::uint64_t kMaxBytes = std::numeric_limits<std::uint64_t>::max();
// The CUDA executor's flush buffer: twice the L2 in whole 16-byte words, and a word for the
// read-back's result (cuda/runtime/executor.cpp).
constexpr std::uint64_t kFlushFactor = 2;
// Dimensions up to this stay as they are when a smaller problem is suggested: they barely
// change the bytes, and a k of 16 should stay 16.
constexpr std::int64_t kKeptDimension = 1024;
// Suggested dimensions are rounded down to a multiple of this (where they are larger).
constexpr std::int64_t kSuggestedMultiple = 256;

// Sums and products that stop at 2^64 - 1 rather than wrap: 2^31-sided matrices of
// doubles pass 2^64 bytes.
std::uint64_t add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  return __builtin_add_overflow(a, b, &out) ? kMaxBytes : out;
}
std::uint64_t mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? kMaxBytes : out;
}
std::uint64_t u64(std::int64_t x) { return x > 0 ? static_cast<std::uint64_t>(x) : 0; }

// Adds `bytes` to the item named `what`, or a new item (the CPU executor's buffers join the
// harness's host copies of the same matrix).
void charge(std::vector<MemoryItem>& items, const std::string& what, std::uint64_t bytes) {
  if (bytes == 0) return;
  for (MemoryItem& item : items)
    if (item.what == what) {
      item.bytes = add(item.bytes, bytes);
      return;
    }
  items.push_back({what, bytes});
}

std::uint64_t total(const std::vector<MemoryItem>& items) {
  std::uint64_t sum = 0;
  for (const MemoryItem& item : items) sum = add(sum, item.bytes);
  return sum;
}

Matrix describe(std::int64_t rows, std::int64_t cols, Layout layout, std::int64_t padding, DType type) {
  Matrix x;
  x.rows = rows;
  x.cols = cols;
  x.layout = layout;
  x.dtype = type;
  x.ld = std::max<std::int64_t>(1, x.contiguous_extent()) + padding;
  return x;
}

double fmas_of(const Shape& s) {
  return static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
}

bool reference_on_device(const Shape& s, const Options& o, const MemoryTarget& target) {
  // As the CUDA executor decides (cuda/runtime/reference_gpu.cpp).
  const bool scale_only = s.k == 0 || o.alpha == 0.0;
  return target.backend == Backend::Cuda && !scale_only && s.m > 0 && s.n > 0 &&
         fmas_of(s) >= kDeviceReferenceMinFmas;
}

// The reference's bytes, as reference_gemm(), reference_on_device() and reference_sampled()
// allocate them.
void charge_reference(MemoryPlan& plan, const Options& o, const MemoryTarget& target) {
  const Shape& s = plan.shape;
  const std::uint64_t m = u64(s.m), n = u64(s.n), k = u64(s.k);
  const std::uint64_t result = mul(mul(2, mul(m, n)), sizeof(double));  // value and magnitude
  const std::uint64_t operands = mul(add(mul(m, k), mul(k, n)), sizeof(double));  // op(A), op(B) in float64
  const bool scale_only = s.k == 0 || o.alpha == 0.0;
  if (plan.verification == VerifyMode::Full) {
    if (reference_on_device(s, o, target)) {
      // On the host: the result, and op(A), op(B) and their absolute values in float64.
      charge(plan.host, "float64 reference", add(result, mul(2, operands)));
      // On the device: A, B and one product at a time, in float64.
      charge(plan.device, "float64 reference", mul(add(add(mul(m, k), mul(k, n)), mul(m, n)), sizeof(double)));
    } else {
      charge(plan.host, "float64 reference", add(result, scale_only ? 0 : operands));
    }
  } else if (plan.verification == VerifyMode::Sampled) {
    charge(plan.host, "sampled reference", reference_sampled_bytes(sample_positions(s.m, s.n, o.seed)));
  }
}

bool fits(const MemoryPlan& plan, const MemoryAvailable& available) {
  const std::optional<std::uint64_t> device = available.device();
  return (!available.host || plan.host_bytes() <= *available.host) &&
         (!device || plan.device_bytes() <= *device);
}

std::string shape_text(const Shape& s) { return fmt::format("{}x{}x{}", s.m, s.n, s.k); }

std::string items_text(const std::vector<MemoryItem>& items) {
  std::string text;
  for (const MemoryItem& item : items)
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", item.what, format_bytes(item.bytes));
  return text;
}

// Why a shape is not verified against its full reference; empty when it can be.
std::string why_not_full(const Options& o, const MemoryPlan& full, const MemoryTarget& target,
                         const MemoryAvailable& available) {
  const Shape& s = full.shape;
  if (!reference_on_device(s, o, target) && fmas_of(s) > o.host_reference_max_fmas)
    return fmt::format("a float64 reference of {:.3g} multiply-adds would take too long on the host, where the full "
                       "check goes up to {:.3g}",
                       fmas_of(s), o.host_reference_max_fmas);
  if (available.host && static_cast<double>(full.host_bytes()) > kFullReferenceHostShare * static_cast<double>(*available.host))
    return fmt::format("with the full float64 reference the run would need {} of host memory, more than {:.0f}% of "
                       "the {} available",
                       format_bytes(full.host_bytes()), 100 * kFullReferenceHostShare, format_bytes(*available.host));
  if (const auto device = available.device(); device && full.device_bytes() > *device)
    return fmt::format("with the full float64 reference on the device the run would need {} of device memory, {} "
                       "available",
                       format_bytes(full.device_bytes()), format_bytes(*device));
  return {};
}

// The largest problem of `shape`'s proportions that fits (every dimension above
// kKeptDimension scaled by one factor); absent when none does.
std::optional<Shape> smaller_shape(const Options& o, const Shape& shape, const std::vector<Variant>& selected,
                                   const MemoryTarget& target, const MemoryAvailable& available, VerifyMode mode) {
  const auto scaled = [&](double f) {
    const auto one = [f](std::int64_t d) {
      if (d <= kKeptDimension) return d;
      auto x = static_cast<std::int64_t>(static_cast<double>(d) * f);
      if (x > kSuggestedMultiple) x = x / kSuggestedMultiple * kSuggestedMultiple;
      return std::max<std::int64_t>(x, 1);
    };
    return Shape{one(shape.m), one(shape.n), one(shape.k)};
  };
  const auto fits_at = [&](double f) { return fits(plan_shape(o, scaled(f), selected, target, mode), available); };
  double lo = 0, hi = 1;  // fits at lo (or nothing does), not at hi
  if (!fits_at(1e-9)) return std::nullopt;
  for (int i = 0; i < 50; ++i) {
    const double mid = 0.5 * (lo + hi);
    (fits_at(mid) ? lo : hi) = mid;
  }
  const Shape best = scaled(lo);
  if (best.m == shape.m && best.n == shape.n && best.k == shape.k) return std::nullopt;
  return best;
}

// What would let `plan` fit, each checked by planning it again.
std::vector<std::string> advice(const Options& o, const MemoryPlan& plan, const std::vector<Variant>& selected,
                                const MemoryTarget& target, const MemoryAvailable& available) {
  std::vector<std::string> out;
  const std::optional<std::uint64_t> device = available.device();
  const bool device_over = device && plan.device_bytes() > *device;
  if (device_over && available.device_limit && available.device_free &&
      plan.device_bytes() <= add(*available.device_free, available.device_held))
    out.push_back(fmt::format("raise --device-memory-limit (now {}) to at least {}, or drop it",
                              format_bytes(*available.device_limit), format_bytes(plan.device_bytes())));
  const VerifyMode least = plan.verification == VerifyMode::None ? VerifyMode::None : VerifyMode::Sampled;
  if (plan.verification != VerifyMode::None) {
    Options unverified = o;
    unverified.verify = false;
    const MemoryPlan without = plan_shape(unverified, plan.shape, selected, target, VerifyMode::None);
    if (fits(without, available))
      out.push_back(fmt::format("--no-verify (no result copied back to check: {} less host memory)",
                                format_bytes(plan.host_bytes() - without.host_bytes())));
  }
  if (o.ld_padding > 0) {
    Options unpadded = o;
    unpadded.ld_padding = 0;
    if (fits(plan_shape(unpadded, plan.shape, selected, target, least), available)) out.push_back("--pad 0");
  }
  std::vector<Variant> plain;
  std::string copying;
  for (const Variant& v : selected) {
    if (workspace_bound(v, o, plan.shape) > 0) copying += (copying.empty() ? "" : ", ") + v.name;
    else plain.push_back(v);
  }
  if (!copying.empty() && !plain.empty() && fits(plan_shape(o, plan.shape, plain, target, least), available)) {
    std::string names;
    for (const Variant& v : plain) names += (names.empty() ? "" : ",") + v.name;
    out.push_back(fmt::format("leave out the rungs that copy A and B ({}): --variants {}", copying, names));
  }
  if (const auto smaller = smaller_shape(o, plan.shape, selected, target, available, least))
    out.push_back(fmt::format("a smaller problem (--mnk {} fits)", shape_text(*smaller)));
  if (device_over && available.device_total > 0 && available.device_free) {
    const std::uint64_t others = available.device_total - std::min(available.device_total, add(*available.device_free, available.device_held));
    if (static_cast<double>(others) > 0.1 * static_cast<double>(available.device_total))
      out.push_back(fmt::format("free the {} of the device's {} that other programs hold (nvidia-smi lists them)",
                                format_bytes(others), format_bytes(available.device_total)));
  }
  return out;
}

}  // namespace

std::string_view to_string(VerifyMode mode) {
  switch (mode) {
    case VerifyMode::None: return "none";
    case VerifyMode::Full: return "full";
    case VerifyMode::Sampled: return "sampled";
  }
  return "?";
}

std::string format_bytes(std::uint64_t bytes) {
  const auto b = static_cast<double>(bytes);
  if (bytes < 1000) return fmt::format("{} bytes", bytes);
  if (b < 1e6) return fmt::format("{:.1f} kB", b / 1e3);
  if (b < 1e9) return fmt::format("{:.1f} MB", b / 1e6);
  if (b < 1e12) return fmt::format("{:.1f} GB", b / 1e9);
  if (b < 1e15) return fmt::format("{:.1f} TB", b / 1e12);
  if (b < 1e18) return fmt::format("{:.1f} PB", b / 1e15);
  // kMaxBytes: a sum that stopped counting.
  return fmt::format("{}{:.1f} EB", bytes == kMaxBytes ? "more than " : "", b / 1e18);
}

OperandLayout operand_layout(const Options& o, const Shape& s) {
  const bool ta = o.op_a == Op::T, tb = o.op_b == Op::T;
  const Precision precision = precision_for(o.dtype, o.out_dtype).value_or(Precision{});
  OperandLayout l;
  l.a = describe(ta ? s.k : s.m, ta ? s.m : s.k, o.layout, o.ld_padding, precision.input);
  l.b = describe(tb ? s.n : s.k, tb ? s.k : s.n, o.layout, o.ld_padding, precision.input);
  l.c = describe(s.m, s.n, o.layout, o.ld_padding, precision.output);
  return l;
}

std::uint64_t buffer_elements(const Matrix& x) { return mul(u64(x.lines()), u64(x.ld)); }

std::uint64_t MemoryPlan::host_bytes() const { return total(host); }
std::uint64_t MemoryPlan::device_bytes() const { return total(device); }

std::optional<std::uint64_t> MemoryAvailable::device() const {
  std::optional<std::uint64_t> out;
  if (device_free) out = add(*device_free, device_held);
  if (device_limit) out = out ? std::min(*out, *device_limit) : *device_limit;
  return out;
}

std::uint64_t workspace_bound(const Variant& v, const Options& o, const Shape& s) {
  if (v.name == kAutoVariant) {
    // auto runs the rung the library chooses per shape: any of the backend's of its precision.
    std::uint64_t most = 0;
    for (const Variant& candidate : variants(v.backend))
      if (candidate.name != kAutoVariant && candidate.precision() == v.precision())
        most = std::max(most, workspace_bound(candidate, o, s));
    return most;
  }
  if (v.backend != Backend::Cuda || v.anchor) return 0;
  if (v.name == "pitched") {
    // run() copies A and B into cudaMallocPitch rows: each line's bytes rounded up to the
    // pitch alignment (at most 512 bytes on the GPUs gemmlab runs on).
    constexpr std::uint64_t kPitchAlignment = 512;
    const OperandLayout l = operand_layout(o, s);
    std::uint64_t bytes = 0;
    for (const Matrix& x : {l.a, l.b}) {
      const std::uint64_t line = mul(u64(x.contiguous_extent()), storage_bytes(x.dtype));
      bytes = add(bytes, mul(u64(std::max<std::int64_t>(x.lines(), 1)),
                             std::max<std::uint64_t>(add(line, kPitchAlignment - 1) / kPitchAlignment, 1) * kPitchAlignment));
    }
    return bytes;
  }
  // op(A) (m x k) and op(B) (n x k) as the rung's prepare() copies them.
  return gemmlab::workspace_bound(v, s.m, s.n, s.k);
}

MemoryPlan plan_shape(const Options& o, const Shape& shape, const std::vector<Variant>& selected,
                      const MemoryTarget& target, VerifyMode mode, std::vector<std::uint64_t>* workspaces) {
  MemoryPlan plan;
  plan.shape = shape;
  plan.verification = mode;
  const OperandLayout l = operand_layout(o, shape);
  // Where the executor's buffers live: the CPU's are host memory too.
  std::vector<MemoryItem>& executor = target.backend == Backend::Cpu ? plan.host : plan.device;
  // The harness keeps A, B and C on the host as float32 values, and 2-byte types encoded
  // too; the executor's buffers hold the storage type.
  const auto stored = [](const Matrix& x) { return mul(buffer_elements(x), storage_bytes(x.dtype)); };
  const auto on_host = [&stored](const Matrix& x) {
    return add(mul(buffer_elements(x), sizeof(float)), storage_bytes(x.dtype) == sizeof(float) ? 0 : stored(x));
  };
  for (const auto& [name, x] : {std::pair{"A", l.a}, std::pair{"B", l.b}}) {
    charge(plan.host, name, on_host(x));
    charge(executor, name, stored(x));
  }
  // C: its initial values on the host (the check's "before" and every verification run's
  // start) with its padding's canaries, and the executor's buffer; the result comes back in
  // the storage type and, decoded, as float32 values.
  const std::uint64_t c_bytes = stored(l.c);
  const std::uint64_t canaries = mul(mul(u64(l.c.lines()), u64(l.c.ld - l.c.contiguous_extent())), sizeof(float));
  charge(plan.host, "C", add(on_host(l.c), canaries));
  charge(executor, "C", c_bytes);
  if (o.time && !o.profile && o.beta != 0.0) charge(executor, "C's initial copy", c_bytes);
  if (mode != VerifyMode::None) charge(plan.host, "C result", on_host(l.c));
  if (target.backend == Backend::Cuda) charge(plan.device, "L2 flush buffer", target.flush_bytes);
  // Every rung's workspace stays allocated once made: this shape's, or a larger earlier one's.
  std::uint64_t workspace = 0;
  std::string names;
  for (std::size_t i = 0; i < selected.size(); ++i) {
    std::uint64_t bytes = workspace_bound(selected[i], o, shape);
    if (workspaces) {
      if (workspaces->size() < selected.size()) workspaces->resize(selected.size(), 0);
      bytes = (*workspaces)[i] = std::max((*workspaces)[i], bytes);
    }
    if (bytes == 0) continue;
    workspace = add(workspace, bytes);
    names += (names.empty() ? "" : ", ") + selected[i].name;
  }
  if (workspace > 0) charge(plan.device, "workspaces of " + names, workspace);
  charge_reference(plan, o, target);
  charge(plan.host, "allowance", kHostAllowance);
  if (target.backend == Backend::Cuda) charge(plan.device, "allowance", kDeviceAllowance);
  return plan;
}

std::vector<MemoryPlan> plan_run(const Options& o, const std::vector<Variant>& selected, const MemoryTarget& target,
                                 const MemoryAvailable& available) {
  std::vector<MemoryPlan> plans;
  std::vector<std::uint64_t> workspaces(selected.size(), 0);
  for (const Shape& shape : o.shapes) {
    if (!o.verify || o.profile) {
      plans.push_back(plan_shape(o, shape, selected, target, VerifyMode::None, &workspaces));
      continue;
    }
    std::vector<std::uint64_t> trial = workspaces;
    MemoryPlan full = plan_shape(o, shape, selected, target, VerifyMode::Full, &trial);
    std::string why = why_not_full(o, full, target, available);
    if (why.empty()) {
      workspaces = std::move(trial);
      plans.push_back(std::move(full));
      continue;
    }
    MemoryPlan sampled = plan_shape(o, shape, selected, target, VerifyMode::Sampled, &workspaces);
    sampled.why_sampled = std::move(why);
    plans.push_back(std::move(sampled));
  }
  return plans;
}

Status check_plans(const Options& o, const std::vector<Variant>& selected, const MemoryTarget& target,
                   const MemoryAvailable& available, const std::vector<MemoryPlan>& plans) {
  std::vector<const MemoryPlan*> over;
  for (const MemoryPlan& plan : plans)
    if (!fits(plan, available)) over.push_back(&plan);
  if (over.empty()) return Status::ok();
  const MemoryPlan& plan = *over.front();
  std::string text = fmt::format("{} ({}) does not fit in memory here; nothing was allocated:", shape_text(plan.shape),
                                 to_string(o.dtype));
  const std::optional<std::uint64_t> device = available.device();
  if (device && plan.device_bytes() > *device) {
    const std::string on = available.device_name.empty() ? "the device" : available.device_name;
    const std::string free_now =
        available.device_free ? fmt::format("{} free on {}", format_bytes(add(*available.device_free, available.device_held)), on)
                              : "";
    const bool limited = available.device_limit && *device == *available.device_limit;
    text += fmt::format("\n  needs {} of device memory ({}), {}", format_bytes(plan.device_bytes()),
                        items_text(plan.device),
                        limited ? fmt::format("{} allowed by --device-memory-limit{}", format_bytes(*device),
                                              free_now.empty() ? "" : " (" + free_now + ")")
                                : free_now);
  }
  if (available.host && plan.host_bytes() > *available.host)
    text += fmt::format("\n  needs {} of host memory ({}), {} available", format_bytes(plan.host_bytes()),
                        items_text(plan.host), format_bytes(*available.host));
  if (plan.verification == VerifyMode::Sampled)
    text += "\n  (verification is already at a sample of C's elements, no full reference: " + plan.why_sampled + ")";
  const std::vector<std::string> ways = advice(o, plan, selected, target, available);
  for (std::size_t i = 0; i < ways.size(); ++i) text += (i == 0 ? "\n  to run it: " : "; or ") + ways[i];
  if (over.size() > 1) {
    std::string others;
    for (std::size_t i = 1; i < over.size(); ++i) others += (i == 1 ? "" : ", ") + shape_text(over[i]->shape);
    text += fmt::format("\n  {} more of the {} shapes do{} not fit either: {}", over.size() - 1, plans.size(),
                        over.size() == 2 ? "es" : "", others);
  }
  return {StatusCode::AllocFailed, text};
}

Status measure_memory(const Options& o, Executor& ex, MemoryTarget& target, MemoryAvailable& available) {
  target = MemoryTarget{};
  available = MemoryAvailable{};
  target.backend = ex.backend();
  available.host = host_memory_available();
  if (target.backend != Backend::Cuda) return Status::ok();
  // The executor made its device the thread's current one.
  cuda::DeviceMemoryState state;
  GEMMLAB_TRY(cuda::current_device_memory(state));
  target.flush_bytes = (kFlushFactor * state.l2_bytes + 15) / 16 * 16 + sizeof(unsigned);
  available.device_free = state.free_bytes;
  available.device_total = state.total_bytes;
  available.device_held = target.flush_bytes;  // allocated when the executor was made
  available.device_limit = o.device_memory_limit;
  std::string ordinal, name;
  for (const auto& [key, value] : ex.describe()) {
    if (key == "device_ordinal") ordinal = value;
    if (key == "gpu") name = value;
  }
  if (!ordinal.empty()) available.device_name = fmt::format("device {}{}", ordinal, name.empty() ? "" : " (" + name + ")");
  return Status::ok();
}

Status check_memory(const Options& o, Executor& ex, MemoryCheck& out) {
  std::vector<Variant> selected;
  GEMMLAB_TRY(select_variants(o, ex.backend(), selected));
  GEMMLAB_TRY(measure_memory(o, ex, out.target, out.available));
  out.plans = plan_run(o, selected, out.target, out.available);
  return check_plans(o, selected, out.target, out.available, out.plans);
}

}  // namespace gemmlab::bench
