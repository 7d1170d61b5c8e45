#include "bench/distributed.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "bench/distributed_runs.hpp"
#include "bench/host_operands.hpp"
#include "core/element.hpp"
#include "cuda/backend.hpp"
#include "cuda/distributed.hpp"
#include "gemmlab/distributed.hpp"

namespace gemmlab::bench {
namespace {

// The link between the GPUs and the host link are timed with transfers of this size, the
// median of this many.
constexpr std::size_t kLinkBytes = std::size_t{256} << 20;
constexpr int kLinkReps = 5;

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
  const std::uint64_t in = storage_bytes(precision_for(o.dtype, o.out_dtype).value_or(Precision{}).input);
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
  GEMMLAB_TRY(check_host_job_types(o, "--gpus/--devices"));
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

}  // namespace gemmlab::bench
