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

Status run_packed(const RowMajorGemm& g, const MicroKernel& kernel, const Blocking& blocking, RunContext&) {
  thread_local SingleThreadWorkspace ws;
  if (!ws.a.reserve(a_buffer_floats(blocking, g.m, g.k)) ||
      !ws.b0.reserve(b_buffer_floats(blocking, g.n, g.k)) ||
      !ws.b1.reserve(b_buffer_floats(blocking, g.n, g.k)))
    return {StatusCode::AllocFailed, "packed_simd: packing workspace"};
  const PackedJob job{g, &kernel, blocking, TeamShape{}, {ws.b0.data(), ws.b1.data()}, nullptr};
  packed_gemm_part(job, 0, ws.a.data());
  return Status::ok();
}

// A block-size spec valid for every kernel (MC a multiple of each MR, NC of each NR).
constexpr const char* kExampleBlocking = "KC=256,MC=480,NC=3072";

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

void bind_packed(Variant& v, const std::string& config, PackedRun run, PackedFactory factory) {
  const MicroKernel& kernel = micro_kernel(cpu_features().best_isa());
  Blocking blocking;
  (void)packed_blocking(kernel, config, blocking);  // refused under a later ISA cap: can_implement says so
  v.config = packed_config(kernel, blocking);
  v.config_name = config;
  v.configs = {{std::string(kAutoBlocking), "block sizes from this machine's caches and the kernel's register tile"},
               {kExampleBlocking, "block sizes given: any subset of KC, MC, NC, comma-separated, such as this one "
                                  "(KC 1..65536, MC a multiple of MR, NC of NR; the rest from the caches)"}};
  v.configure = [factory](std::string_view name, Variant& out) {
    Blocking b;
    GEMMLAB_TRY(packed_blocking(micro_kernel(cpu_features().best_isa()), name, b));
    out = factory(std::string(name));
    return Status::ok();
  };
  v.can_implement = [config, rung = v.name](const GemmProblem& p) {
    Blocking b;
    GEMMLAB_TRY(packed_blocking(micro_kernel(cpu_features().best_isa()), config, b));
    return require_f32_host(p, rung);
  };
  // The kernel, and so the block sizes, follow the ISA cap at each call.
  v.run = [config, run](const GemmProblem& p, RunContext& context) {
    const MicroKernel& now = micro_kernel(cpu_features().best_isa());
    Blocking b;
    GEMMLAB_TRY(packed_blocking(now, config, b));
    return run(canonicalize(p), now, b, context);
  };
  v.model = [config](const GemmProblem& p) {
    Blocking b;
    (void)packed_blocking(micro_kernel(cpu_features().best_isa()), config, b);
    return packed_model(p, b);
  };
}

namespace {

Variant packed_simd(const std::string& config) {
  Variant v;
  v.rung = 5;
  v.name = "packed_simd";
  v.backend = Backend::Cpu;
  v.technique = fmt::format("packed A/B panels (BLIS 5 loops), {} micro-kernel",
                            micro_kernel(cpu_features().best_isa()).name);
  v.threads = 1;
  bind_packed(v, config, run_packed, packed_simd);
  return v;
}

}  // namespace

Variant packed_simd_variant() { return packed_simd(std::string(kAutoBlocking)); }

}  // namespace gemmlab::cpu
