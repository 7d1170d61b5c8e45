// The FMA peak measurement: the kernel table, the check of its closed form, and the timing
// on one thread or a team from the thread pool.
#include "cpu/machine/fma_peak.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "cpu/thread_pool.hpp"

namespace gemmlab::cpu {
namespace {

// start + steps is exact in float below 2^24 (its significand has 24 bits).
constexpr std::int64_t kExactBelow = std::int64_t{1} << 24;
// Steps per kernel call: 2^20 keeps start + steps exact (starts are < kFmaPeakMaxValues),
// and a call lasts about 2 ms (12 chains at 2 per cycle: 6 cycles a step at ~3 GHz), so a
// repetition of tens of ms is many calls and checking each call's result costs nothing.
constexpr std::int64_t kStepsPerCall = std::int64_t{1} << 20;
static_assert(kStepsPerCall + kFmaPeakMaxValues < kExactBelow, "the closed form must stay exact");
// The values the kernel multiplies and adds, read at run time so that it cannot fold them.
constexpr float kMultiplier = 1.0f;
constexpr float kAddend = 1.0f;
// Bounds on the options (a repetition of more than this is a mistake, not a measurement).
constexpr double kMaxSecondsPerRep = 10.0;
constexpr int kMaxReps = 1000;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 == 1 ? v[h] : (v[h - 1] + v[h]) / 2;
}

// One thread's part of a repetition: `calls` kernel calls, each checked. With calls == 0 it
// calls until `seconds` have passed and reports how many it made (the warm-up).
struct ThreadRun {
  std::int64_t calls = 0;
  Status status;
};

void run_calls(const FmaPeakKernel& kernel, std::int64_t calls, double seconds, ThreadRun& result) {
  alignas(64) float start[kFmaPeakMaxValues];  // (chains, lanes)
  alignas(64) float out[kFmaPeakMaxValues];
  const int values = kernel.values();
  for (int i = 0; i < values; ++i) start[i] = static_cast<float>(i);  // no two chains alike
  volatile float multiplier = kMultiplier, addend = kAddend;
  const Clock::time_point t0 = Clock::now();
  std::int64_t done = 0;
  while (calls > 0 ? done < calls : (done == 0 || seconds_since(t0) < seconds)) {
    kernel.fn(kStepsPerCall, multiplier, addend, start, out);
    ++done;
    Status s = check_fma_chains({start, static_cast<std::size_t>(values)}, {out, static_cast<std::size_t>(values)},
                                kStepsPerCall);
    if (!s) {
      result.status = Status{s.code(), fmt::format("FMA peak kernel {}: {}", kernel.name, s.message())};
      break;
    }
  }
  result.calls = done;
}

// Runs every thread's part on the pool; returns the wall time of the whole team.
Status run_team(ThreadPool& pool, const FmaPeakKernel& kernel, int threads, std::int64_t calls, double seconds,
                std::vector<ThreadRun>& runs, double& wall_seconds) {
  runs.assign(static_cast<std::size_t>(threads), ThreadRun{});
  auto part = [&](int tid) { run_calls(kernel, calls, seconds, runs[static_cast<std::size_t>(tid)]); };
  const Clock::time_point t0 = Clock::now();
  pool.run(threads, part);
  wall_seconds = seconds_since(t0);
  for (const ThreadRun& r : runs) GEMMLAB_TRY(r.status);
  return Status::ok();
}

}  // namespace

const FmaPeakKernel& fma_peak_kernel(Isa isa) {
  switch (isa) {
    case Isa::Avx512: return kAvx512FmaPeak;
    case Isa::Avx2: return kAvx2FmaPeak;
    case Isa::Portable: return kPortableFmaPeak;
  }
  return kPortableFmaPeak;
}

Status check_fma_chains(std::span<const float> start, std::span<const float> out, std::int64_t steps) {
  if (start.size() != out.size())
    return {StatusCode::InvalidValue, fmt::format("{} start values but {} results", start.size(), out.size())};
  for (std::size_t i = 0; i < start.size(); ++i) {
    const double expected = static_cast<double>(start[i]) + static_cast<double>(steps);
    if (steps < 0 || std::fabs(expected) >= static_cast<double>(kExactBelow))
      return {StatusCode::InvalidValue,
              fmt::format("start {} + {} steps is not exact in float (must stay below 2^24)", start[i], steps)};
    if (static_cast<double>(out[i]) != expected)
      return {StatusCode::InternalError,
              fmt::format("value {} is {} after {} steps, expected {} (start {} + steps): the kernel did not "
                          "compute what it was timed for",
                          i, out[i], steps, expected, start[i])};
  }
  return Status::ok();
}

Status measure_fma_peak(const FmaPeakKernel& kernel, const FmaPeakOptions& options, FmaPeak& out) {
  const int cores = usable_cores();
  if (options.threads < 1 || options.threads > cores)
    return {StatusCode::InvalidValue,
            fmt::format("FMA peak: threads = {} (must be 1..{}, the usable cores)", options.threads, cores)};
  if (!(options.seconds_per_rep > 0 && options.seconds_per_rep <= kMaxSecondsPerRep))
    return {StatusCode::InvalidValue, fmt::format("FMA peak: seconds_per_rep = {} (must be in (0, {}])",
                                                  options.seconds_per_rep, kMaxSecondsPerRep)};
  if (options.reps < 1 || options.reps > kMaxReps)
    return {StatusCode::InvalidValue, fmt::format("FMA peak: reps = {} (must be 1..{})", options.reps, kMaxReps)};
  if (kernel.isa > cpu_features().widest)
    return {StatusCode::NotSupported, fmt::format("FMA peak: this CPU lacks {} (widest: {})", to_string(kernel.isa),
                                                  to_string(cpu_features().widest))};

  // Warm-up (clocks up, pages touched, threads awake) and calibration: thread 0's count
  // of calls in seconds_per_rep becomes every thread's count in the timed repetitions.
  ThreadPool pool(options.threads);  // its threads start here, before any timing
  std::vector<ThreadRun> runs;
  double wall = 0;
  GEMMLAB_TRY(run_team(pool, kernel, options.threads, 0, options.seconds_per_rep, runs, wall));
  const std::int64_t calls = std::max<std::int64_t>(1, runs.front().calls);

  const double flops_per_rep =
      kernel.flops_per_step() * static_cast<double>(kStepsPerCall * calls) * options.threads;
  std::vector<double> rates, walls;
  for (int rep = 0; rep < options.reps; ++rep) {
    GEMMLAB_TRY(run_team(pool, kernel, options.threads, calls, 0, runs, wall));
    walls.push_back(wall);
    rates.push_back(flops_per_rep / wall * 1e-9);
  }
  out = FmaPeak{};
  out.isa = kernel.isa;
  out.kernel = kernel.name;
  out.threads = options.threads;
  out.chains = kernel.chains;
  out.lanes = kernel.lanes();
  out.gflops = median_of(rates);
  out.min_gflops = *std::min_element(rates.begin(), rates.end());
  out.max_gflops = *std::max_element(rates.begin(), rates.end());
  out.reps = options.reps;
  out.seconds_per_rep = median_of(walls);
  out.steps_per_thread = kStepsPerCall * calls;
  return Status::ok();
}

Status measure_fma_peak(const FmaPeakOptions& options, FmaPeak& out) {
  return measure_fma_peak(fma_peak_kernel(cpu_features().best_isa()), options, out);
}

}  // namespace gemmlab::cpu
