#include "bench/out_of_core.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "bench/host_operands.hpp"
#include "core/element.hpp"
#include "cuda/backend.hpp"
#include "cuda/runtime/device.hpp"
#include "core/out_of_core_plan.hpp"
#include "gemmlab/availability.hpp"
#include "gemmlab/gemm.hpp"
#include "library/workspace.hpp"

namespace gemmlab::bench {
namespace {

// The host link is timed with copies of this size, the median of this many.
constexpr std::size_t kLinkBytes = std::size_t{256} << 20;
constexpr int kLinkReps = 5;
// Repetitions of a block product for the model's in-core rate.
constexpr int kBlockRateReps = 3;
// Device memory left free beside an in-core run's operands (libraries, module code).
constexpr std::uint64_t kDeviceMargin = std::uint64_t{512} << 20;

// A record of the job, its fields but the result's filled in.
Record new_record(const Options& o, const GemmProblem& p, const std::string& name, const std::string& technique,
                  const std::string& mode) {
  Record r = host_record(o, {p.m, p.n, p.k}, name, technique);
  r.out_of_core.emplace();
  r.out_of_core->mode = mode;
  return r;
}

// The rung's rate on one block product of the plan (device operands): alone, the in-core rate
// the schedule's tiles can reach at best; and while copies go both ways over the host link, as
// they do all through the schedule (measured on an H100: kernels run several percent slower
// beside the copies' traffic). With `first`, also what the model needs of the rung and the
// link: the rung's fixed cost per output tile in units of K, from the block product at a
// quarter of its K beside the whole one; and strided copies' rates beside these products, by
// the length of their rows and at each operand's pitch (cuda/runtime/host_link.cpp), what the
// schedule's blocks of a wider matrix move at.
struct BlockRates {
  double alone = 0, beside_copies = 0;
  double tile_overhead_k = 0;  // 0: not measured (K too short to cut, or noise)
  OutOfCoreRates::StridedCurve a_strided, b_strided, c_strided;
};
// The tile overhead is measured on blocks of this much of K (or all of it, or the plan's if
// longer) and a quarter of it, where that is at least kOverheadMinK.
constexpr std::int64_t kOverheadK = 4096;
constexpr std::int64_t kOverheadMinK = 1024;
// Rounds of measuring beside a plan's product and planning again at what was measured.
constexpr int kPlanRounds = 3;

Status block_rate(Executor& ex, const GemmProblem& host, const Variant& v, const OutOfCorePlan& plan, bool first,
                  BlockRates& out) {
  const RowMajorGemm g = canonicalize(host);
  const std::int64_t tm = std::min(plan.tile_m, g.m), tn = std::min(plan.tile_n, g.n), tk = std::min(plan.tile_k, g.k);
  const std::size_t in = storage_bytes(host.a.dtype);
  const OutOfCoreShape shape{g.m, g.n, g.k, g.trans_a, g.trans_b, in, sizeof(float), true};
  // With `first`, room for a block of K long enough to measure the tile overhead on.
  const std::int64_t k_long = first ? std::max(tk, std::min(g.k, kOverheadK)) : tk;
  const TileElements e = tile_elements(shape, tm, tn, k_long);
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
  const auto median_ms = [&](const GemmProblem& product, double& ms) -> Status {
    std::vector<double> samples;
    for (int r = 0; r < kBlockRateReps; ++r) {
      GEMMLAB_TRY(ex.time_once([&] { return gemm(ex.context(), product, v); }, ms));
      samples.push_back(ms);
    }
    std::sort(samples.begin(), samples.end());
    ms = samples[samples.size() / 2];
    return Status::ok();
  };
  const auto median_rate = [&](double& rate) -> Status {
    double ms = 0;
    GEMMLAB_TRY(median_ms(p, ms));
    rate = flops / (ms * 1e-3);
    return Status::ok();
  };
  GEMMLAB_TRY(median_rate(out.alone));
  // Copies for twice as long as the repetitions take alone, so the link stays busy throughout.
  const double seconds = 2.0 * kBlockRateReps * flops / out.alone;
  GEMMLAB_TRY(cuda::under_link_traffic(seconds, [&] { return median_rate(out.beside_copies); }));
  if (!first) return Status::ok();
  if (k_long >= kOverheadMinK) {
    // t = c0 + c1 k for the same tiles of C: the fixed cost c0 in units of K is c0 / c1.
    const auto product_of = [&](std::int64_t k) {
      return block_problem(shape, host.a.dtype, DType::F32, host.compute, tm, tn, k, a->data(), b->data(), c->data(),
                           1.0, 1.0);
    };
    const GemmProblem whole = product_of(k_long), quarter = product_of(k_long / 4);
    double t1 = 0, t4 = 0;
    GEMMLAB_TRY(gemm(ex.context(), whole, v));  // their workspaces
    GEMMLAB_TRY(gemm(ex.context(), quarter, v));
    GEMMLAB_TRY(median_ms(whole, t1));
    GEMMLAB_TRY(median_ms(quarter, t4));
    const double per_k = (t1 - t4) / static_cast<double>(k_long - k_long / 4);
    // A fixed cost too small to tell from the noise counts as one k.
    if (per_k > 0) out.tile_overhead_k = std::max(1.0, (t1 - per_k * static_cast<double>(k_long)) / per_k);
  }
  // Each operand's strided copies at its own pitch; operands with the same pitch share a curve.
  double ms = 0;
  const auto product = [&] { return ex.time_once([&] { return gemm(ex.context(), p, v); }, ms); };
  const std::size_t out_bytes = sizeof(float);
  const std::size_t pitches[3] = {static_cast<std::size_t>(g.lda) * in, static_cast<std::size_t>(g.ldb) * in,
                                  static_cast<std::size_t>(g.ldc) * out_bytes};
  OutOfCoreRates::StridedCurve* curves[3] = {&out.a_strided, &out.b_strided, &out.c_strided};
  for (int i = 0; i < 3; ++i) {
    const int same = static_cast<int>(std::find(pitches, pitches + i, pitches[i]) - pitches);
    if (same < i) *curves[i] = *curves[same];
    else GEMMLAB_TRY(cuda::measure_strided_beside(product, pitches[i], *curves[i]));
  }
  return Status::ok();
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
  DeviceCopies copies;
  if (Status s = copy_to_device(ex, host, copies); !s) {
    r.status = "error";
    r.message = s.describe();
  } else {
    verify_and_time(o, ex, host, check, device_copy_calls(ex, host, copies, v), r);
  }
  records.push_back(std::move(r));
}

}  // namespace

std::vector<std::string> default_in_core_rungs(DType dtype) {
  if (dtype == DType::F32) return {"pipelined", "wgmma_3xtf32"};
  return {std::string(kAutoVariant)};
}

std::uint64_t out_of_core_host_bytes(const Options& o, const Shape& shape) { return host_operand_bytes(o, shape); }

Status run_out_of_core(const Options& o, const OutOfCoreJob& job, Executor& ex, std::vector<Record>& records,
                       HostLink& link) {
  if (ex.backend() != Backend::Cuda)
    return {StatusCode::InvalidValue, "--out-of-core streams host operands through a GPU: use --backend cuda"};
  GEMMLAB_TRY(check_host_job_types(o, "--out-of-core"));
  if (o.ld_padding != 0)
    return {StatusCode::InvalidValue,
            "--out-of-core does not take --pad (the library's out-of-core GEMM does: its tests cover padded leading "
            "dimensions)"};
  const std::vector<std::string> rungs = job.in_core.empty() ? default_in_core_rungs(o.dtype) : job.in_core;
  // Refused before anything is allocated or filled: a shape the host cannot hold.
  for (const Shape& shape : o.shapes)
    if (Status s = check_host_memory(o, shape); !s) return {s.code(), s.message() + ": choose a smaller size"};
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
    GEMMLAB_TRY(make_sampled_check(o, host, "host operands", check));
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
      // back to the rate of a block that fills the SMs (block_efficiency), and the copies'
      // rates beside it; the plan again at those rates and the measured link: the tiles the
      // model chooses for this machine. What the copies keep depends on the product beside
      // them (beside the first plan's product a contiguous copy can move at little more than
      // half its rate beside the final one's), so this repeats beside each new plan's product
      // until the plan stays (kPlanRounds at most). The final block's rate, measured too, is the compute term of the bound.
      Status s = plan_out_of_core(ex.context(), p, options, plan);
      if (s) {
        GemmOptions named = options.in_core;
        named.variant = plan.variant;
        s = resolve_variant(ex.context(), p, named, v);
      }
      BlockRates rate;
      if (s) {
        release_out_of_core_buffers(ex.context());
        options.in_core.variant = plan.variant;
      }
      for (int round = 0; s && round < kPlanRounds; ++round) {
        s = block_rate(ex, p, v, plan, true, rate);
        if (!s) break;
        const int sms = cuda::device_sm_count();
        options.rates.tile_overhead_k = rate.tile_overhead_k > 0
                                            ? rate.tile_overhead_k
                                            : nominal_rates(v.input, v.compute, v.tensor_cores).tile_overhead_k;
        options.rates.flops_per_second = rate.alone / block_efficiency(std::min(plan.tile_m, p.m), std::min(plan.tile_n, p.n),
                                                                      std::min(plan.tile_k, p.k), sms,
                                                                      options.rates.tile_overhead_k);
        options.rates.h2d_bytes_per_second = link.h2d;
        options.rates.d2h_bytes_per_second = link.d2h;
        options.rates.h2d_both_bytes_per_second = link.h2d_both;
        options.rates.d2h_both_bytes_per_second = link.d2h_both;
        options.rates.h2d_strided_bytes_per_second = link.h2d_strided;
        options.rates.a_strided_beside = rate.a_strided;
        options.rates.b_strided_beside = rate.b_strided;
        options.rates.c_strided_beside = rate.c_strided;
        options.rates.multiprocessors = sms;
        const OutOfCorePlan before = plan;
        s = plan_out_of_core(ex.context(), p, options, plan);
        const bool same = plan.tile_m == before.tile_m && plan.tile_n == before.tile_n && plan.tile_k == before.tile_k;
        if (same) break;
        if (s && round + 1 == kPlanRounds) s = block_rate(ex, p, v, plan, false, rate);
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
      HostCalls calls = host_operand_calls(host, [&] { return gemm_out_of_core(ex.context(), p, options, &plan); });
      calls.tolerance = [&] { return v.tolerance; };
      verify_and_time(o, ex, host, check, calls, r);
      // The model at the block rate measured for these very tiles beside the copies.
      set_out_of_core_compute(plan, plan.flops / rate.beside_copies);
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
        const auto xt = [&] { return cuda::cublasxt_sgemm(p, devices, block, ex.context().resources()); };
        verify_and_time(o, ex, host, check, host_operand_calls(host, xt), r);
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
