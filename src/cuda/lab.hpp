// The memory lab and the measured ceilings, as the CLI and the model see them: plain
// structs and functions, no CUDA headers. Defined in src/cuda/mem/ (or
// src/cuda/lab_no_cuda.cpp in a build without CUDA, where every call says so).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cuda/runtime/device.hpp"
#include "gemmlab/status.hpp"
#include "gemmlab/variant.hpp"

namespace gemmlab::cuda {

// Median of CUDA-event timings after a warm-up.
struct Timing {
  int reps = 0;
  double median_ms = 0, min_ms = 0, max_ms = 0;
};

struct TimingOptions {
  int warmup = 2;
  int reps = 10;
};

// ---- measured ceilings --------------------------------------------------------

struct CeilingOptions {
  int device = -1;     // CUDA ordinal (select_device); -1: the current device, as an executor chose it
  bool copy = true;    // cudaMemcpyAsync device to device and the copy kernels
  bool read = true;    // the read-only (reduction) kernel
  bool fma = true;     // FP32 FMA rate from registers
  bool sgemm = true;   // cuBLAS SGEMM through the cublas_sgemm variant
  int sgemm_n = 8192;  // square size of the SGEMM (smaller when memory is short)
  // Streaming buffers hold this many L2 sizes (2 GiB on an H100): a kernel's ramp-up and
  // last wave cost microseconds, so a repetition must last a millisecond or so for them to
  // fall under 1%. Reads of 400 MiB ran at 88% of theoretical bandwidth, of 2 GiB at 93%.
  double buffer_l2_multiple = 40;
  TimingOptions timing{2, 20};
};

// One measurement: what it is, its value, its timing and its data check.
struct CeilingRow {
  std::string name;    // "memcpy_d2d", "copy_float4_x4", "read_u4", "fma", "sgemm"
  std::string what;    // how it was measured, for people
  double value = 0;    // in `unit`
  std::string unit;    // "GB/s" (bytes read + written, or read) or "GFLOP/s"
  double work = 0;     // bytes or flops per repetition
  Timing time;
  bool checked = false;
  bool passed = true;
  std::string check;   // "ok", what failed, or why nothing was checked
};

struct Ceilings {
  std::size_t buffer_bytes = 0;  // bytes of each streaming buffer
  double memcpy_gbs = 0;         // cudaMemcpyAsync D2D, read + written: the copy ceiling
  double copy_kernel_gbs = 0;    // the best copy kernel, read + written
  std::string copy_kernel;       // its name
  double read_gbs = 0;           // the best read-only kernel
  std::string read_kernel;
  double fma_gflops = 0;         // FP32, 2 flops per FMA
  double sgemm_gflops = 0;       // cuBLAS SGEMM at sgemm_n^3
  int sgemm_n = 0;
  std::vector<CeilingRow> rows;

  bool passed() const {
    for (const CeilingRow& r : rows)
      if (!r.passed) return false;
    return true;
  }
};

// Selects options.device (select_device: an ordinal out of range is InvalidValue naming the
// device count), reads its facts and measures what `options` asks for. Buffers are allocated
// before any timing; every copy and read is checked for intact data.
Status measure_ceilings(const CeilingOptions& options, DeviceFacts& facts, Ceilings& out);

// ---- kernel attributes ----------------------------------------------------------

// cudaFuncGetAttributes of a rung's kernel, the occupancy API's answer for its launch,
// and the device's per-block shared-memory reservation that the occupancy model needs.
struct KernelAttributes {
  int registers = 0;               // per thread
  long long static_smem_bytes = 0;
  long long local_bytes = 0;       // per thread (spills and local arrays)
  long long const_bytes = 0;
  int max_threads_per_block = 0;   // the most this kernel can launch with
  int ptx_version = 0, binary_version = 0;
  int api_blocks_per_sm = 0;       // cudaOccupancyMaxActiveBlocksPerMultiprocessor
  int reserved_smem_per_block = 0; // cudaDevAttrReservedSharedMemoryPerBlock
};

Status kernel_attributes(const KernelInfo& kernel, KernelAttributes& out);

// ---- every visible device ------------------------------------------------------------

// The facts of every visible device (CUDA_VISIBLE_DEVICES applies), in ordinal order;
// NotSupported where there is none. Measures nothing and makes no device current.
Status query_all_devices(std::vector<DeviceFacts>& out);

// ---- the memory lab -------------------------------------------------------------

struct MemExperimentInfo {
  std::string name;   // "coalescing"
  std::string title;  // one line
  std::string shows;  // what the sweep demonstrates (and the seed's figure)
};

// The registered experiments in order (empty in a build without CUDA).
std::vector<MemExperimentInfo> mem_experiments();

// One row of a sweep.
struct MemRow {
  std::string experiment;  // "coalescing"
  std::string variant;     // "offset", "stride", "aos_direct", ...
  std::string param_name;  // "offset", "stride", "width", "bytes", "streams" or ""
  long long param = 0;
  double bytes = 0;        // bytes counted per repetition (see note)
  Timing time;
  double gbs = 0;                // bytes / median time
  double ratio_to_copy = 0;      // gbs / the cudaMemcpy D2D ceiling of the same run
  double pct_of_theoretical = 0; // gbs / (2 x memory clock x bus width), in percent
  bool checked = false;
  bool passed = false;
  long long mismatches = 0;      // words that did not arrive intact
  std::string target;            // a goal to report ("copy >= 1.0x cudaMemcpy"), or ""
  bool target_met = false;
  std::string note;
};

struct MemOptions {
  int device = -1;                       // CUDA ordinal, as CeilingOptions::device
  std::vector<std::string> experiments;  // empty: all, in registry order
  TimingOptions timing{2, 10};
  // Streaming buffers hold this many L2 sizes (2 GiB on an H100): a kernel's ramp-up and
  // last wave cost microseconds, so a repetition must last a millisecond or so for them to
  // fall under 1%. Reads of 400 MiB ran at 88% of theoretical bandwidth, of 2 GiB at 93%.
  double buffer_l2_multiple = 40;
  std::function<void(const std::string&)> progress;  // one line per experiment
};

struct MemReport {
  DeviceFacts facts;
  Ceilings ceilings;  // the copy ceiling the ratios use, measured first in the same run
  std::vector<MemRow> rows;

  bool passed() const {
    for (const MemRow& r : rows)
      if (r.checked && !r.passed) return false;
    return ceilings.passed();
  }
};

// Runs the selected experiments. An unknown name is InvalidValue (naming it); a data
// check that fails is recorded in its row (passed = false), not returned as an error.
Status run_mem(const MemOptions& options, MemReport& out);

}  // namespace gemmlab::cuda
