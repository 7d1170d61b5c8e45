// Rung 4 (cpu): tiling for registers (seed 002: unroll-and-jam + scalar replacement).
// The i and j loops of the cache-tiled nest are unrolled by MR and NR and the copies
// jammed into one p loop; the MR x NR block of C then lives in named scalars (an array
// indexed only by constants, which the compiler keeps in registers) for a whole BK strip:
//
//   for jj in n step BN                 B tile (BK, BN) reused by every row block -> L2
//     for kk in k step BK
//       for i in m step MR              A strip (MR, BK) reused by every j block  -> L1
//         for j in jj..jj+BN step NR    B strip (BK, NR) reused by every i block  -> L1
//           acc(MR, NR) = 0                               (registers)
//           for p in kk..kk+BK: acc += A(i.., p) (MR, 1) * B(p, j..) (1, NR)
//           C(i.., j..) = alpha acc + beta C  (first strip) or C + alpha acc
//
// Per p: MR + NR loads for MR * NR multiply-adds (4 x 8: 12 loads, 32 FMAs, 2.7 per load,
// against 2 loads + 1 store per FMA in rung 3). Portable C++: the build targets baseline
// x86-64, so the compiler vectorises with SSE (16 registers: 8 hold the 4 x 8 block).
// BK: A strip + B strip in half of L1d; BN: the B tile in half of L2.
#include <algorithm>

#include "core/traffic.hpp"
#include "cpu/cache_info.hpp"
#include "cpu/operands.hpp"
#include "cpu/rungs.hpp"

namespace gemmlab::cpu {
namespace {

constexpr int kMr = 4;  // rows of the register block (TM)
constexpr int kNr = 8;  // columns of the register block (TN)

struct Strip {
  std::int64_t p_begin, p_end;
  float alpha, beta;
  bool first, beta_zero;  // first BK strip: apply beta (beta_zero: never read C)
};

inline void store_block(float* c, std::int64_t ldc, const float (&acc)[kMr][kNr], int rows,
                        int cols, const Strip& s) {
  for (int r = 0; r < rows; ++r) {
    float* row = c + r * ldc;
    if (!s.first) {
      for (int j = 0; j < cols; ++j) row[j] += s.alpha * acc[r][j];
    } else if (s.beta_zero) {
      for (int j = 0; j < cols; ++j) row[j] = s.alpha * acc[r][j];
    } else {
      for (int j = 0; j < cols; ++j) row[j] = s.alpha * acc[r][j] + s.beta * row[j];
    }
  }
}

// One full MR x NR block: the jammed loop with scalar-replaced accumulators.
void full_block(const StridedView& a, const StridedView& b, float* c, std::int64_t ldc,
                std::int64_t i, std::int64_t j, const Strip& s) {
  float acc[kMr][kNr] = {};  // (MR, NR) in registers
  const float* arow[kMr];
  for (int r = 0; r < kMr; ++r) arow[r] = a.data + (i + r) * a.rs;
  const float* bcol = b.data + j * b.cs;
  for (std::int64_t p = s.p_begin; p < s.p_end; ++p) {
    float av[kMr], bv[kNr];  // (MR, 1) and (1, NR), loaded once per p
#pragma GCC unroll 4
    for (int r = 0; r < kMr; ++r) av[r] = arow[r][p * a.cs];
    const float* brow = bcol + p * b.rs;
    if (b.cs == 1) {
#pragma GCC unroll 8
      for (int x = 0; x < kNr; ++x) bv[x] = brow[x];
    } else {
#pragma GCC unroll 8
      for (int x = 0; x < kNr; ++x) bv[x] = brow[x * b.cs];
    }
#pragma GCC unroll 4
    for (int r = 0; r < kMr; ++r)
#pragma GCC unroll 8
      for (int x = 0; x < kNr; ++x) acc[r][x] += av[r] * bv[x];
  }
  store_block(c + i * ldc + j, ldc, acc, kMr, kNr, s);
}

// A partial block at the right or bottom edge: the same loop with run-time bounds.
void edge_block(const StridedView& a, const StridedView& b, float* c, std::int64_t ldc,
                std::int64_t i, std::int64_t j, int rows, int cols, const Strip& s) {
  float acc[kMr][kNr] = {};
  for (std::int64_t p = s.p_begin; p < s.p_end; ++p)
    for (int r = 0; r < rows; ++r) {
      const float av = a(i + r, p);
      for (int x = 0; x < cols; ++x) acc[r][x] += av * b(p, j + x);
    }
  store_block(c + i * ldc + j, ldc, acc, rows, cols, s);
}

}  // namespace

RegisterTiles register_tiles(const CacheSizes& caches) {
  RegisterTiles t;
  t.tm = kMr;
  t.tn = kNr;
  t.bk = std::max<std::int64_t>(caches.l1d / 2 / ((kMr + kNr) * 4) / 16 * 16, 16);
  t.bn = std::max<std::int64_t>(caches.l2 / 2 / (t.bk * 4) / kNr * kNr, kNr);
  return t;
}

namespace {

Status run_register_tiled(const GemmProblem& problem, Stream) {
  const RowMajorGemm g = canonicalize(problem);
  const StridedView a = view_a(g), b = view_b(g);
  auto* c = static_cast<float*>(g.c);
  const RegisterTiles tiles = register_tiles(cache_sizes());
  for (std::int64_t jj = 0; jj < g.n; jj += tiles.bn) {
    const std::int64_t j_end = std::min(g.n, jj + tiles.bn);
    for (std::int64_t kk = 0; kk < g.k; kk += tiles.bk) {
      const Strip s{kk, std::min(g.k, kk + tiles.bk), static_cast<float>(g.alpha),
                    static_cast<float>(g.beta), kk == 0, g.beta == 0.0};
      for (std::int64_t i = 0; i < g.m; i += kMr) {
        const int rows = static_cast<int>(std::min<std::int64_t>(kMr, g.m - i));
        for (std::int64_t j = jj; j < j_end; j += kNr) {
          const int cols = static_cast<int>(std::min<std::int64_t>(kNr, j_end - j));
          if (rows == kMr && cols == kNr) full_block(a, b, c, g.ldc, i, j, s);
          else edge_block(a, b, c, g.ldc, i, j, rows, cols, s);
        }
      }
    }
  }
  return Status::ok();
}

}  // namespace

Variant register_tiled_variant() {
  const RegisterTiles tiles = register_tiles(cache_sizes());
  Variant v;
  v.name = "register_tiled";
  v.backend = Backend::Cpu;
  v.technique = "unroll-and-jam + scalar replacement: 4x8 block of C in registers";
  v.config = Config{{{"BK", tiles.bk}, {"BN", tiles.bn}, {"TM", tiles.tm}, {"TN", tiles.tn}}};
  v.threads = 1;
  v.can_implement = [](const GemmProblem& p) { return require_f32_host(p, "register_tiled"); };
  v.run = run_register_tiled;
  v.model = [](const GemmProblem& p) {
    // Data from beyond L2 (seed 002's view, in bytes): B once, A once per BN strip of
    // columns, C read and written once per BK strip.
    Traffic t = minimum_traffic(p);
    const RegisterTiles strips = register_tiles(cache_sizes());
    const double m = static_cast<double>(p.m), n = static_cast<double>(p.n),
                 k = static_cast<double>(p.k);
    const double col_strips = static_cast<double>(ceil_div(p.n, strips.bn));
    const double depth_strips = static_cast<double>(ceil_div(p.k, strips.bk));
    const double c_reads = depth_strips - (p.beta == 0.0 ? 1.0 : 0.0);
    const double words = k * n + m * k * col_strips + m * n * c_reads;
    t.global_load_bytes = 4.0 * words;
    t.global_store_bytes = 4.0 * m * n * depth_strips;
    t.cgma = t.flops / words;
    return t;
  };
  return v;
}

}  // namespace gemmlab::cpu
