// The CPU executor: page-aligned host memory and a steady clock.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

#include <fmt/format.h>

#include "core/executor.hpp"
#include "core/host_info.hpp"
#include "cpu/ladder/openblas.hpp"
#include "cpu/machine/cpu_features.hpp"

namespace gemmlab {
namespace {

// Page alignment: every row start the harness hands out is at least 64-byte aligned.
constexpr std::size_t kHostAlignment = 4096;

class HostBuffer final : public Buffer {
 public:
  HostBuffer(void* data, std::size_t bytes) : data_(data), bytes_(bytes) {}
  ~HostBuffer() override { std::free(data_); }
  void* data() const override { return data_; }
  std::size_t bytes() const override { return bytes_; }

 private:
  void* data_;
  std::size_t bytes_;
};

class CpuExecutor final : public Executor {
 public:
  explicit CpuExecutor(std::unique_ptr<Context> context) : context_(std::move(context)) {}
  Backend backend() const override { return Backend::Cpu; }
  Context& context() override { return *context_; }
  std::vector<std::pair<std::string, std::string>> describe() const override {
    const HostInfo cpu = host_info();
    // The OpenBLAS the run used; describing the run does not load it (a run of no OpenBLAS
    // rung leaves it unloaded, and its threads unstarted, in the caller's process).
    const cpu::OpenBlasInfo* loaded = cpu::openblas_info_if_loaded();
    const cpu::OpenBlasInfo blas = loaded ? *loaded : cpu::OpenBlasInfo{};
    return {{"cpu", cpu.model},
            {"logical_cores", std::to_string(cpu.logical_cores)},
            {"cpu_mhz_now", fmt::format("{:.0f}", cpu.current_mhz)},
            {"cpu_mhz_max", fmt::format("{:.0f}", cpu.max_mhz)},
            {"isa", std::string(to_string(cpu_features().best_isa()))},
            {"openblas_library", !loaded       ? std::string("not loaded: no OpenBLAS rung ran")
                                 : blas.loaded ? blas.library
                                               : blas.error},
            {"openblas_coretype", blas.coretype},
            {"openblas_corename", blas.corename},
            {"openblas_config", blas.config}};
  }

  Status allocate(std::size_t bytes, std::unique_ptr<Buffer>& out) override {
    const std::size_t rounded = (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
    void* p = std::aligned_alloc(kHostAlignment, rounded > 0 ? rounded : kHostAlignment);
    if (!p) return {StatusCode::AllocFailed, "host allocation of " + std::to_string(bytes) + " bytes"};
    out = std::make_unique<HostBuffer>(p, bytes);
    return Status::ok();
  }
  Status allocate_host(std::size_t bytes, std::unique_ptr<Buffer>& out) override { return allocate(bytes, out); }
  Status upload(void* dst, const void* src, std::size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return Status::ok();
  }
  Status download(void* dst, const void* src, std::size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return Status::ok();
  }
  Status copy_within(void* dst, const void* src, std::size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return Status::ok();
  }
  Status synchronize() override { return Status::ok(); }
  // CPU rungs and the OpenBLAS anchor are timed alike on warm caches, as BLAS
  // benchmarks are; at the sizes that matter the operands exceed L2 anyway.
  Status flush_caches(CacheFlush) override { return Status::ok(); }
  Status reference(const GemmProblem& host_problem, ReferenceResult& out) override {
    return reference_gemm(host_problem, out);
  }
  Status time_once(const std::function<Status()>& work, double& milliseconds) override {
    const auto start = std::chrono::steady_clock::now();
    Status status = work();
    const auto stop = std::chrono::steady_clock::now();
    milliseconds = std::chrono::duration<double, std::milli>(stop - start).count();
    return status;
  }
  Status time_blocking(const std::function<Status()>& work, double& milliseconds) override {
    return time_once(work, milliseconds);
  }

 private:
  std::unique_ptr<Context> context_;
};

}  // namespace

std::unique_ptr<Executor> make_cpu_executor() {
  std::unique_ptr<Context> context;
  // A CPU context with the default options cannot fail.
  if (!Context::create({}, context)) return nullptr;
  return std::make_unique<CpuExecutor>(std::move(context));
}

}  // namespace gemmlab
