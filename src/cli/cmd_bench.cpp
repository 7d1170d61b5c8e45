// gemmlab bench and gemmlab verify: select, run through the harness, report.
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "bench/distributed.hpp"
#include "bench/explain.hpp"
#include "bench/harness.hpp"
#include "bench/host_operands.hpp"
#include "bench/lab_report.hpp"
#include "bench/out_of_core.hpp"
#include "bench/report.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/output_file.hpp"
#include "core/host_info.hpp"
#include "core/random.hpp"
#include "bench/shape_sets.hpp"
#include "cuda/lab.hpp"
#include "gemmlab/distributed.hpp"
#include "gemmlab/gemm.hpp"
#include "gemmlab/registry.hpp"

namespace gemmlab::cli {
namespace {

// Default problems: one that shows each technique's effect in seconds on this backend,
// and for verify a set of awkward shapes (1x1x1, primes, tile +- 1, k = 1, skinny).
constexpr std::int64_t kDefaultCpuSize = 1024;
constexpr std::int64_t kDefaultCudaSize = 4096;
const std::vector<bench::Shape> kVerifyShapes = {
    {1, 1, 1}, {127, 131, 257}, {64, 64, 1}, {33, 65, 129}, {1000, 513, 77}, {255, 1, 63}, {1, 300, 31},
};
// On a terminal, progress goes to stderr once a run has taken this long (--progress: at once).
constexpr double kProgressAfterSeconds = 2.0;
// A timing progress line at most this often.
constexpr double kProgressInterval = 1.0;

}  // namespace

void add_dtype_option(CLI::App& c, std::string& dtype, std::string& out_dtype) {
  std::vector<std::string> names, outputs;
  for (DType name : kDTypeNames) names.emplace_back(to_string(name));
  for (DType output : kOutDTypeNames) outputs.emplace_back(to_string(output));
  c.add_option("--dtype", dtype,
               "Input type: f32 (default), tf32 (f32 storage, tensor-core math), bf16 or f16 (2-byte inputs, "
               "f32 sums), e4m3 or e5m2 (FP8 inputs quantised with a per-tensor scale, f32 sums); C is f32 unless "
               "--out-dtype says otherwise. Runs the variants of that type and its anchor")
      ->check(CLI::IsMember(names));
  // An FP8 C gets its own answer rather than CLI11's "not in {f32,bf16,f16}".
  const CLI::Validator no_fp8_c(
      [](std::string& text) {
        const std::optional<DType> type = parse_dtype(text);
        return type && is_fp8(*type) ? std::string(kFp8OutputRefusal) : std::string();
      },
      "");
  c.add_option("--out-dtype", out_dtype,
               "How C (and beta's C0) is stored: f32 (default), or bf16 or f16: with --dtype bf16 or f16 that type "
               "itself, with --dtype e4m3 or e5m2 either (the f32 sums rounded once, as frameworks keep C)")
      ->check(no_fp8_c)
      ->check(CLI::IsMember(outputs));
}

void apply_dtypes(const std::string& dtype, const std::string& out_dtype, bench::Options& o) {
  o.dtype = *parse_dtype(dtype);  // CLI11 checked the names
  o.out_dtype = *parse_dtype(out_dtype);
  if (Status s = bench::check_dtypes(o.dtype, o.out_dtype); !s) throw UsageError{s.message()};
}

std::string types_text(const bench::Options& o) {
  if (o.out_dtype == DType::F32) return std::string(to_string(o.dtype));
  return fmt::format("{} (C in {})", to_string(o.dtype), to_string(o.out_dtype));
}

void check_selection(const bench::Options& o, Backend backend) {
  // A misspelt name first, in the words every command uses for it.
  for (const std::string& name : o.variants)
    if (name != kAutoVariant && !find_variant(backend, name))
      throw UsageError{fmt::format("--variants: no {} variant named '{}' (gemmlab list shows them)",
                                   to_string(backend), name)};
  std::vector<Variant> selected;
  if (Status s = bench::select_variants(o, backend, selected); !s) throw UsageError{s.message()};
}

CLI::Validator finite_range(double low, double high) {
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value) || value < low || value > high)
          return fmt::format("'{}' must be a finite number from {:g} to {:g}", text, low, high);
        return {};
      },
      fmt::format("FINITE in [{:g} - {:g}]", low, high));
}

void print_seed_line(std::uint64_t seed, const std::string& command_line, bool seed_given) {
  fmt::print(stderr, "seed {} | {}{}\n", seed, command_line, seed_given ? "" : fmt::format(" --seed {}", seed));
}

std::function<void(const bench::Progress&)> progress_printer(bool forced) {
  if (!forced && !::isatty(STDERR_FILENO)) return {};
  struct State {
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    double last_time_line = -1e9;
  };
  auto state = std::make_shared<State>();
  return [forced, state](const bench::Progress& p) {
    const double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - state->start).count();
    if (!forced && now < kProgressAfterSeconds) return;
    if (p.phase == bench::Progress::Phase::Time) {
      // A rung's first repetition, then at most one line a second.
      if (p.done > 1 && now - state->last_time_line < kProgressInterval) return;
      state->last_time_line = now;
    }
    const std::string shape = fmt::format("{}x{}x{}", p.shape.m, p.shape.n, p.shape.k);
    std::string what;
    switch (p.phase) {
      case bench::Progress::Phase::Reference: what = fmt::format("reference {} (float64)", shape); break;
      case bench::Progress::Phase::Verify:
        what = fmt::format("verify {} {} (rung {} of {})", p.variant, shape, p.done + 1, p.total);
        break;
      case bench::Progress::Phase::Time:
        what = fmt::format("time {} {}: {} of {} repetitions", p.variant, shape, p.done, p.total);
        break;
      case bench::Progress::Phase::Profile: what = fmt::format("profile {} {}", p.variant, shape); break;
    }
    const std::string left = p.eta_seconds < 0   ? "time left not known yet"
                             : p.eta_seconds < 1 ? "under a second left in this phase"
                                                 : fmt::format("about {:.0f} s left in this phase", std::ceil(p.eta_seconds));
    fmt::print(stderr, "[{:7.1f} s] {}, {}\n", now, what, left);
  };
}

void add_selection_options(CLI::App& c, SelectionArgs& a, bool timing_options) {
  const auto text = [&c](const std::string& name, std::optional<std::string>& target, const std::string& help) {
    return c.add_option_function<std::string>(name, [&target](const std::string& v) { target = v; }, help);
  };
  c.add_option("--backend", a.backend, "cpu, cuda or auto (cuda when a GPU is present)");
  CLI::Option* device = add_device_option(c, a.device);
  add_dtype_option(c, a.dtype, a.out_dtype);
  text("--variants", a.variants,
       "Comma-separated variant names within the backend; auto: the rung the library chooses for each problem");
  c.add_option("--config", a.config,
               "Named configuration every rung of --variants runs (gemmlab list --configs shows them; "
               "default: each rung's first, usually auto)");
  std::string sets;
  for (const bench::ShapeSet& s : bench::shape_sets())
    sets += fmt::format("{}{}: {}", sets.empty() ? "" : "; ", s.name, s.description);
  CLI::Option* sizes = text("--sizes", a.sizes, "Square sizes, e.g. 512,1024");
  CLI::Option* mnk = text("--mnk", a.mnk, "Shapes MxNxK, e.g. 1000x513x77,64x64x1");
  CLI::Option* shapes = text("--shapes", a.shapes, "A named set of shapes: " + sets);
  sizes->excludes(mnk)->excludes(shapes);
  mnk->excludes(shapes);
  c.add_option("--trans", a.trans, "op(A)op(B): NN, NT, TN or TT");
  c.add_option("--layout", a.layout, "row or col (storage of A, B and C)")
      ->check(CLI::IsMember({"row", "col"}));
  text("--alpha", a.alpha, "alpha: finite, |alpha| <= 3.4e38 (default 1)");
  text("--beta", a.beta, "beta: finite, |beta| <= 3.4e38 (default 0: C is not read)");
  c.add_option("--pad", a.pad, "Extra elements in every leading dimension")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 20));
  text("--seed", a.seed, "Seed of the random inputs, 0 to 2^64-1 (default: fresh, printed)");
  c.add_option("--format", a.format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  c.add_option("--output", a.output,
               "Write the report to this file instead of stdout (written whole: an existing file is replaced "
               "only once the report is complete)");
  text("--device-memory-limit", a.device_memory_limit,
       "Most device memory the run may use, e.g. 8G or 512M (powers of 1024; 80GB: of 1000) or bytes; "
       "a run that needs more than this or than is free is refused before anything is allocated. CUDA only");
  c.add_flag("--progress", a.progress, "Progress lines on stderr even when it is not a terminal");
  c.add_flag("--dry-run", a.dry_run,
             "Check the command line, say what would run and the memory it needs, and stop");
  if (timing_options) {
    CLI::Option* reps = c.add_option("--reps", a.reps, "Minimum timed repetitions of every rung (default 10)")
                            ->check(CLI::Range(1, 100000));
    CLI::Option* warmup = c.add_option("--warmup", a.warmup, "Untimed runs before timing (default 2)")
                              ->check(CLI::Range(0, 1000));
    CLI::Option* min_time = c.add_option("--min-time", a.min_time, "Minimum seconds of timed runs per rung (default 0.25)")
                                ->check(finite_range(0.0, 600.0));
    CLI::Option* max_time =
        c.add_option("--max-time", a.max_time,
                     "Cap in seconds on a rung's timed runs: a rung it stops before --reps is reported (default: none)")
            ->check(finite_range(0.001, 86400.0));
    CLI::Option* max_spread =
        c.add_option("--max-spread", a.max_spread,
                     "Percent spread (interquartile range over median) above which a result is flagged noisy "
                     "(default 10)")
            ->check(finite_range(0.0, 1000.0));
    CLI::Option* interleave =
        c.add_option("--interleave", a.interleave,
                     "Time the rungs and the anchor in rounds of one repetition each: on, off or auto (default: "
                     "on for cuda, off for cpu)")
            ->check(CLI::IsMember({"auto", "on", "off"}));
    CLI::Option* flush = text("--l2-flush", a.l2_flush,
                              "GPU L2 before each repetition: clean (default; operands evicted, no dirty lines), write "
                              "(evicted by a memset, as nvbench and Triton do; its dirty lines are written back inside "
                              "the timed kernel) or none (warm). CUDA only")
                             ->check(CLI::IsMember({"clean", "write", "none"}));
    CLI::Option* back_to_back =
        c.add_option("--back-to-back", a.back_to_back,
                     "Calls per timed repetition, one after the other with nothing between them, as a framework's "
                     "layers run (the L2 flushed before the first only); the time is per call (default 1)")
            ->check(CLI::Range(1, 1000));
    CLI::Option* samples = c.add_flag("--samples", a.samples, "Every repetition's time in the JSON (time_ms.samples)");
    c.add_flag("--no-verify", a.no_verify, "Skip verification (timing only)");
    CLI::Option* explain =
        c.add_flag("--explain", a.explain, "Print each rung's model, roofline bound and occupancy beside it");
    CLI::Option* profile =
        c.add_flag("--profile", a.profile,
                   "Run each selected rung once, untimed and unverified, inside NVTX ranges, for nsys or ncu");
    for (CLI::Option* timing :
         {reps, warmup, min_time, max_time, max_spread, interleave, flush, back_to_back, samples, explain})
      profile->excludes(timing);
    CLI::Option* out_of_core = c.add_flag(
        "--out-of-core", a.out_of_core,
        "Operands in host memory, streamed through the GPU in tiles (--variants: the in-core rungs of the tiles; "
        "--device-memory-limit also takes a share of the problem, e.g. 25%), beside cublasXt and the in-core rung");
    // Needs --out-of-core or --gpus/--devices: checked by run_bench (CLI11's needs() takes no either-or).
    text("--xt-block-dims", a.xt_block_dims,
         "With --out-of-core or --gpus and f32: cublasXt blockDims to time, 0 for its default (default "
         "0,2048,4096,8192,16384)");
    for (CLI::Option* other : {profile, explain, interleave}) out_of_core->excludes(other);
    DistributedArgs& d = a.distributed;
    CLI::Option* gpus = c.add_option_function<std::string>(
        "--gpus", [&d](const std::string& v) { d.gpus = v; },
        "The distributed job on the first N visible GPUs (NCCL, one host): each shape on one GPU (t1), with its "
        "operands cut over the N GPUs (strong and weak scaling) and in host memory beside cublasXt; default shapes "
        "8192, 16384, 32768 and 16383x16385x4097");
    CLI::Option* devices = text("--devices", d.devices, "The distributed job on these GPUs, e.g. 0,1 (as --gpus)");
    gpus->excludes(devices);
    text("--decompositions", d.decompositions,
         "With --gpus: rows (1-D: row blocks, B broadcast in panels), summa (2-D grid) or both (default rows,summa)");
    text("--placement", d.placement,
         "With --gpus: where the operands start, device (cut over the GPUs), host (whole in host memory) or both "
         "(default device,host)");
    c.add_option_function<int>(
         "--broadcast-ctas", [&d](int v) { d.broadcast_ctas = v; },
         fmt::format("With --gpus: thread blocks NCCL's broadcasts may use, and SMs the products leave free for them "
                     "(default {}; 0: NCCL's choice, no SMs left free)",
                     kDefaultBroadcastCtas))
        ->check(CLI::Range(0, 64));
    text("--panel-transport", d.transport,
         "With --gpus: how panels move, copy-engines (NCCL's all-gather on the copy engines, no SMs taken; where one "
         "operand moves) or broadcasts (NCCL's kernels on --broadcast-ctas blocks) (default copy-engines)");
    text("--cut", d.cut,
         "With --gpus: how the work is cut, stripe (default: the moving operand gathered whole behind a lead stripe "
         "of C cut in K, the rest whole in K), slices (of C, each product whole in K) or k-panels; stripe and slices "
         "where one operand moves on the copy engines with K the slow dimension of its storage, else k-panels");
    c.add_option_function<std::int64_t>(
         "--panel-width", [&d](std::int64_t v) { d.panel_width = v; },
         "With --gpus: the widest panel of K the device runs broadcast (default: the model's choice)")
        ->check(CLI::PositiveNumber);
    for (CLI::Option* one : {gpus, devices}) {
      one->excludes(device);
      one->excludes(out_of_core);
      for (CLI::Option* other : {profile, explain, interleave}) one->excludes(other);
    }
  }
}

namespace {

// Today's JSON records no flush for a CPU run; a flush asked of one cannot be honoured.
void check_flush_applies(const SelectionArgs& args, Backend backend) {
  if (args.l2_flush && backend != Backend::Cuda)
    throw UsageError{fmt::format("--l2-flush {} applies to the GPU's L2; the {} backend times warm caches and "
                                 "flushes nothing (drop --l2-flush, or use --backend cuda)",
                                 *args.l2_flush, to_string(backend))};
}

}  // namespace

void apply_device_memory_limit(const std::optional<std::string>& text, Backend backend, bench::Options& o) {
  if (!text) return;
  o.device_memory_limit = parse_byte_size("--device-memory-limit", *text);
  if (backend != Backend::Cuda)
    throw UsageError{fmt::format("--device-memory-limit {} caps the GPU's memory; the {} backend has none (drop it, "
                                 "or use --backend cuda)",
                                 *text, to_string(backend))};
}

std::optional<int> check_memory_or_refuse(const bench::Options& o, Executor& executor, bool dry_run,
                                          const std::string& prefix, bench::MemoryCheck& out) {
  const Status fits = bench::check_memory(o, executor, out);
  if (dry_run)
    for (const bench::MemoryPlan& plan : out.plans) {
      std::string line = fmt::format("  {}x{}x{} needs {} of host memory", plan.shape.m, plan.shape.n, plan.shape.k,
                                     bench::format_bytes(plan.host_bytes()));
      if (out.available.host) line += fmt::format(" ({} available)", bench::format_bytes(*out.available.host));
      if (executor.backend() == Backend::Cuda) {
        line += fmt::format(", {} of device memory", bench::format_bytes(plan.device_bytes()));
        if (const auto device = out.available.device())
          line += fmt::format(" ({} available)", bench::format_bytes(*device));
      }
      switch (plan.verification) {
        case bench::VerifyMode::None: line += "; not verified"; break;
        case bench::VerifyMode::Full: line += "; verified in full"; break;
        case bench::VerifyMode::Sampled: line += "; verified at a sample of C: " + plan.why_sampled; break;
      }
      fmt::print("{}\n", line);
    }
  if (fits) return std::nullopt;
  fmt::print(stderr, "{}{}\n", prefix, fits.code() == StatusCode::AllocFailed ? fits.message() : fits.describe());
  return fits.code() == StatusCode::InvalidValue ? kExitUsage : kExitFailure;
}

std::string shapes_text(const std::vector<bench::Shape>& shapes) {
  std::string text;
  for (const bench::Shape& s : shapes) text += fmt::format("{}{}x{}x{}", text.empty() ? "" : ", ", s.m, s.n, s.k);
  return text;
}

int run_bench(const SelectionArgs& args, bool verify_only) {
  const DistributedArgs& distributed = args.distributed;
  // The flags that belong to another job, before anything else is looked at.
  if (!distributed.requested()) {
    if (distributed.decompositions) throw UsageError{"--decompositions requires --gpus or --devices"};
    if (distributed.broadcast_ctas) throw UsageError{"--broadcast-ctas requires --gpus or --devices"};
    if (distributed.transport) throw UsageError{"--panel-transport requires --gpus or --devices"};
    if (distributed.cut) throw UsageError{"--cut requires --gpus or --devices"};
    if (distributed.panel_width) throw UsageError{"--panel-width requires --gpus or --devices"};
    if (distributed.placement) throw UsageError{"--placement requires --gpus or --devices"};
  }
  if (args.xt_block_dims && !args.out_of_core && !distributed.requested())
    throw UsageError{"--xt-block-dims requires --out-of-core or --gpus/--devices"};
  if (args.back_to_back > 1 && (args.out_of_core || distributed.requested()))
    throw UsageError{fmt::format("--back-to-back times in-core calls in a row; {} times each call alone",
                                 args.out_of_core ? "--out-of-core" : distributed.flag())};
  if (distributed.requested() && args.backend != "auto" && args.backend != "cuda")
    throw UsageError{fmt::format("{} runs on GPUs: it needs --backend cuda (or auto), not {}", distributed.flag(),
                                 args.backend)};
  const Backend backend = distributed.requested() ? Backend::Cuda : pick_backend(args.backend, args.device);
  check_device_applies(args.device, backend);
  bench::Options o;
  if (args.variants) o.variants = parse_names(*args.variants);
  o.config = args.config;
  if (args.sizes) o.shapes = parse_sizes(*args.sizes);
  else if (args.mnk) o.shapes = parse_mnk(*args.mnk);
  else if (args.shapes) {
    const bench::ShapeSet* set = bench::find_shape_set(*args.shapes);
    if (!set) {
      std::string names;
      for (const bench::ShapeSet& s : bench::shape_sets()) names += fmt::format("{}{}", names.empty() ? "" : ", ", s.name);
      throw UsageError{fmt::format("--shapes '{}' is not a named set ({})", *args.shapes, names)};
    }
    o.shapes = set->shapes;
  }
  else if (verify_only) o.shapes = kVerifyShapes;
  else {
    const std::int64_t n = backend == Backend::Cuda ? kDefaultCudaSize : kDefaultCpuSize;
    o.shapes = {{n, n, n}};
  }
  parse_trans(args.trans, o.op_a, o.op_b);
  o.layout = *parse_layout(args.layout);
  apply_dtypes(args.dtype, args.out_dtype, o);
  if (args.alpha) o.alpha = parse_scalar("--alpha", *args.alpha);
  if (args.beta) o.beta = parse_scalar("--beta", *args.beta);
  o.ld_padding = args.pad;
  const bool seed_given = args.seed.has_value();
  o.seed = seed_given ? parse_seed(*args.seed) : fresh_seed();
  o.profile = args.profile;
  o.verify = !args.no_verify && !args.profile;
  o.time = !verify_only && !args.profile;
  if (args.reps > 0) {
    o.min_reps = args.reps;
    o.max_reps = std::max(o.max_reps, args.reps);
  }
  if (args.warmup >= 0) o.warmup = args.warmup;
  if (args.back_to_back > 0) o.back_to_back = args.back_to_back;
  if (args.min_time >= 0) o.min_seconds = args.min_time;
  if (args.max_time > 0) o.max_seconds = args.max_time;
  if (args.max_spread >= 0) o.max_spread = args.max_spread / 100;
  if (args.interleave != "auto") o.interleave = args.interleave == "on";
  if (args.l2_flush) o.flush = *parse_cache_flush(*args.l2_flush);  // CLI11 checked the name
  check_flush_applies(args, backend);
  std::optional<double> device_memory_share;  // --device-memory-limit 25% (out-of-core)
  if (args.device_memory_limit && args.device_memory_limit->ends_with('%')) {
    if (!args.out_of_core)
      throw UsageError{fmt::format("--device-memory-limit {}: a share of the problem applies to --out-of-core; give "
                                   "bytes (8G, 512M)",
                                   *args.device_memory_limit)};
    const std::string number = args.device_memory_limit->substr(0, args.device_memory_limit->size() - 1);
    const double percent = parse_scalar("--device-memory-limit", number);
    if (!(percent > 0 && percent <= 100))
      throw UsageError{fmt::format("--device-memory-limit {}: the share must be above 0% and at most 100%",
                                   *args.device_memory_limit)};
    device_memory_share = percent / 100;
  } else {
    apply_device_memory_limit(args.device_memory_limit, backend, o);
  }
  if (args.out_of_core || distributed.requested()) {
    const std::string job = args.out_of_core ? "--out-of-core" : distributed.flag();
    if (Status s = bench::check_host_job_types(o, job); !s) throw UsageError{s.message()};
  }
  if (args.out_of_core) return run_out_of_core_bench(args, o, backend, device_memory_share, seed_given);
  if (distributed.requested())
    return run_distributed_bench(args, o, seed_given, args.sizes || args.mnk || args.shapes);
  if (args.samples && args.format != "json")
    throw UsageError{fmt::format("--samples: the samples are written to the JSON report; add --format json "
                                 "(not {})", args.format)};
  if (args.explain && args.format == "csv")
    throw UsageError{"--explain prints its models in the table or the JSON; CSV has no place for them "
                     "(use --format table or json)"};

  std::unique_ptr<Executor> executor;
  if (backend == Backend::Cpu) {
    executor = make_cpu_executor();
  } else if (Status s = make_cuda_executor(executor, args.device.value_or(0)); !s) {
    fmt::print(stderr, "gemmlab: --backend cuda: {}\n", device_error_text(s, args.device));
    return s.code() == StatusCode::InvalidValue ? kExitUsage : kExitFailure;
  }
  // A misspelt name or a variant of another dtype is a usage error, reported alone:
  // before the seed line is printed and before --output is created.
  check_selection(o, backend);
  if (args.dry_run) {
    std::vector<Variant> selected;
    (void)bench::select_variants(o, backend, selected);  // check_selection passed
    std::string names;
    for (const Variant& v : selected) names += (names.empty() ? "" : ", ") + v.name;
    fmt::print("gemmlab {} would run on {}: {} {}{} {}: {} on {}{}\n", verify_only ? "verify" : "bench",
               to_string(backend), types_text(o), to_string(o.op_a), to_string(o.op_b), to_string(o.layout),
               names, shapes_text(o.shapes),
               args.output.empty() ? "" : fmt::format(", report to {}", args.output));
    bench::MemoryCheck memory;  // and what it would need, or why it would be refused
    return check_memory_or_refuse(o, *executor, true, "gemmlab: ", memory).value_or(kExitOk);
  }

  // The output's temporary is made before running: a bad path fails before minutes of benchmarking.
  OutputFile out;
  if (!out.open_or_report(args.output)) return kExitFailure;
  o.progress = progress_printer(args.progress);
  // Whatever the format: the seed and the command, so a run can be replayed from its log.
  print_seed_line(o.seed, args.command_line, seed_given);
  // Before anything is allocated: a run that cannot fit is refused in a moment rather than
  // after minutes of random fill, and --output is left as it was.
  bench::MemoryCheck memory;
  if (const auto refused = check_memory_or_refuse(o, *executor, false, "gemmlab: ", memory)) return *refused;

  const std::string started = bench::utc_now();
  std::vector<bench::Record> records;
  std::vector<bench::Explanation> explanations;
  bench::ExplainContext explain_context;
  const Status ran = args.explain ? bench::explain(o, *executor, explain_context, explanations)
                                  : bench::run(o, *executor, records);
  for (const bench::Explanation& e : explanations) records.push_back(e.record);
  if (Status s = ran; !s) {
    fmt::print(stderr, "gemmlab: {}\n", s.describe());
    return s.code() == StatusCode::InvalidValue ? kExitUsage : kExitFailure;
  }

  bench::RunContext context = report_context(args, verify_only ? "verify" : "bench", backend, *executor, o, started);
  context.memory = std::move(memory);
  if (args.format == "json") {
    nlohmann::json doc = bench::to_json(records, context);
    if (args.explain) bench::attach_explanations(doc, explanations, explain_context);
    fmt::print(out.stream(), "{}\n", doc.dump(2));
  } else if (args.format == "csv") {
    fmt::print(out.stream(), "{}", bench::format_csv(records));
  } else {
    fmt::print(out.stream(), "{}", bench::format_table(records, context));
    if (args.explain) fmt::print(out.stream(), "{}", bench::format_explain_table(explanations, explain_context));
  }
  if (!out.commit_or_report()) return kExitFailure;

  int failures = 0, noisy = 0;
  for (const bench::Record& r : records) {
    if (r.failed()) ++failures;
    if (!r.warnings.empty()) ++noisy;
  }
  if (noisy > 0 && args.format != "table")  // the table lists them itself
    fmt::print(stderr, "gemmlab: {} of {} results flagged (noisy, capped or a suspect anchor): see their "
               "\"warnings\"\n", noisy, records.size());
  if (failures > 0) {
    fmt::print(stderr, "gemmlab: {} of {} runs failed (seed {})\n", failures, records.size(), o.seed);
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace gemmlab::cli
