// The analytic side of explain: occupancy (seed 003 §4.4) and the roofline bound (seed 003
// §4.1's CGMA arithmetic, and the minimum-traffic roofline), as pure functions of numbers
// read from the device, the kernel and the rung's Traffic model. No CUDA here: the unit
// tests check them against the seeds' hand computations.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cuda/runtime/device.hpp"
#include "gemmlab/variant.hpp"

namespace gemmlab::bench {

// What one SM offers resident blocks.
struct SmLimits {
  int max_threads = 0;           // resident threads per SM
  int max_blocks = 0;            // resident blocks per SM
  int registers = 0;             // 32-bit registers per SM
  long long smem_bytes = 0;      // shared memory per SM for blocks
  int warp_size = 32;
  // How the hardware hands resources out. 1, 1, 1, 0 reproduce the seed's arithmetic
  // (registers / (registers per thread x threads)); sm_80 and later use 256, 4, 128, 1024.
  int reg_unit = 1;              // a warp's registers come in multiples of this
  int reg_partitions = 1;        // the register file is split among this many schedulers
  int smem_unit = 1;             // a block's shared memory comes in multiples of this
  int smem_reserved_per_block = 0;  // bytes the driver adds to every block
};

// What one block of a kernel asks for.
struct BlockUsage {
  int threads = 0;
  int registers_per_thread = 0;
  long long smem_bytes = 0;  // static + dynamic
};

enum class Limiter { Threads, Registers, SharedMemory, Blocks };
std::string_view to_string(Limiter limiter);

struct Occupancy {
  int blocks = 0;  // resident blocks per SM: the least of the four below
  int by_threads = 0, by_registers = 0, by_smem = 0, by_blocks = 0;
  Limiter limiter = Limiter::Threads;  // the first that binds, in enum order
  std::vector<Limiter> binding;        // every limit equal to `blocks`
  int warps = 0;                       // resident warps per SM
  double fraction = 0;                 // warps / the SM's maximum
};

// Blocks per SM and what limits them. Limits that a block can never meet (more threads
// than the SM holds, more shared memory than it has) give 0 blocks.
Occupancy occupancy(const SmLimits& sm, const BlockUsage& block);

// Seed 003 §4.4's GeForce 8800 GTX: 768 threads, 8 blocks, 8,192 registers and 16 KiB of
// shared memory per SM, no allocation granularity.
SmLimits g80_limits();

// This device's limits (allocation rules by compute capability, as the occupancy API
// applies them) with the driver's per-block shared-memory reservation.
SmLimits sm_limits(const cuda::DeviceFacts& facts, int reserved_smem_per_block);

// Bounds on a rung's time from its Traffic model and two measured ceilings.
struct Roofline {
  double flops = 0, load_bytes = 0, min_dram_bytes = 0;
  double cgma = 0;                // flops per 4-byte word the kernel loads
  double intensity = 0;           // flops per byte of minimum DRAM traffic
  double bandwidth_gbs = 0;       // measured copy bandwidth
  double compute_gflops = 0;      // the compute ceiling: the measured FP32 FMA rate, or a tensor-core peak
  std::string compute_what;       // which of them, for people
  double ridge = 0;               // intensity where memory stops being the bound
  double compute_ms = 0;          // flops at the FMA rate
  double memory_ms = 0;           // minimum DRAM bytes at the copy bandwidth
  double bound_ms = 0;            // the larger: the roofline's time
  bool memory_bound = false;
  // Seed 003 §4.1: if every load went to DRAM, bandwidth x CGMA / 4 bytes caps the rate
  // (86.4 GB/s x 1 / 4 = 21.6 GFLOP/s for the naive kernel on a G80).
  double seed_gflops = 0;
  double seed_ms = 0;             // max(load bytes at the copy bandwidth, compute_ms)
};

Roofline roofline(const Traffic& traffic, double bandwidth_gbs, double compute_gflops);

// A packed CPU micro-kernel's work per step of k (one rank-1 update of its MR x NR tile of
// C in vector registers of VL floats): MR x NR / VL vector FMAs fed by MR broadcasts of A
// and NR / VL vector loads of B. AVX2 6 x 16 (VL 8): 12 FMAs per 8 loads; AVX-512 12 x 32
// (VL 16): 24 per 14. The portable kernel's "FMA" is a multiply and an add.
struct MicroKernelLoads {
  int lanes = 0;         // VL: floats per vector register
  int fmas = 0;          // vector FMAs per step: MR x NR / VL
  int broadcasts = 0;    // of A: MR
  int vector_loads = 0;  // of B: NR / VL
  int loads() const { return broadcasts + vector_loads; }
  double fma_per_load() const { return loads() > 0 ? static_cast<double>(fmas) / loads() : 0; }
};

// From the kernel's MR, NR and vector width in bits (the micro-kernel table); nullopt
// unless MR, NR > 0, the width is a positive multiple of 32 bits and VL divides NR.
std::optional<MicroKernelLoads> micro_kernel_loads(long long mr, long long nr, long long vector_bits);

}  // namespace gemmlab::bench
