#include "bench/model.hpp"

#include <algorithm>
#include <climits>

namespace gemmlab::bench {
namespace {

long long round_up(long long x, long long unit) { return unit <= 1 ? x : (x + unit - 1) / unit * unit; }

}  // namespace

std::string_view to_string(Limiter limiter) {
  switch (limiter) {
    case Limiter::Threads: return "threads";
    case Limiter::Registers: return "registers";
    case Limiter::SharedMemory: return "shared memory";
    case Limiter::Blocks: return "blocks";
  }
  return "?";
}

Occupancy occupancy(const SmLimits& sm, const BlockUsage& block) {
  Occupancy o;
  const int warp = std::max(1, sm.warp_size);
  const int warps_per_block = std::max(1, (block.threads + warp - 1) / warp);
  const int max_warps = sm.max_threads / warp;
  o.by_threads = block.threads > sm.max_threads ? 0 : max_warps / warps_per_block;
  o.by_blocks = sm.max_blocks;
  if (block.registers_per_thread <= 0) {
    o.by_registers = INT_MAX;
  } else {
    // Registers go to warps; each scheduler's share of the register file holds whole warps.
    const long long per_warp = round_up(static_cast<long long>(block.registers_per_thread) * warp, sm.reg_unit);
    const int partitions = std::max(1, sm.reg_partitions);
    const long long warps = (sm.registers / partitions) / per_warp * partitions;
    o.by_registers = static_cast<int>(std::min<long long>(INT_MAX, warps / warps_per_block));
  }
  const long long smem = round_up(block.smem_bytes + sm.smem_reserved_per_block, sm.smem_unit);
  o.by_smem = smem <= 0 ? INT_MAX : static_cast<int>(std::min<long long>(INT_MAX, sm.smem_bytes / smem));
  o.blocks = std::min({o.by_threads, o.by_registers, o.by_smem, o.by_blocks});
  const std::pair<Limiter, int> limits[] = {{Limiter::Threads, o.by_threads},
                                            {Limiter::Registers, o.by_registers},
                                            {Limiter::SharedMemory, o.by_smem},
                                            {Limiter::Blocks, o.by_blocks}};
  for (const auto& [which, value] : limits)
    if (value == o.blocks) o.binding.push_back(which);
  o.limiter = o.binding.front();
  o.warps = o.blocks * warps_per_block;
  o.fraction = max_warps > 0 ? static_cast<double>(o.warps) / max_warps : 0;
  return o;
}

SmLimits g80_limits() {
  SmLimits sm;
  sm.max_threads = 768;
  sm.max_blocks = 8;
  sm.registers = 8192;
  sm.smem_bytes = 16 * 1024;
  return sm;
}

SmLimits sm_limits(const cuda::DeviceFacts& f, int reserved_smem_per_block) {
  SmLimits sm;
  sm.max_threads = f.max_threads_per_sm;
  sm.max_blocks = f.max_blocks_per_sm;
  sm.registers = f.regs_per_sm;
  sm.smem_bytes = f.smem_per_sm;
  sm.warp_size = f.warp_size > 0 ? f.warp_size : 32;
  sm.reg_unit = 256;
  sm.reg_partitions = f.cc_major == 6 && f.cc_minor == 0 ? 2 : 4;
  sm.smem_unit = f.cc_major >= 8 ? 128 : 256;
  sm.smem_reserved_per_block = reserved_smem_per_block;
  return sm;
}

Roofline roofline(const Traffic& t, double bandwidth_gbs, double compute_gflops) {
  Roofline r;
  r.flops = t.flops;
  r.load_bytes = t.global_load_bytes;
  r.min_dram_bytes = t.min_dram_bytes;
  r.cgma = t.cgma;
  r.intensity = t.min_dram_bytes > 0 ? t.flops / t.min_dram_bytes : 0;
  r.bandwidth_gbs = bandwidth_gbs;
  r.compute_gflops = compute_gflops;
  r.ridge = bandwidth_gbs > 0 ? compute_gflops / bandwidth_gbs : 0;
  r.compute_ms = compute_gflops > 0 ? t.flops / (compute_gflops * 1e9) * 1e3 : 0;
  r.memory_ms = bandwidth_gbs > 0 ? t.min_dram_bytes / (bandwidth_gbs * 1e9) * 1e3 : 0;
  r.bound_ms = std::max(r.compute_ms, r.memory_ms);
  r.memory_bound = r.memory_ms > r.compute_ms;
  r.seed_gflops = t.global_load_bytes > 0 ? bandwidth_gbs * t.flops / t.global_load_bytes : 0;
  const double load_ms = bandwidth_gbs > 0 ? t.global_load_bytes / (bandwidth_gbs * 1e9) * 1e3 : 0;
  r.seed_ms = std::max(load_ms, r.compute_ms);
  return r;
}

std::optional<MicroKernelLoads> micro_kernel_loads(long long mr, long long nr, long long vector_bits) {
  constexpr long long kFloatBits = 32;
  if (mr <= 0 || nr <= 0 || vector_bits <= 0 || vector_bits % kFloatBits != 0)
    return std::nullopt;
  const long long lanes = vector_bits / kFloatBits;
  if (nr % lanes != 0 || mr * nr > INT_MAX) return std::nullopt;
  MicroKernelLoads l;
  l.lanes = static_cast<int>(lanes);
  l.fmas = static_cast<int>(mr * nr / lanes);
  l.broadcasts = static_cast<int>(mr);
  l.vector_loads = static_cast<int>(nr / lanes);
  return l;
}

}  // namespace gemmlab::bench
