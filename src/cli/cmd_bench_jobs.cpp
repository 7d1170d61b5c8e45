// bench's jobs beyond the in-core ladder: --out-of-core (bench/out_of_core.hpp) and --gpus /
// --devices (bench/distributed.hpp), each parsed, checked, run and reported as bench reports.
// run_bench (cmd_bench.cpp) hands them the options it has already parsed.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "bench/distributed.hpp"
#include "bench/out_of_core.hpp"
#include "bench/report.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/output_file.hpp"
#include "core/host_info.hpp"
#include "cuda/lab.hpp"
#include "gemmlab/distributed.hpp"
#include "gemmlab/registry.hpp"

namespace gemmlab::cli {
namespace {

// --xt-block-dims TEXT: cublasXt blockDims, 0 for its default; float32 only.
std::vector<int> parse_xt_block_dims(const std::string& text, DType dtype) {
  if (dtype != DType::F32)
    throw UsageError{fmt::format("--xt-block-dims: cublasXt has float32 GEMM only, not {}", to_string(dtype))};
  std::vector<int> dims;
  for (const std::string& dim : parse_names(text, "--xt-block-dims")) {
    const double value = parse_scalar("--xt-block-dims", dim);
    if (!(value >= 0 && value <= 65536 && value == std::floor(value)))
      throw UsageError{fmt::format("--xt-block-dims '{}': a blockDim is a whole number from 0 (the default) to 65536", dim)};
    dims.push_back(static_cast<int>(value));
  }
  return dims;
}

// "2 CUDA devices are visible (ordinals 0 to 1)", and what CUDA_VISIBLE_DEVICES hides.
std::string visible_text(std::size_t count) {
  std::string text = fmt::format("{} CUDA device{} visible", count, count == 1 ? " is" : "s are");
  if (count > 0) text += count == 1 ? " (ordinal 0)" : fmt::format(" (ordinals 0 to {})", count - 1);
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"))
    text += fmt::format("; CUDA_VISIBLE_DEVICES={} hides the others", visible);
  return text;
}

}  // namespace

// What every report of bench says of its run: the command, device, settings, when and where.
bench::RunContext report_context(const SelectionArgs& args, const std::string& command, Backend backend,
                                 const Executor& executor, const bench::Options& o, const std::string& started) {
  bench::RunContext context;
  context.command = command;
  context.backend = std::string(to_string(backend));
  context.device = executor.describe();
  context.options = o;
  context.command_line = args.command_line;
  context.date = started;
  context.host = host_info().hostname;
  context.samples = args.samples;
  return context;
}

// bench --out-of-core: its own job (bench/out_of_core.hpp), reported as bench reports.
int run_out_of_core_bench(const SelectionArgs& args, bench::Options& o, Backend backend,
                          std::optional<double> device_memory_share, bool seed_given) {
  if (backend != Backend::Cuda)
    throw UsageError{"--out-of-core streams host operands through a GPU: it needs --backend cuda"};
  bench::OutOfCoreJob job;
  job.device_memory_share = device_memory_share;
  if (!args.out_of_core_anchors) {
    job.xt_block_dims.clear();
    job.time_in_core = false;
  }
  if (args.variants) job.in_core = o.variants;
  o.variants.clear();
  if (args.xt_block_dims) job.xt_block_dims = parse_xt_block_dims(*args.xt_block_dims, o.dtype);
  if (!o.config.empty() && job.in_core.empty())
    throw UsageError{"--config names a configuration of the rungs in --variants: name them"};
  std::unique_ptr<Executor> executor;
  if (Status s = make_cuda_executor(executor, args.device.value_or(0)); !s) {
    fmt::print(stderr, "gemmlab: --backend cuda: {}\n", device_error_text(s, args.device));
    return s.code() == StatusCode::InvalidValue ? kExitUsage : kExitFailure;
  }
  for (const std::string& name : job.in_core)
    if (name != kAutoVariant && !find_variant(Backend::Cuda, name))
      throw UsageError{fmt::format("--variants: no cuda variant named '{}' (gemmlab list shows them)", name)};
  if (args.dry_run) {
    std::string rungs;
    for (const std::string& r : job.in_core.empty() ? bench::default_in_core_rungs(o.dtype) : job.in_core)
      rungs += (rungs.empty() ? "" : ", ") + r;
    fmt::print("gemmlab bench --out-of-core would run on cuda: {} {}{} {}: {} on {}\n", to_string(o.dtype),
               to_string(o.op_a), to_string(o.op_b), to_string(o.layout), rungs, shapes_text(o.shapes));
    for (const bench::Shape& s : o.shapes)
      fmt::print("  {}x{}x{} needs {} of page-locked host memory\n", s.m, s.n, s.k,
                 bench::format_bytes(bench::out_of_core_host_bytes(o, s)));
    return kExitOk;
  }
  OutputFile out;
  if (!out.open_or_report(args.output)) return kExitFailure;
  print_seed_line(o.seed, args.command_line, seed_given);
  const std::string started = bench::utc_now();
  std::vector<bench::Record> records;
  bench::HostLink link;
  if (Status s = bench::run_out_of_core(o, job, *executor, records, link); !s) {
    fmt::print(stderr, "gemmlab: {}\n", s.code() == StatusCode::AllocFailed ? s.message() : s.describe());
    return s.code() == StatusCode::InvalidValue ? kExitUsage : kExitFailure;
  }
  bench::RunContext context =
      report_context(args, "bench --out-of-core", Backend::Cuda, *executor, o, started);
  context.host_link = link;
  if (args.format == "json") fmt::print(out.stream(), "{}\n", bench::to_json(records, context).dump(2));
  else if (args.format == "csv") fmt::print(out.stream(), "{}", bench::format_csv(records));
  else fmt::print(out.stream(), "{}", bench::format_table(records, context));
  if (!out.commit_or_report()) return kExitFailure;
  int failures = 0;
  for (const bench::Record& r : records) failures += r.failed() ? 1 : 0;
  if (failures > 0) {
    fmt::print(stderr, "gemmlab: {} of {} runs failed (seed {})\n", failures, records.size(), o.seed);
    return kExitFailure;
  }
  return kExitOk;
}

// bench --gpus N | --devices LIST: its own job (bench/distributed.hpp), reported as bench reports.
// Bad flags are usage errors (2), as is an ordinal past the last visible GPU (as --device's);
// a machine with fewer GPUs than --gpus asks for, or without CUDA or NCCL, cannot run the job (1).
int run_distributed_bench(const SelectionArgs& args, bench::Options& o, bool seed_given, bool shapes_given) {
  const DistributedArgs& d = args.distributed;
  bench::DistributedJob job;
  job.anchors = d.anchors;
  std::optional<int> count;
  std::vector<int> named;
  if (d.gpus) count = parse_gpu_count(*d.gpus);
  else named = parse_device_list(*d.devices);
  if (d.decompositions) job.decompositions = parse_decompositions(*d.decompositions);
  if (d.placement) job.placements = parse_placements(*d.placement);
  if (d.broadcast_ctas) job.broadcast_ctas = *d.broadcast_ctas;
  if (d.transport) {
    const std::optional<PanelTransport> t = parse_panel_transport(*d.transport);
    if (!t)
      throw UsageError{fmt::format("--panel-transport: '{}' is not a transport (copy-engines or broadcasts)",
                                   *d.transport)};
    job.transport = *t;
  }
  if (d.cut) {
    const std::optional<DistributedCut> cut = parse_cut(*d.cut);
    if (!cut) throw UsageError{fmt::format("--cut: '{}' is not a cut (k-panels, slices or stripe)", *d.cut)};
    if (*cut != DistributedCut::KPanels && d.panel_width)
      throw UsageError{fmt::format("--cut {} excludes --panel-width (its products hold all of K)", to_string(*cut))};
    job.cut = *cut;
  }
  if (d.panel_width) job.panel_width = *d.panel_width;
  else if (!d.anchors) job.placements = {bench::Placement::Device};  // explain: the NCCL schedule's model
  const bool host = std::ranges::find(job.placements, bench::Placement::Host) != job.placements.end();
  const bool device = std::ranges::find(job.placements, bench::Placement::Device) != job.placements.end();
  if (args.variants) {
    if (o.variants.size() != 1)
      throw UsageError{fmt::format("--variants: {} runs one rung on every GPU (and on one GPU for t1); name one, "
                                   "or auto",
                                   d.flag())};
    job.variant = o.variants.front();
  }
  if (!o.config.empty() && job.variant == kAutoVariant)
    throw UsageError{"--config names a configuration of the rung in --variants: name the rung"};
  if (o.ld_padding != 0)
    throw UsageError{fmt::format("{} does not take --pad (the job's blocks are dense copies of the host matrices; "
                                 "the library's tests cover padded leading dimensions)",
                                 d.flag())};
  if (args.xt_block_dims) {
    job.xt_block_dims = parse_xt_block_dims(*args.xt_block_dims, o.dtype);
    if (!host) throw UsageError{"--xt-block-dims: cublasXt runs on host operands, beside --placement host"};
  }
  if (!job.anchors) job.xt_block_dims.clear();
  if (!shapes_given) o.shapes = bench::default_distributed_shapes();
  // --device-memory-limit: per GPU, what the panel buffers and the rung's workspace may use.
  job.device_memory_limit = o.device_memory_limit.value_or(0);
  o.device_memory_limit.reset();

  // The GPUs: every one named must exist; --gpus N needs N of them.
  std::vector<cuda::DeviceFacts> visible;
  const std::size_t wanted = count ? static_cast<std::size_t>(*count) : named.size();
  if (Status s = cuda::query_all_devices(visible); !s) {
    fmt::print(stderr, "gemmlab: {} needs {} GPU{}: {}\n", d.flag(), wanted, wanted == 1 ? "" : "s", s.message());
    return kExitFailure;
  }
  if (count) {
    if (static_cast<std::size_t>(*count) > visible.size()) {
      fmt::print(stderr, "gemmlab: {} needs {} GPUs; {}\n", d.flag(), *count, visible_text(visible.size()));
      return kExitFailure;
    }
    for (int g = 0; g < *count; ++g) job.devices.push_back(g);
  } else {
    for (const int ordinal : named)
      if (static_cast<std::size_t>(ordinal) >= visible.size()) {
        fmt::print(stderr, "gemmlab: {}: device {} does not exist: {}\n", d.flag(), ordinal, visible_text(visible.size()));
        return kExitUsage;
      }
    job.devices = named;
  }
  std::string why;
  if (device && !distributed_available(&why)) {
    fmt::print(stderr, "gemmlab: {}: the distributed GEMM on device operands needs NCCL: {} (--placement host runs "
               "without it)\n",
               d.flag(), why);
    return kExitFailure;
  }
  if (const Variant* v = find_variant(Backend::Cuda, job.variant); v && v->anchor)
    throw UsageError{fmt::format("--variants: {} is an anchor; the distributed GEMM's products run on gemmlab's rungs "
                                 "(its host form's cublasXt anchor runs with --placement host)",
                                 job.variant)};
  {
    // The rung exists, computes the dtype and runs here (the words every command uses).
    bench::Options rung = o;
    rung.variants = {job.variant};
    check_selection(rung, Backend::Cuda);
  }
  o.variants.clear();

  std::string names;
  for (const int g : job.devices) names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", g, visible[static_cast<std::size_t>(g)].name);
  if (args.dry_run) {
    std::string decompositions, placements;
    for (const Decomposition x : job.decompositions)
      decompositions += fmt::format("{}{}", decompositions.empty() ? "" : ",", to_string(x));
    for (const bench::Placement x : job.placements) placements += fmt::format("{}{}", placements.empty() ? "" : ",", to_string(x));
    fmt::print("gemmlab bench {} would run on {} GPU{}: {}: {} {}{} {}, rung {}, decompositions {}, placement {}{}: {}\n",
               d.flag(), job.devices.size(), job.devices.size() == 1 ? "" : "s", names, to_string(o.dtype),
               to_string(o.op_a), to_string(o.op_b), to_string(o.layout), job.variant, decompositions, placements,
               job.anchors ? ", beside the rung on one GPU" : "", shapes_text(o.shapes));
    for (const bench::Shape& s : o.shapes) {
      std::string line = fmt::format("  {}x{}x{} needs {} of page-locked host memory", s.m, s.n, s.k,
                                     bench::format_bytes(bench::distributed_host_bytes(o, s)));
      if (device)
        for (const Decomposition x : job.decompositions) {
          std::vector<std::uint64_t> per_gpu;
          if (!bench::distributed_block_bytes(o, s, x, static_cast<int>(job.devices.size()), per_gpu)) continue;
          line += fmt::format("; {}: blocks of {} on the busiest GPU", to_string(x),
                              bench::format_bytes(*std::ranges::max_element(per_gpu)));
        }
      fmt::print("{}\n", line);
    }
    return kExitOk;
  }

  std::unique_ptr<Executor> executor;
  if (Status s = make_cuda_executor(executor, job.devices.front()); !s) {
    fmt::print(stderr, "gemmlab: {}: {}\n", d.flag(), s.describe());
    return s.code() == StatusCode::InvalidValue ? kExitUsage : kExitFailure;
  }
  OutputFile out;
  if (!out.open_or_report(args.output)) return kExitFailure;
  o.progress = progress_printer(args.progress);
  print_seed_line(o.seed, args.command_line, seed_given);
  const std::string started = bench::utc_now();
  bench::DistributedResults results;
  if (Status s = bench::run_distributed(o, job, *executor, results); !s) {
    fmt::print(stderr, "gemmlab: {}: {}\n", d.flag(), s.code() == StatusCode::AllocFailed ? s.message() : s.describe());
    return s.code() == StatusCode::InvalidValue ? kExitUsage : kExitFailure;
  }
  bench::RunContext context =
      report_context(args, std::string(bench::kDistributedCommand), Backend::Cuda, *executor, o, started);
  context.host_link = results.host_link;
  if (args.format == "json") fmt::print(out.stream(), "{}\n", bench::distributed_json(results, context).dump(2));
  else if (args.format == "csv") fmt::print(out.stream(), "{}", bench::format_csv(results.records));
  else fmt::print(out.stream(), "{}", bench::format_distributed_table(results, context));
  if (!out.commit_or_report()) return kExitFailure;
  int failures = 0;
  for (const bench::Record& r : results.records) failures += r.failed() ? 1 : 0;
  if (failures > 0) {
    fmt::print(stderr, "gemmlab: {} of {} runs failed (seed {})\n", failures, results.records.size(), o.seed);
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace gemmlab::cli
