// The CUDA executor: device memory, one stream, CUDA events around each repetition, and
// an L2 flush between repetitions so every run reads its operands from DRAM.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>  // header-only NVTX3: ranges cost nothing without a profiler attached

#include <chrono>

#include "core/executor.hpp"
#include "core/host_info.hpp"
#include "cuda/runtime/buffer.hpp"
#include "cuda/runtime/device.hpp"
#include "cuda/runtime/l2_flush.hpp"
#include "cuda/runtime/launch_gate.hpp"
#include "cuda/runtime/reference_gpu.hpp"

namespace gemmlab {
namespace {

// Writing twice the L2's size evicts everything a previous repetition left there.
constexpr std::size_t kFlushFactor = 2;
// The flush buffer holds zeros, so the read-back's XOR is zero and never this.
constexpr unsigned kFlushMarker = 0x9e3779b9u;

class DeviceBufferImpl final : public Buffer {
 public:
  explicit DeviceBufferImpl(cuda::DeviceMemory memory) : memory_(std::move(memory)) {}
  void* data() const override { return memory_.data(); }
  std::size_t bytes() const override { return memory_.bytes(); }

 private:
  cuda::DeviceMemory memory_;
};

class PinnedBufferImpl final : public Buffer {
 public:
  explicit PinnedBufferImpl(cuda::PinnedMemory memory) : memory_(std::move(memory)) {}
  void* data() const override { return memory_.data(); }
  std::size_t bytes() const override { return memory_.bytes(); }

 private:
  cuda::PinnedMemory memory_;
};

class CudaExecutor final : public Executor {
 public:
  // Chooses the device before anything touches one: every stream, event and buffer below,
  // and every kernel the harness launches on this thread, belong to it.
  Status init(int device) {
    int ordinal = 0;
    GEMMLAB_TRY(cuda::select_device(device, ordinal));
    GEMMLAB_TRY(cuda::query_device(ordinal, facts_));
    GEMMLAB_TRY(cuda::make_stream(stream_));
    ContextOptions options;
    options.backend = Backend::Cuda;
    options.device = ordinal;
    options.stream = stream_.get();
    GEMMLAB_TRY(Context::create(options, context_));
    GEMMLAB_TRY(cuda::make_event(start_));
    GEMMLAB_TRY(cuda::make_event(stop_));
    GEMMLAB_TRY(gate_.init());
    const std::size_t flush_words = (kFlushFactor * static_cast<std::size_t>(facts_.l2_bytes) + 15) / 16;
    GEMMLAB_TRY(cuda::DeviceMemory::allocate(16 * flush_words, flush_));  // whole 16-byte words: read_through_l2
    GEMMLAB_TRY(cuda::DeviceMemory::allocate(sizeof(unsigned), flush_sink_));
    return Status::ok();
  }

  Backend backend() const override { return Backend::Cuda; }
  Context& context() override { return *context_; }

  std::vector<std::pair<std::string, std::string>> describe() const override {
    auto out = cuda::describe(facts_);
    const HostInfo cpu = host_info();
    out.emplace_back("host_cpu", cpu.model);
    return out;
  }

  Status allocate(std::size_t bytes, std::unique_ptr<Buffer>& out) override {
    cuda::DeviceMemory memory;
    GEMMLAB_TRY(cuda::DeviceMemory::allocate(bytes, memory));
    out = std::make_unique<DeviceBufferImpl>(std::move(memory));
    return Status::ok();
  }
  Status allocate_host(std::size_t bytes, std::unique_ptr<Buffer>& out) override {
    cuda::PinnedMemory memory;
    if (const Status s = cuda::PinnedMemory::allocate(bytes, memory); !s)
      return {StatusCode::AllocFailed,
              "page-locked host memory of " + std::to_string(bytes) + " bytes refused (" + s.message() + ")"};
    out = std::make_unique<PinnedBufferImpl>(std::move(memory));
    return Status::ok();
  }
  Status upload(void* dst, const void* src, std::size_t bytes) override {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_.get()));
    CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
    return Status::ok();
  }
  Status download(void* dst, const void* src, std::size_t bytes) override {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_.get()));
    CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
    return Status::ok();
  }
  Status copy_within(void* dst, const void* src, std::size_t bytes) override {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_.get()));
    return Status::ok();
  }
  Status synchronize() override {
    CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
    return Status::ok();
  }
  Status flush_caches(CacheFlush how) override {
    if (how == CacheFlush::None) return Status::ok();
    CUDA_CHECK(cudaMemsetAsync(flush_.data(), 0, flush_.bytes(), stream_.get()));
    if (how == CacheFlush::Clean)
      return cuda::read_through_l2(flush_.data(), flush_.bytes(), facts_.sm_count, kFlushMarker,
                                   static_cast<unsigned*>(flush_sink_.data()), stream_.get());
    return Status::ok();
  }
  Status reference(const GemmProblem& host_problem, ReferenceResult& out) override {
    return cuda::reference_on_device(host_problem, stream_.get(), out);
  }
  // The gate holds the stream until the repetition is enqueued (launch_gate.hpp): the events
  // time the GPU's work, not how long the host took to launch it.
  Status time_once(const std::function<Status()>& work, double& milliseconds) override {
    GEMMLAB_TRY(gate_.hold(stream_.get()));
    Status s = cuda::cuda_status(cudaEventRecord(start_.get(), stream_.get()), "cudaEventRecord(start)", __FILE__,
                                 __LINE__);
    if (s) s = work();
    if (s) s = cuda::cuda_status(cudaEventRecord(stop_.get(), stream_.get()), "cudaEventRecord(stop)", __FILE__,
                                 __LINE__);
    gate_.release();  // also when the work failed: nothing may wait for a gate left closed
    GEMMLAB_TRY(s);
    CUDA_CHECK(cudaEventSynchronize(stop_.get()));
    GEMMLAB_TRY(gate_.check());
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    milliseconds = ms;
    return Status::ok();
  }
  Status time_blocking(const std::function<Status()>& work, double& milliseconds) override {
    CUDA_CHECK(cudaDeviceSynchronize());
    const auto start = std::chrono::steady_clock::now();
    GEMMLAB_TRY(work());
    CUDA_CHECK(cudaDeviceSynchronize());  // nothing of the work may be left running
    milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return Status::ok();
  }
  void begin_range(const std::string& name) override { nvtxRangePushA(name.c_str()); }
  void end_range() override { nvtxRangePop(); }

 private:
  cuda::DeviceFacts facts_;
  cuda::StreamOwner stream_;
  cuda::EventOwner start_, stop_;
  cuda::LaunchGate gate_;
  cuda::DeviceMemory flush_, flush_sink_;
  // Last: destroyed first, while the stream its handles use still exists.
  std::unique_ptr<Context> context_;
};

}  // namespace

Status make_cuda_executor(std::unique_ptr<Executor>& out, int device) {
  if (!cuda::device_present())
    return {StatusCode::NotSupported, "no CUDA device is present on this machine"};
  auto executor = std::make_unique<CudaExecutor>();
  GEMMLAB_TRY(executor->init(device));
  out = std::move(executor);
  return Status::ok();
}

}  // namespace gemmlab
