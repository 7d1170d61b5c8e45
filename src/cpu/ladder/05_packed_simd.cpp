// Rung 5 (cpu): BLIS's five loops. Panels of op(A) and op(B) are packed contiguously (the
// transposition is absorbed by the packing), so an MR x NR micro-kernel in SIMD registers
// reads A and B strictly sequentially from L2 and L1. The kernel is chosen at run time
// from cpu_features().best_isa(): AVX-512 12x32, AVX2+FMA 6x16, or a portable 4x8.
//
// Workspace: the packed A block and the two packed B blocks live in a thread_local buffer
// that grows to the largest problem seen and is then reused; the harness's untimed
// verification run grows it, so timed runs do not allocate.
#include <fmt/format.h>

#include "core/traffic.hpp"
#include "cpu/blis/packed_gemm.hpp"
#include "cpu/ladder/rungs.hpp"

namespace gemmlab::cpu {
namespace {

struct SingleThreadWorkspace {
  AlignedFloats a, b0, b1;
};

Status run_packed(const GemmProblem& problem, Stream) {
  const RowMajorGemm g = canonicalize(problem);
  const MicroKernel& kernel = micro_kernel(cpu_features().best_isa());
  Blocking blocking;
  GEMMLAB_TRY(packed_blocking(kernel, blocking));
  thread_local SingleThreadWorkspace ws;
  if (!ws.a.reserve(a_buffer_floats(blocking, g.m, g.k)) ||
      !ws.b0.reserve(b_buffer_floats(blocking, g.n, g.k)) ||
      !ws.b1.reserve(b_buffer_floats(blocking, g.n, g.k)))
    return {StatusCode::AllocFailed, "packed_simd: packing workspace"};
  const PackedJob job{g, &kernel, blocking, TeamShape{}, {ws.b0.data(), ws.b1.data()}, nullptr};
  packed_gemm_part(job, 0, ws.a.data());
  return Status::ok();
}

}  // namespace

Config packed_config(const MicroKernel& kernel, const Blocking& b) {
  return Config{{{"MR", kernel.mr},
                 {"NR", kernel.nr},
                 {"KC", b.kc},
                 {"MC", b.mc},
                 {"NC", b.nc},
                 {"VEC_BITS", kernel.vector_bits}}};
}

Traffic packed_model(const GemmProblem& p, const Blocking& b) {
  // Seed 002's view, data from beyond the caches: B read once (packed once per block),
  // A read once per NC block of columns, C read (if needed) and written once per KC block.
  Traffic t = minimum_traffic(p);
  const double m = static_cast<double>(p.m), n = static_cast<double>(p.n),
               k = static_cast<double>(p.k);
  const double col_blocks = static_cast<double>(ceil_div(p.n, b.nc));
  const double depth_blocks = static_cast<double>(ceil_div(p.k, b.kc));
  const double c_reads = depth_blocks - (p.beta == 0.0 ? 1.0 : 0.0);
  const double words = k * n + m * k * col_blocks + m * n * c_reads;
  t.global_load_bytes = 4.0 * words;
  t.global_store_bytes = 4.0 * m * n * depth_blocks;
  t.cgma = words > 0 ? t.flops / words : 0;
  return t;
}

Variant packed_simd_variant() {
  const MicroKernel& kernel = micro_kernel(cpu_features().best_isa());
  Blocking blocking;
  (void)packed_blocking(kernel, blocking);  // a bad override: can_implement says so
  Variant v;
  v.name = "packed_simd";
  v.backend = Backend::Cpu;
  v.technique = fmt::format("packed A/B panels (BLIS 5 loops), {} micro-kernel", kernel.name);
  v.config = packed_config(kernel, blocking);
  v.threads = 1;
  v.can_implement = [](const GemmProblem& p) {
    Blocking b;
    GEMMLAB_TRY(packed_blocking(micro_kernel(cpu_features().best_isa()), b));
    return require_f32_host(p, "packed_simd");
  };
  v.run = run_packed;
  v.model = [](const GemmProblem& p) {
    Blocking b;
    (void)packed_blocking(micro_kernel(cpu_features().best_isa()), b);
    return packed_model(p, b);
  };
  return v;
}

}  // namespace gemmlab::cpu
