// The out-of-core job (gemmlab bench --out-of-core): problems whose operands live in host
// memory, computed by gemmlab's out-of-core schedule (gemmlab/out_of_core.hpp) with each
// in-core rung asked for, beside cuBLAS's own out-of-core layer, cublasXt, at its default and
// at every blockDim of a sweep, and beside the in-core rung on device operands where the
// problem fits the device. Operands are page-locked host memory, filled once per shape;
// every result is checked at a sample of C's elements against float64 dot products (a full
// reference of such problems would not fit or would take hours), C's poison everywhere.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/harness.hpp"
#include "core/executor.hpp"

namespace gemmlab::bench {

struct OutOfCoreJob {
  // The rungs that compute the block products; empty: default_in_core_rungs(dtype).
  std::vector<std::string> in_core;
  // cublasXt blockDims to time (0: a fresh handle's default); float32 only (it has no other).
  std::vector<int> xt_block_dims = {0, 2048, 4096, 8192, 16384};
  // The device memory limit as a share of the problem's bytes (A, B and C), per shape
  // (--device-memory-limit 25%); absent: Options::device_memory_limit, or what is free.
  std::optional<double> device_memory_share;
  // Time the in-core rung on device operands too, where the problem fits the device.
  bool time_in_core = true;
};

// float32: pipelined (SIMT) and wgmma_3xtf32 (float32-accurate on the tensor cores); tf32,
// bf16, f16: the rung auto chooses.
std::vector<std::string> default_in_core_rungs(DType dtype);

// The host link as the job measured it before its first shape (bytes per second).
struct HostLink {
  std::uint64_t bytes = 0;  // of each timed copy
  double h2d = 0, d2h = 0;            // one direction alone
  double h2d_both = 0, d2h_both = 0;  // each while the other runs
  double h2d_strided = 0;             // host to device in rows of 16 KiB (a block of a wider matrix)
};

// Runs the job on a CUDA executor: one record per rung (ooc_<rung>), per cublasXt blockDim
// and per in-core rung and shape, each with its OutOfCoreFigures; ratio_to_anchor against the
// fastest cublasXt of the shape. InvalidValue for a bad selection or padding (not supported
// here); AllocFailed, before anything is filled, where the host cannot hold the operands.
Status run_out_of_core(const Options& options, const OutOfCoreJob& job, Executor& executor,
                       std::vector<Record>& records, HostLink& link);

// The host bytes the job holds for a shape (A, B and C page-locked, in their storage types).
std::uint64_t out_of_core_host_bytes(const Options& options, const Shape& shape);

}  // namespace gemmlab::bench
