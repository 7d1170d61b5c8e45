// Where a backend keeps its data and how its time is measured. The harness drives one;
// cpu/ and cuda/ each provide one, so timing code never branches on the backend.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/reference.hpp"
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

class Executor {
 public:
  virtual ~Executor() = default;
  virtual Backend backend() const = 0;
  virtual Stream stream() const = 0;
  // What results measured here must record: model, clocks, driver ... as key/value text.
  virtual std::vector<std::pair<std::string, std::string>> describe() const = 0;

  virtual Status allocate(std::size_t bytes, std::unique_ptr<Buffer>& out) = 0;
  virtual Status upload(void* dst, const void* src, std::size_t bytes) = 0;
  virtual Status download(void* dst, const void* src, std::size_t bytes) = 0;
  // Copies within the executor's own memory (device to device on a GPU).
  virtual Status copy_within(void* dst, const void* src, std::size_t bytes) = 0;
  virtual Status synchronize() = 0;

  // Called before every timed repetition, outside the timed region: evicts the inputs
  // from the caches a repetition would otherwise find them in (the L2 on a GPU).
  virtual Status flush_caches() = 0;
  // The float64 reference of a problem whose data is in host memory (see reference.hpp).
  // The CPU executor computes it on the host; the CUDA executor uses the device for
  // large problems and checks that result against host dot products.
  virtual Status reference(const GemmProblem& host_problem, ReferenceResult& out) = 0;
  // Runs `work` once between two timestamps and stores the elapsed milliseconds.
  virtual Status time_once(const std::function<Status()>& work, double& milliseconds) = 0;
};

std::unique_ptr<Executor> make_cpu_executor();
// NotSupported in a build without CUDA or on a machine without a device.
Status make_cuda_executor(std::unique_ptr<Executor>& out);

}  // namespace gemmlab
