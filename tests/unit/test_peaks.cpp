// The peak table (cuda/runtime/peaks.hpp) against the figures NVIDIA publishes for boards of
// each architecture: FP32 lanes x 2 x SMs x clock, dense tensor-core rates, DRAM from the
// memory clock and bus. Pure functions of DeviceFacts: no GPU needed.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "cuda/runtime/peaks.hpp"

namespace gemmlab::cuda {
namespace {

DeviceFacts board(const char* name, int major, int minor, int sms, int sm_mhz, int mem_mhz, int bus_bits) {
  DeviceFacts f;
  f.name = name;
  f.cc_major = major;
  f.cc_minor = minor;
  f.sm_count = sms;
  f.max_sm_clock_mhz = sm_mhz;
  f.max_memory_clock_mhz = mem_mhz;
  f.memory_bus_bits = bus_bits;
  return f;
}

// Within 1.5% of a published figure (boards quote rounded clocks and rates).
void expect_near_published(double computed_gflops, double published_tflops, const char* what) {
  EXPECT_NEAR(computed_gflops * 1e-3, published_tflops, 0.015 * published_tflops) << what;
}

TEST(Peaks, H100SxmMatchesTheReadmeRatesPerSmAndClock) {
  // What cudaGetDeviceProperties and the attributes say on an H100 80GB HBM3.
  const DevicePeaks p = device_peaks(board("NVIDIA H100 80GB HBM3", 9, 0, 132, 1980, 2619, 5120));
  ASSERT_NE(p.arch, nullptr);
  EXPECT_FALSE(p.halved);
  EXPECT_EQ(p.arch->fp32_lanes, 128);
  EXPECT_DOUBLE_EQ(p.fp32_gflops, 256.0 * 132 * 1980 * 1e-3);
  EXPECT_EQ(p.tf32_flops, 2048);
  EXPECT_EQ(p.bf16_flops, 4096);
  EXPECT_EQ(p.f16_flops, 4096);
  EXPECT_EQ(p.fp8_flops, 8192);
  EXPECT_DOUBLE_EQ(p.bf16_gflops, 4096.0 * 132 * 1980 * 1e-3);
  EXPECT_NEAR(p.dram_gbs, 3352.3, 0.1);  // the README's 3352 GB/s theoretical
  expect_near_published(p.fp32_gflops, 67, "FP32 (datasheet, at 1980 MHz)");
  // NVIDIA's datasheet tensor-core figures are at the 1830 MHz boost clock.
  const DevicePeaks boost = device_peaks(board("NVIDIA H100 80GB HBM3", 9, 0, 132, 1830, 2619, 5120));
  expect_near_published(boost.bf16_gflops, 989.4, "bf16");
  expect_near_published(boost.tf32_gflops, 494.7, "tf32");
  expect_near_published(boost.fp8_gflops, 1978.9, "fp8");
}

TEST(Peaks, A100HasSixtyFourLanesAndNoFp8) {
  const DevicePeaks p = device_peaks(board("NVIDIA A100-SXM4-40GB", 8, 0, 108, 1410, 1215, 5120));
  ASSERT_NE(p.arch, nullptr);
  EXPECT_EQ(p.arch->fp32_lanes, 64);
  expect_near_published(p.fp32_gflops, 19.5, "FP32");
  expect_near_published(p.f16_gflops, 312, "f16");
  expect_near_published(p.tf32_gflops, 156, "tf32");
  EXPECT_EQ(p.fp8_gflops, 0);
  EXPECT_NEAR(p.dram_gbs, 1555.2, 0.1);
}

TEST(Peaks, TuringT4HasSixtyFourLanesAndF16Only) {
  const DevicePeaks p = device_peaks(board("Tesla T4", 7, 5, 40, 1590, 5001, 256));
  ASSERT_NE(p.arch, nullptr);
  EXPECT_EQ(p.arch->fp32_lanes, 64);
  expect_near_published(p.fp32_gflops, 8.1, "FP32");
  expect_near_published(p.f16_gflops, 65, "f16");
  EXPECT_EQ(p.bf16_gflops, 0);
  EXPECT_EQ(p.tf32_gflops, 0);
  EXPECT_NEAR(p.dram_gbs, 320, 0.1);
}

TEST(Peaks, Ga10xAndAdaHave128LanesAndGeForceHalvesTheTensorCores) {
  const DevicePeaks a40 = device_peaks(board("NVIDIA A40", 8, 6, 84, 1740, 7251, 384));
  EXPECT_FALSE(a40.halved);
  expect_near_published(a40.fp32_gflops, 37.4, "A40 FP32");
  expect_near_published(a40.f16_gflops, 149.7, "A40 f16");
  expect_near_published(a40.tf32_gflops, 74.8, "A40 tf32");
  const DevicePeaks rtx3090 = device_peaks(board("NVIDIA GeForce RTX 3090", 8, 6, 82, 1695, 9751, 384));
  EXPECT_TRUE(rtx3090.halved);
  expect_near_published(rtx3090.fp32_gflops, 35.6, "3090 FP32 (not halved)");
  expect_near_published(rtx3090.f16_gflops, 71, "3090 f16, f32 accumulate");
  expect_near_published(rtx3090.tf32_gflops, 35.6, "3090 tf32");
  const DevicePeaks l40s = device_peaks(board("NVIDIA L40S", 8, 9, 142, 2520, 9001, 384));
  expect_near_published(l40s.fp32_gflops, 91.6, "L40S FP32");
  expect_near_published(l40s.f16_gflops, 362, "L40S f16");
  expect_near_published(l40s.fp8_gflops, 733, "L40S fp8");
  const DevicePeaks rtx4090 = device_peaks(board("NVIDIA GeForce RTX 4090", 8, 9, 128, 2520, 10501, 384));
  expect_near_published(rtx4090.fp32_gflops, 82.6, "4090 FP32");
  expect_near_published(rtx4090.f16_gflops, 165.2, "4090 f16, f32 accumulate");
  EXPECT_NEAR(rtx4090.dram_gbs, 1008, 0.1);
}

TEST(Peaks, UnknownArchitectureKeepsDramAndLeavesTheRestUnknown) {
  const DevicePeaks p = device_peaks(board("A future GPU", 42, 0, 100, 2000, 1000, 1024));
  EXPECT_EQ(p.arch, nullptr);
  EXPECT_EQ(p.fp32_gflops, 0);
  EXPECT_EQ(p.bf16_gflops, 0);
  EXPECT_DOUBLE_EQ(p.dram_gbs, 256);
  EXPECT_EQ(peak_for(p, DType::F32, false), 0);
}

TEST(Peaks, ARungIsHeldAgainstItsInputTypesPeak) {
  const DevicePeaks p = device_peaks(board("NVIDIA H100 80GB HBM3", 9, 0, 132, 1980, 2619, 5120));
  EXPECT_DOUBLE_EQ(peak_for(p, DType::F32, false), p.fp32_gflops);
  EXPECT_DOUBLE_EQ(peak_for(p, DType::F32, true), p.tf32_gflops / 3);  // 3xTF32: three tf32 passes
  EXPECT_DOUBLE_EQ(peak_for(p, DType::TF32, true), p.tf32_gflops);
  EXPECT_DOUBLE_EQ(peak_for(p, DType::BF16, true), p.bf16_gflops);
  EXPECT_DOUBLE_EQ(peak_for(p, DType::F16, true), p.f16_gflops);
  // Both FP8 formats run at the one FP8 rate, twice bf16's on Hopper.
  EXPECT_DOUBLE_EQ(peak_for(p, DType::E4M3, true), p.fp8_gflops);
  EXPECT_DOUBLE_EQ(peak_for(p, DType::E5M2, true), p.fp8_gflops);
  EXPECT_DOUBLE_EQ(p.fp8_gflops, 2 * p.bf16_gflops);
  EXPECT_EQ(peak_for(p, DType::F64, false), 0);
}

TEST(Peaks, TableRowsAreUniqueAndConsistent) {
  std::set<std::pair<int, int>> seen;
  for (const ArchRates& row : kArchRates) {
    EXPECT_TRUE(seen.insert({row.cc_major, row.cc_minor}).second) << row.family << " listed twice";
    EXPECT_TRUE(row.fp32_lanes == 64 || row.fp32_lanes == 128) << row.family;
    EXPECT_GT(row.f16_flops, 0) << row.family << ": every listed architecture has f16 tensor cores";
    if (row.bf16_flops > 0) {
      EXPECT_EQ(row.bf16_flops, row.f16_flops) << row.family << ": bf16 runs at the f16 rate";
      EXPECT_EQ(row.tf32_flops * 2, row.f16_flops) << row.family << ": tf32 at half the f16 rate";
    }
    if (row.fp8_flops > 0) {
      EXPECT_EQ(row.fp8_flops, 2 * row.f16_flops) << row.family;
    }
    EXPECT_EQ(arch_rates(row.cc_major, row.cc_minor), &row);
  }
  EXPECT_EQ(arch_rates(6, 1), nullptr);
}

}  // namespace
}  // namespace gemmlab::cuda
