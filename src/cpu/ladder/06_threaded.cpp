// Rung 6 (cpu): the packed kernel of rung 5 on every core. The threads form a grid:
// ways_ic split the rows of C (each packs its own A block into its own L2), ways_jr split
// the NR panels of the shared B block (packed by the whole team into L3, double-buffered,
// one barrier per KC block). On 2 cores a square problem gets 2 x 1 (rows); on 16, 2048^2
// gets 8 x 2, a single row 1 x 16, a tall 4096 x 16 problem 16 x 1 (team_shape()).
//
// The threads are a persistent pool of the context (created on first use, with the context's
// thread count), and every thread's packing buffer grows once and is reused: the untimed
// verification run pays for both.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "core/traffic.hpp"
#include "cpu/blis/packed_gemm.hpp"
#include "cpu/ladder/rungs.hpp"

namespace gemmlab::cpu {
namespace {

// Below this many multiply-adds per thread, waking another thread costs more than it saves.
constexpr double kMinFmasPerThread = 1 << 20;

// The context's team: its pool and packing buffers (a context serves one thread at a time).
struct TeamWorkspace {
  std::unique_ptr<ThreadPool> pool;
  std::vector<AlignedFloats> a;  // one packed A block per thread
  AlignedFloats b[2];
};

Status run_threaded(const RowMajorGemm& g, const MicroKernel& kernel, const Blocking& blocking, RunContext& context) {
  TeamWorkspace& ws = context.get<TeamWorkspace>();
  if (!ws.pool) ws.pool = std::make_unique<ThreadPool>(context.threads() > 0 ? context.threads() : usable_cores());
  ThreadPool& pool = *ws.pool;

  const double fmas = static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
  const int threads = static_cast<int>(
      std::clamp<double>(fmas / kMinFmasPerThread, 1.0, static_cast<double>(pool.size())));
  const TeamShape team = team_shape(threads, g.m, g.n, blocking);

  if (ws.a.size() < static_cast<std::size_t>(threads)) ws.a.resize(static_cast<std::size_t>(threads));
  bool ok = ws.b[0].reserve(b_buffer_floats(blocking, g.n, g.k)) &&
            ws.b[1].reserve(b_buffer_floats(blocking, g.n, g.k));
  for (int t = 0; t < threads && ok; ++t)
    ok = ws.a[static_cast<std::size_t>(t)].reserve(a_buffer_floats(blocking, g.m, g.k));
  if (!ok) return {StatusCode::AllocFailed, "threaded: packing workspace"};

  TeamBarrier barrier(threads);
  const PackedJob job{g, &kernel, blocking, team, {ws.b[0].data(), ws.b[1].data()},
                      threads > 1 ? &barrier : nullptr};
  auto part = [&](int tid) { packed_gemm_part(job, tid, ws.a[static_cast<std::size_t>(tid)].data()); };
  pool.run(threads, part);
  return Status::ok();
}

Variant threaded(const std::string& config) {
  Variant v;
  v.rung = 6;
  v.name = "threaded";
  v.backend = Backend::Cpu;
  v.technique = fmt::format("rung 5 on all {} cores: rows x panels thread grid, shared packed B",
                            usable_cores());
  v.threads = 0;
  bind_packed(v, config, run_threaded, threaded);
  v.config.params.emplace_back("THREADS", usable_cores());
  return v;
}

}  // namespace

Variant threaded_variant() { return threaded(std::string(kAutoBlocking)); }

}  // namespace gemmlab::cpu
