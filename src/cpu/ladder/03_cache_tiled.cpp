// Rung 3 (cpu): tiling = strip-mine + permute (seed 002). The k and j loops of rung 2's
// i, k, j nest are strip-mined into BK and BN strips and the strip loops moved outside:
//
//   for kk in k step BK            B tile (BK, BN): reused by every row i  -> half of L2
//     for jj in n step BN
//       for i in m                 C row segment (1, BN): reused BK times  -> an eighth of L1
//         for p in kk..kk+BK
//           for j in jj..jj+BN     C(i, j) += alpha A(i, p) B(p, j)
//
// the row-major mirror of the seed's "DO K by TK, DO I by TI, DO J, DO KK, DO II" (there the
// matrices are column-major, so the seed's I is our J). BN and BK come from the cache sizes
// read at run time (cache_info.hpp): the C row segment takes an eighth of L1d (BN = 1024
// for 32 KiB), the rest of L1 holds the B rows streaming past it; the B tile takes half
// of L2 (BK = 64 for 512 KiB). Long rows matter: the hardware prefetcher follows a B row
// only once it has seen a few lines of it, and every row restarts the j loop. A square
// 256 x 256 tile with the same L2 footprint measured 13.5 GFLOP/s, this shape 17.3, the
// untiled loop_order 13.7 (2048^3, Zen 3, docs/cpu-ladder.md).
#include <algorithm>

#include "core/traffic.hpp"
#include "cpu/machine/cache_info.hpp"
#include "cpu/blis/operands.hpp"
#include "cpu/ladder/rungs.hpp"

namespace gemmlab::cpu {

CacheTiles cache_tiles(const CacheSizes& caches) {
  CacheTiles t;
  t.bn = std::max<std::int64_t>(caches.l1d / 8 / 4 / 16 * 16, 16);
  t.bk = std::max<std::int64_t>(caches.l2 / 2 / (t.bn * 4) / 8 * 8, 8);
  return t;
}

namespace {

Status run_cache_tiled(const GemmProblem& problem, RunContext&) {
  const RowMajorGemm g = canonicalize(problem);
  const StridedView a = view_a(g), b = view_b(g);
  auto* c = static_cast<float*>(g.c);
  const auto alpha = static_cast<float>(g.alpha);
  const CacheTiles tiles = cache_tiles(cache_sizes());
  scale_block(c, g.ldc, g.m, g.n, g.beta);  // C <- beta C, then accumulate tile by tile
  for (std::int64_t kk = 0; kk < g.k; kk += tiles.bk) {
    const std::int64_t k_end = std::min(g.k, kk + tiles.bk);
    for (std::int64_t jj = 0; jj < g.n; jj += tiles.bn) {
      const std::int64_t bn = std::min(tiles.bn, g.n - jj);
      for (std::int64_t i = 0; i < g.m; ++i) {
        float* crow = c + i * g.ldc + jj;  // (1, BN) of C
        for (std::int64_t p = kk; p < k_end; ++p) {
          const float s = alpha * a(i, p);
          const float* brow = b.data + p * b.rs + jj * b.cs;  // (1, BN) of B
          if (b.cs == 1) {
            for (std::int64_t j = 0; j < bn; ++j) crow[j] += s * brow[j];
          } else {
            for (std::int64_t j = 0; j < bn; ++j) crow[j] += s * brow[j * b.cs];
          }
        }
      }
    }
  }
  return Status::ok();
}

}  // namespace

Variant cache_tiled_variant() {
  const CacheSizes& caches = cache_sizes();
  const CacheTiles tiles = cache_tiles(caches);
  Variant v;
  v.rung = 3;
  v.name = "cache_tiled";
  v.backend = Backend::Cpu;
  v.technique = "strip-mine + permute: B tile (BK, BN) in L2, C row strip in L1 (" + caches.source + ")";
  v.config = Config{{{"BK", tiles.bk},
                     {"BN", tiles.bn},
                     {"L1D_KIB", caches.l1d >> 10},
                     {"L2_KIB", caches.l2 >> 10},
                     {"L3_KIB", caches.l3 >> 10}}};
  v.threads = 1;
  v.can_implement = [](const GemmProblem& p) { return require_f32_host(p, "cache_tiled"); };
  v.run = run_cache_tiled;
  v.model = [](const GemmProblem& p) {
    // Data from beyond L2 (seed 002's view, in bytes): every B tile once, A's (m, BK) strip
    // once per BN strip of columns, C read and written once per BK strip.
    Traffic t = minimum_traffic(p);
    const CacheTiles strips = cache_tiles(cache_sizes());
    const double m = static_cast<double>(p.m), n = static_cast<double>(p.n),
                 k = static_cast<double>(p.k);
    const double col_strips = static_cast<double>(ceil_div(p.n, strips.bn));
    const double depth_strips = static_cast<double>(ceil_div(p.k, strips.bk));
    const double words = k * n + m * k * col_strips + m * n * depth_strips;
    t.global_load_bytes = 4.0 * words;
    t.global_store_bytes = 4.0 * m * n * depth_strips;
    t.cgma = t.flops / words;
    return t;
  };
  return v;
}

}  // namespace gemmlab::cpu
