// A GPU's peak rates, computed from its properties and clocks: the API gives SMs, clocks and
// the memory bus, but not how many FP32 lanes or how much tensor-core work an SM does per
// clock, so those come from one table by compute capability. Header-only and free of CUDA,
// so the CPU-only build and the unit tests use it too.
//
//   FP32 peak          = FP32 lanes per SM x 2 (an FMA is two flops) x SMs x max SM clock
//   tensor-core peak   = dense flops per SM per clock of the input type x SMs x max SM clock
//   DRAM peak          = 2 (double data rate) x max memory clock x bus width
//
// Tensor-core rates are dense (no 2:4 sparsity) with float32 accumulation, the way every
// rung here accumulates. GeForce boards of the same chips run float32 accumulation at half
// the rate of the data-centre and workstation boards (NVIDIA's Turing, GA102, AD102 and
// GB202 whitepapers list both), so a GeForce name halves them.
#pragma once

#include <string_view>

#include "cuda/runtime/device.hpp"
#include "gemmlab/types.hpp"

namespace gemmlab::cuda {

// Per SM and per clock; 0 where the architecture has no such instruction.
struct ArchRates {
  int cc_major = 0, cc_minor = 0;
  const char* family = "";
  int fp32_lanes = 0;   // FP32 FMA lanes per SM
  int f16_flops = 0;    // dense tensor-core flops per SM per clock, f16 inputs, f32 accumulate
  int bf16_flops = 0;
  int tf32_flops = 0;
  int fp8_flops = 0;
  bool geforce_halves = false;  // GeForce boards of this architecture accumulate f32 at half rate
};

// Each row checks against a board NVIDIA publishes (dense rates, boost clock):
//   V100 SXM2   80 SMs x 1530 MHz: f16 125 TFLOP/s                   -> 1024
//   T4          40 SMs x 1590 MHz: f16 65 TFLOP/s                    -> 1024 (RTX 2080 Ti: half)
//   A100       108 SMs x 1410 MHz: f16/bf16 312, tf32 156            -> 2048, 1024
//   A40         84 SMs x 1740 MHz: f16 150, tf32 75                  -> 1024, 512 (RTX 3090: half)
//   L40S       142 SMs x 2520 MHz: f16 362, tf32 183, fp8 733        -> 1024, 512, 2048 (RTX 4090: half)
//   H100 SXM   132 SMs x 1830 MHz: f16/bf16 989, tf32 495, fp8 1979  -> 4096, 2048, 8192
//   B200       148 SMs: bf16 2250, tf32 1100, fp8 4500               -> 8192, 4096, 16384
//   RTX PRO 6000 Blackwell: as Ada per SM per clock (RTX 5090: half)
// FP32 lanes: 64 on the data-centre Volta, Turing and GA100 SMs; 128 from GA10x on
// (two datapaths, one shared with INT32), on sm_90 and on Blackwell.
inline constexpr ArchRates kArchRates[] = {
    {7, 0, "Volta", 64, 1024, 0, 0, 0, false},
    {7, 2, "Volta (Xavier)", 64, 1024, 0, 0, 0, false},
    {7, 5, "Turing", 64, 1024, 0, 0, 0, true},
    {8, 0, "Ampere (GA100)", 64, 2048, 2048, 1024, 0, false},
    {8, 6, "Ampere (GA10x)", 128, 1024, 1024, 512, 0, true},
    {8, 7, "Ampere (Orin)", 128, 2048, 2048, 1024, 0, false},
    {8, 9, "Ada Lovelace", 128, 1024, 1024, 512, 2048, true},
    {9, 0, "Hopper", 128, 4096, 4096, 2048, 8192, false},
    {10, 0, "Blackwell (B200)", 128, 8192, 8192, 4096, 16384, false},
    {12, 0, "Blackwell (GB20x)", 128, 1024, 1024, 512, 2048, true},
};

// The table row of a compute capability, or nullptr where the table has none.
inline const ArchRates* arch_rates(int cc_major, int cc_minor) {
  for (const ArchRates& row : kArchRates)
    if (row.cc_major == cc_major && row.cc_minor == cc_minor) return &row;
  return nullptr;
}

struct DevicePeaks {
  const ArchRates* arch = nullptr;  // nullptr: no table row, so only the DRAM peak is known
  bool halved = false;              // a GeForce board: tensor-core rates at half
  // Per SM per clock as applied to this board (after halving).
  int f16_flops = 0, bf16_flops = 0, tf32_flops = 0, fp8_flops = 0;
  double fp32_gflops = 0;  // 0 where unknown
  double f16_gflops = 0, bf16_gflops = 0, tf32_gflops = 0, fp8_gflops = 0;
  double dram_gbs = 0;
};

// Per-clock rate x SMs x MHz, in GFLOP/s.
inline double rate_gflops(int flops_per_sm_clock, int sm_count, int clock_mhz) {
  return static_cast<double>(flops_per_sm_clock) * sm_count * clock_mhz * 1e-3;
}

// Double data rate x memory clock x bus width, in GB/s.
inline double dram_peak_gbs(int memory_clock_mhz, int bus_bits) {
  return 2.0 * memory_clock_mhz * 1e6 * (bus_bits / 8.0) * 1e-9;
}

inline DevicePeaks device_peaks(const DeviceFacts& f) {
  DevicePeaks p;
  p.dram_gbs = dram_peak_gbs(f.max_memory_clock_mhz, f.memory_bus_bits);
  p.arch = arch_rates(f.cc_major, f.cc_minor);
  if (!p.arch) return p;
  p.halved = p.arch->geforce_halves && std::string_view(f.name).find("GeForce") != std::string_view::npos;
  const int div = p.halved ? 2 : 1;
  p.f16_flops = p.arch->f16_flops / div;
  p.bf16_flops = p.arch->bf16_flops / div;
  p.tf32_flops = p.arch->tf32_flops / div;
  p.fp8_flops = p.arch->fp8_flops / div;
  p.fp32_gflops = rate_gflops(2 * p.arch->fp32_lanes, f.sm_count, f.max_sm_clock_mhz);
  p.f16_gflops = rate_gflops(p.f16_flops, f.sm_count, f.max_sm_clock_mhz);
  p.bf16_gflops = rate_gflops(p.bf16_flops, f.sm_count, f.max_sm_clock_mhz);
  p.tf32_gflops = rate_gflops(p.tf32_flops, f.sm_count, f.max_sm_clock_mhz);
  p.fp8_gflops = rate_gflops(p.fp8_flops, f.sm_count, f.max_sm_clock_mhz);
  return p;
}

// The peak a rung of `input` type is held against: FP32 lanes for f32 SIMT rungs, the
// tensor cores of the type otherwise; f32 data on the tensor cores (3xTF32) runs three tf32
// passes, so a third of tf32. 0 where unknown.
inline double peak_for(const DevicePeaks& p, DType input, bool tensor_cores) {
  switch (input) {
    case DType::F32: return tensor_cores ? p.tf32_gflops / 3 : p.fp32_gflops;
    case DType::TF32: return p.tf32_gflops;
    case DType::BF16: return p.bf16_gflops;
    case DType::F16: return p.f16_gflops;
    case DType::E4M3:
    case DType::E5M2: return p.fp8_gflops;
    case DType::F64: return 0;
  }
  return 0;
}

}  // namespace gemmlab::cuda
