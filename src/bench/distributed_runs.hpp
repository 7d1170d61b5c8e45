// The runs of the distributed job (bench/distributed.hpp), one kind each, and the records they
// fill: the single-GPU anchor, the distributed runs on device operands (one per grid), the run
// on host operands and cublasXt at each blockDim; and the skipped records of a shape that
// cannot run. run_distributed (distributed.cpp) runs them shape by shape and sets the anchors;
// the report (distributed_report.cpp) writes what they filled.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/distributed.hpp"
#include "bench/host_operands.hpp"
#include "gemmlab/distributed.hpp"

namespace gemmlab::bench {

// How the records and the report write a grid of GPUs: "2x4" (rows x columns).
std::string grid_text(const ProcessGrid& g);

// One run of the job: its record for the report and what the distributed job adds.
struct Entry {
  Record record;
  DistributedFigures figures;
};

Entry new_entry(const Options& o, const Shape& shape, const std::vector<int>& devices, const std::string& name,
                const std::string& technique, const std::string& mode);

// t1: the rung on the first GPU alone, on device copies of the host operands, timed as the
// harness times in-core rungs (CUDA events, L2 flushed before every repetition). A fresh
// executor: the rung's workspace goes with it, not into the distributed runs' memory.
void run_single_gpu(const Options& o, const DistributedJob& job, const HostProblem& host, const SampledCheck& check,
                    Entry& e);

// gemm_distributed_host() on the page-locked host operands: each GPU a block of C, out of core.
void run_host(const Options& o, Executor& timer, const DistributedJob& job, DeviceGroup& group,
              const HostProblem& host, const SampledCheck& check, const OutOfCoreRates& rates, Entry& e);

// cublasXt over the same GPUs on the same host operands, at each blockDim of the job. Its
// handle lives in a context of its own, gone (with the memory it keeps) after the shape.
void run_cublasxt(const Options& o, Executor& timer, const DistributedJob& job, const HostProblem& host,
                  const SampledCheck& check, std::vector<Entry>& entries);

// Skipped records for every run a shape would have had, with the reason.
void skip_shape(const Options& o, const DistributedJob& job, const Shape& shape, const std::string& scaling,
                const Status& why, std::vector<Entry>& entries);

// The distributed runs of one host problem on device operands, one per grid.
void run_device_grids(const Options& o, Executor& timer, const DistributedJob& job, const HostProblem& host,
                      const SampledCheck& check, const std::string& scaling, const std::optional<PeerLink>& link,
                      DeviceGroup& group, std::vector<Entry>& entries);

}  // namespace gemmlab::bench
