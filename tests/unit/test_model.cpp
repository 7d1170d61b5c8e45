// The analytic model behind explain, against the seeds' hand computations: CGMA (seed 003
// §4.1), shared memory per block and occupancy limits (§4.4), the CGMA bandwidth bound
// (86.4 GB/s x CGMA / 4 on a G80), seed 002's loop order, and the packed micro-kernels'
// FMAs per load from the kernel table.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>

#include "bench/explain.hpp"
#include "bench/model.hpp"
#include "core/traffic.hpp"
#include "cpu/blis/microkernel.hpp"
#include "cpu/ladder/rungs.hpp"
#include "gemmlab/registry.hpp"

namespace gemmlab::bench {
namespace {

// A row-major NN problem's descriptors (the model never touches data).
GemmProblem square(std::int64_t n) {
  GemmProblem p;
  p.m = p.n = p.k = n;
  p.a = Matrix{nullptr, n, n, n, Layout::RowMajor, DType::F32};
  p.b = Matrix{nullptr, n, n, n, Layout::RowMajor, DType::F32};
  p.c = Matrix{nullptr, n, n, n, Layout::RowMajor, DType::F32};
  return p;
}

bool binds(const Occupancy& o, Limiter l) { return std::find(o.binding.begin(), o.binding.end(), l) != o.binding.end(); }

// ---- CGMA and shared memory -------------------------------------------------------

TEST(ModelTraffic, TwoLoadsPerFmaIsCgmaOneAndTileWidthDividesThem) {
  const GemmProblem p = square(512);
  Traffic naive = minimum_traffic(p);
  set_loads_per_fma(naive, p, 2.0);  // seed 003 §4.1: two 4-byte loads per multiply-add
  EXPECT_DOUBLE_EQ(naive.cgma, 1.0);
  EXPECT_DOUBLE_EQ(naive.global_load_bytes, 2.0 * 512 * 512 * 512 * 4);
  Traffic tiled = minimum_traffic(p);
  set_loads_per_fma(tiled, p, 2.0 / 16);  // TILE_WIDTH 16: each load feeds 16 FMAs
  EXPECT_DOUBLE_EQ(tiled.cgma, 16.0);
  EXPECT_DOUBLE_EQ(naive.global_load_bytes / tiled.global_load_bytes, 16.0);
  EXPECT_DOUBLE_EQ(naive.flops, 2.0 * 512 * 512 * 512);
  EXPECT_DOUBLE_EQ(naive.min_dram_bytes, 3.0 * 512 * 512 * 4);  // A, B read once, C written once
}

TEST(ModelTraffic, CudaRungsCarryTheSeedValues) {
  const Variant* naive = find_variant(Backend::Cuda, "naive");
  const Variant* tiled16 = find_variant(Backend::Cuda, "smem_tiled_16");
  const Variant* tiled32 = find_variant(Backend::Cuda, "smem_tiled_32");
  if (!naive || !tiled16 || !tiled32) GTEST_SKIP() << "this build has no CUDA rungs";
  const GemmProblem p = square(1024);
  EXPECT_DOUBLE_EQ(naive->model(p).cgma, 1.0);
  const Traffic t16 = tiled16->model(p);
  EXPECT_DOUBLE_EQ(t16.cgma, 16.0);
  EXPECT_EQ(t16.smem_bytes_per_block, 2 * 1024);  // 16 x 16 x 4 for Mds and again for Nds
  EXPECT_EQ(t16.threads_per_block, 256);
  const Traffic t32 = tiled32->model(p);
  EXPECT_DOUBLE_EQ(t32.cgma, 32.0);
  EXPECT_EQ(t32.smem_bytes_per_block, 8 * 1024);  // 32 x 32 x 4 x 2
  // Every CUDA rung except the anchor names its kernel for explain... where it has one.
  EXPECT_TRUE(static_cast<bool>(naive->kernel_info));
  EXPECT_TRUE(static_cast<bool>(tiled16->kernel_info));
}

// ---- occupancy, seed 003 §4.4 on the GeForce 8800 GTX ------------------------------

TEST(ModelOccupancy, TenRegistersLetAll768ThreadsIn) {
  // 8K registers / 768 threads = 10 registers per thread.
  const Occupancy o = occupancy(g80_limits(), {256, 10, 0});
  EXPECT_EQ(o.blocks, 3);
  EXPECT_EQ(o.warps * 32, 768);
  EXPECT_EQ(o.limiter, Limiter::Threads);
  EXPECT_EQ(o.by_registers, 3);  // 25 warps of 10 registers: also just enough
  EXPECT_DOUBLE_EQ(o.fraction, 1.0);
}

TEST(ModelOccupancy, ElevenRegistersDropABlockOf256Threads) {
  // "If each thread uses 11 registers ... the next lower number of threads from 768 would
  // be 512, a 1/3 reduction."
  const Occupancy o = occupancy(g80_limits(), {256, 11, 0});
  EXPECT_EQ(o.blocks, 2);
  EXPECT_EQ(o.warps * 32, 512);
  EXPECT_EQ(o.limiter, Limiter::Registers);
  EXPECT_EQ(o.by_threads, 3);
}

TEST(ModelOccupancy, FiveKilobytesOfSharedMemoryAllowThreeBlocks) {
  const Occupancy o = occupancy(g80_limits(), {64, 8, 5 * 1024});
  EXPECT_EQ(o.by_smem, 3);
  EXPECT_EQ(o.blocks, 3);
  EXPECT_EQ(o.limiter, Limiter::SharedMemory);
}

TEST(ModelOccupancy, Tile16SharedMemoryIsNotTheLimit) {
  // 2 KB per block allows 8 blocks, the most an SM holds: shared memory does not limit;
  // 256 threads per block do (768 / 256 = 3).
  const Occupancy o = occupancy(g80_limits(), {256, 10, 2 * 1024});
  EXPECT_EQ(o.by_smem, 8);
  EXPECT_EQ(o.by_blocks, 8);
  EXPECT_EQ(o.blocks, 3);
  EXPECT_FALSE(binds(o, Limiter::SharedMemory));
  EXPECT_EQ(o.limiter, Limiter::Threads);
}

TEST(ModelOccupancy, Tile32SharedMemoryAllowsTwoBlocks) {
  const Occupancy o = occupancy(g80_limits(), {64, 8, 8 * 1024});  // 32 x 32 x 4 x 2
  EXPECT_EQ(o.by_smem, 2);
  EXPECT_EQ(o.blocks, 2);
  EXPECT_EQ(o.limiter, Limiter::SharedMemory);
}

TEST(ModelOccupancy, BlockLargerThanTheSmFitsNowhere) {
  const Occupancy o = occupancy(g80_limits(), {1024, 8, 8 * 1024});  // 1024 > 768 threads
  EXPECT_EQ(o.blocks, 0);
  EXPECT_EQ(o.limiter, Limiter::Threads);
}

// ---- occupancy with today's allocation rules ------------------------------------------

SmLimits hopper() {  // H100: the numbers query_device reads, sm_90's allocation rules
  cuda::DeviceFacts f;
  f.cc_major = 9;
  f.max_threads_per_sm = 2048;
  f.max_blocks_per_sm = 32;
  f.regs_per_sm = 65536;
  f.smem_per_sm = 233472;
  f.warp_size = 32;
  return sm_limits(f, 1024);
}

TEST(ModelOccupancy, HopperRulesRoundRegistersPerWarpAndSplitThemInFour) {
  const SmLimits sm = hopper();
  EXPECT_EQ(sm.reg_unit, 256);
  EXPECT_EQ(sm.reg_partitions, 4);
  EXPECT_EQ(sm.smem_unit, 128);
  // 32 registers x 256 threads: 8 blocks by threads and by registers (64 warps x 1024).
  Occupancy o = occupancy(sm, {256, 32, 2048});
  EXPECT_EQ(o.blocks, 8);
  EXPECT_TRUE(binds(o, Limiter::Threads));
  EXPECT_TRUE(binds(o, Limiter::Registers));
  EXPECT_EQ(o.by_smem, 233472 / 3072);  // 2048 + 1024 reserved, a multiple of 128
  // 128 registers: 4096 per warp, 4 warps per quarter of the register file -> 16 warps.
  o = occupancy(sm, {256, 128, 0});
  EXPECT_EQ(o.blocks, 2);
  EXPECT_EQ(o.limiter, Limiter::Registers);
  // 200 registers: 6400 per warp; a quarter (16384) holds 2 such warps, so 8 warps per SM,
  // not the 10 that 65536 / 6400 would suggest: 4 blocks of 64 threads, not 5.
  o = occupancy(sm, {64, 200, 0});
  EXPECT_EQ(o.by_registers, 4);
  // 37 registers round up to 40 per thread (1280 per warp: a multiple of 256).
  EXPECT_EQ(occupancy(sm, {256, 37, 0}).by_registers, occupancy(sm, {256, 40, 0}).by_registers);
  // One byte of shared memory still costs the reservation, rounded to 128: 1152 bytes.
  o = occupancy(sm, {32, 16, 1});
  EXPECT_EQ(o.by_smem, 233472 / 1152);
  EXPECT_EQ(o.blocks, 32);
  EXPECT_EQ(o.limiter, Limiter::Blocks);
}

// ---- the bounds --------------------------------------------------------------------

TEST(ModelRoofline, SeedBoundIsBandwidthTimesCgmaOverFour) {
  const GemmProblem p = square(1024);
  Traffic naive = minimum_traffic(p);
  set_loads_per_fma(naive, p, 2.0);
  Traffic tiled = minimum_traffic(p);
  set_loads_per_fma(tiled, p, 2.0 / 16);
  // G80: 86.4 GB/s, 345.6 GFLOP/s peak (seed 001) -> 21.6 and 345.6 GFLOP/s (seed 003).
  const Roofline rn = roofline(naive, 86.4, 345.6);
  const Roofline rt = roofline(tiled, 86.4, 345.6);
  EXPECT_NEAR(rn.seed_gflops, 21.6, 1e-9);
  EXPECT_NEAR(rt.seed_gflops, 345.6, 1e-9);
  EXPECT_NEAR(rn.seed_ms, naive.flops / 21.6e9 * 1e3, 1e-9);
  // Minimum traffic: 12 MiB for 2 GFLOP is far past the ridge (4 flops/byte): compute-bound.
  EXPECT_NEAR(rn.ridge, 4.0, 1e-12);
  EXPECT_FALSE(rn.memory_bound);
  EXPECT_DOUBLE_EQ(rn.bound_ms, rn.compute_ms);
  EXPECT_DOUBLE_EQ(rn.bound_ms, rt.bound_ms);  // the roofline does not depend on CGMA
  EXPECT_NEAR(rn.intensity, naive.flops / (3.0 * 1024 * 1024 * 4), 1e-9);
}

TEST(ModelRoofline, SmallKIsMemoryBound) {
  GemmProblem p = square(4096);
  p.k = 4;
  p.a.cols = 4;
  p.a.ld = 4;
  p.b.rows = 4;
  const Traffic t = minimum_traffic(p);
  const Roofline r = roofline(t, 3000, 60000);
  EXPECT_TRUE(r.memory_bound);
  EXPECT_DOUBLE_EQ(r.bound_ms, r.memory_ms);
  EXPECT_NEAR(r.memory_ms, t.min_dram_bytes / 3000e9 * 1e3, 1e-12);
}

// ---- seed 002 on the CPU -----------------------------------------------------------

TEST(ModelCpu, RowMajorNnPutsJInnermost) {
  const CpuModel m = cpu_model(square(512), Config{{{"BK", 64}, {"BN", 256}}});
  EXPECT_EQ(m.order, "i p j");
  EXPECT_LT(m.cost[1], m.cost[2]);  // CM(j) < CM(p) < CM(i): j innermost, i outermost
  EXPECT_LT(m.cost[2], m.cost[0]);
  ASSERT_EQ(m.footprints.size(), 1u);
  EXPECT_EQ(m.footprints[0].bytes, 64 * 256 * 4);
  EXPECT_EQ(m.footprints[0].cache, "L2");
  EXPECT_FALSE(m.micro_kernel);  // not a packed rung: no MR, NR, VEC_BITS
}

// ---- the packed micro-kernels' FMA-to-load ratio --------------------------------------

// By hand, per k step: AVX2 6 x 16 on 8-float ymm: 6 x 2 = 12 FMAs, 6 broadcasts + 2 loads
// of B = 8 loads; AVX-512 12 x 32 on 16-float zmm: 12 x 2 = 24 FMAs, 12 + 2 = 14 loads.
// The table's MR, NR and vector width go in (the tables are data: no kernel runs here).
TEST(ModelCpu, MicroKernelFmaPerLoadFromTheTable) {
  const cpu::MicroKernel& avx2 = cpu::micro_kernel(Isa::Avx2);
  const auto a = micro_kernel_loads(avx2.mr, avx2.nr, avx2.vector_bits);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->lanes, 8);
  EXPECT_EQ(a->fmas, 12);
  EXPECT_EQ(a->broadcasts, 6);
  EXPECT_EQ(a->vector_loads, 2);
  EXPECT_EQ(a->loads(), 8);
  EXPECT_DOUBLE_EQ(a->fma_per_load(), 1.5);

  const cpu::MicroKernel& avx512 = cpu::micro_kernel(Isa::Avx512);
  const auto z = micro_kernel_loads(avx512.mr, avx512.nr, avx512.vector_bits);
  ASSERT_TRUE(z);
  EXPECT_EQ(z->lanes, 16);
  EXPECT_EQ(z->fmas, 24);
  EXPECT_EQ(z->loads(), 14);
  EXPECT_DOUBLE_EQ(z->fma_per_load(), 24.0 / 14.0);
}

TEST(ModelCpu, MicroKernelLoadsRefuseShapesThatAreNotWholeVectors) {
  EXPECT_FALSE(micro_kernel_loads(6, 12, 256));  // NR not a multiple of 8 lanes
  EXPECT_FALSE(micro_kernel_loads(6, 16, 100));  // not whole floats
  EXPECT_FALSE(micro_kernel_loads(0, 16, 256));
  EXPECT_FALSE(micro_kernel_loads(6, 16, 0));
  EXPECT_TRUE(micro_kernel_loads(1, 1, 32));     // a scalar kernel: 1 FMA per 2 loads
  EXPECT_DOUBLE_EQ(micro_kernel_loads(1, 1, 32)->fma_per_load(), 0.5);
}

TEST(ModelCpu, PackedConfigCarriesTheKernelsRatioIntoTheModel) {
  for (const Isa isa : {Isa::Avx512, Isa::Avx2, Isa::Portable}) {
    const cpu::MicroKernel& kernel = cpu::micro_kernel(isa);
    const cpu::Blocking b = cpu::blocking_for(kernel, cpu::CacheSizes{32 << 10, 512 << 10, 32 << 20, "test"});
    const CpuModel m = cpu_model(square(512), cpu::packed_config(kernel, b));
    ASSERT_TRUE(m.micro_kernel) << kernel.name;
    EXPECT_EQ(m.micro_kernel->fmas * m.micro_kernel->lanes, kernel.mr * kernel.nr) << kernel.name;
    EXPECT_EQ(m.micro_kernel->loads(), kernel.mr + kernel.nr / m.micro_kernel->lanes) << kernel.name;
  }
}

}  // namespace
}  // namespace gemmlab::bench
