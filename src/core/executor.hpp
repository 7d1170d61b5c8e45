// Where a backend keeps its data and how its time is measured. The harness drives one;
// cpu/ and cuda/ each provide one, so timing code never branches on the backend.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/reference.hpp"
#include "gemmlab/context.hpp"
#include "gemmlab/status.hpp"
#include "gemmlab/variant.hpp"

namespace gemmlab {

// Memory owned by an executor (device memory for CUDA, aligned host memory for CPU).
class Buffer {
 public:
  virtual ~Buffer() = default;
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  virtual void* data() const = 0;
  virtual std::size_t bytes() const = 0;
};

// What a cache flush before a timed repetition leaves in the GPU's L2 (the CPU executor
// flushes nothing). Clean is the default: a write of twice the L2 evicts the operands, but
// leaves up to an L2 of dirty lines (50 MB on an H100) whose write-back the next kernel
// pays (measured on an H100: 9-10 us of a bf16 4096^3 GEMM, ours and cuBLAS's alike);
// reading the same buffer back writes them out before the timer starts.
enum class CacheFlush {
  Clean,  // write twice the L2, then read it: operands evicted, no dirty lines left
  Write,  // write twice the L2 (the flush of nvbench and Triton's do_bench)
  None,   // nothing: the L2 as the previous repetition left it (warm operands)
};

constexpr std::string_view to_string(CacheFlush f) {
  switch (f) {
    case CacheFlush::Clean: return "clean";
    case CacheFlush::Write: return "write";
    case CacheFlush::None: return "none";
  }
  return "?";
}

inline std::optional<CacheFlush> parse_cache_flush(std::string_view text) {
  for (CacheFlush f : {CacheFlush::Clean, CacheFlush::Write, CacheFlush::None})
    if (text == to_string(f)) return f;
  return std::nullopt;
}

class Executor {
 public:
  virtual ~Executor() = default;
  virtual Backend backend() const = 0;
  // The library context every run goes through: the executor's device and stream, and the
  // workspaces and handles the rungs keep between repetitions.
  virtual Context& context() = 0;
  // What results measured here must record: model, clocks, driver ... as key/value text.
  virtual std::vector<std::pair<std::string, std::string>> describe() const = 0;

  virtual Status allocate(std::size_t bytes, std::unique_ptr<Buffer>& out) = 0;
  // Host memory for operands a GPU reads from the host (the out-of-core job): page-locked on
  // a GPU, so copies run at the link's rate and overlap computation; the CPU's own memory on a
  // CPU. AllocFailed names the bytes when the system refuses.
  virtual Status allocate_host(std::size_t bytes, std::unique_ptr<Buffer>& out) = 0;
  virtual Status upload(void* dst, const void* src, std::size_t bytes) = 0;
  virtual Status download(void* dst, const void* src, std::size_t bytes) = 0;
  // Copies within the executor's own memory (device to device on a GPU).
  virtual Status copy_within(void* dst, const void* src, std::size_t bytes) = 0;
  virtual Status synchronize() = 0;

  // Called before every timed repetition, outside the timed region: evicts the inputs
  // from the caches a repetition would otherwise find them in (the L2 on a GPU), as `how` says.
  virtual Status flush_caches(CacheFlush how) = 0;
  // The float64 reference of a problem whose data is in host memory (see reference.hpp).
  // The CPU executor computes it on the host; the CUDA executor uses the device for
  // large problems and checks that result against host dot products.
  virtual Status reference(const GemmProblem& host_problem, ReferenceResult& out) = 0;
  // Runs `work` once between two timestamps and stores the elapsed milliseconds.
  virtual Status time_once(const std::function<Status()>& work, double& milliseconds) = 0;
  // The same for work that waits for its own completion (the out-of-core GEMM, cublasXt: they
  // synchronise their streams before returning), which time_once's gate would hold back: the
  // host's clock from an idle device to the work's return.
  virtual Status time_blocking(const std::function<Status()>& work, double& milliseconds) = 0;

  // A named range for profilers (NVTX on the GPU, so nsys and ncu show gemmlab's phases);
  // nothing on the CPU. Ranges nest; every begin_range has its end_range.
  virtual void begin_range(const std::string& /*name*/) {}
  virtual void end_range() {}
};

// begin_range / end_range for one scope.
class ProfilerRange {
 public:
  ProfilerRange(Executor& executor, const std::string& name) : executor_(executor) { executor_.begin_range(name); }
  ~ProfilerRange() { executor_.end_range(); }
  ProfilerRange(const ProfilerRange&) = delete;
  ProfilerRange& operator=(const ProfilerRange&) = delete;

 private:
  Executor& executor_;
};

std::unique_ptr<Executor> make_cpu_executor();
// On CUDA device `device` (an ordinal among the visible devices; -1: the thread's current
// one). NotSupported in a build without CUDA or on a machine without a device; InvalidValue,
// naming how many devices there are, for an ordinal out of range.
Status make_cuda_executor(std::unique_ptr<Executor>& out, int device = 0);

}  // namespace gemmlab
