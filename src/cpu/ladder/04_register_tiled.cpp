// Rung 4 (cpu): tiling for registers (seed 002: unroll-and-jam + scalar replacement).
// The i and j loops of the cache-tiled nest are unrolled by TM and TN and the copies
// jammed into one p loop; the TM x TN block of C then lives in registers for a whole BK
// strip, as TM x (TN / W) named SIMD values (scalar replacement where each "scalar" is a
// register of W floats):
//
//   for jj in n step BN                 B tile (BK, BN) reused by every row block -> L2
//     for kk in k step BK
//       for i in m step TM              A strip (TM, BK) reused by every j block  -> L1
//         for j in jj..jj+BN step TN    B strip (BK, TN) reused by every i block  -> L1
//           acc(TM, TN) = 0                               (registers)
//           for p in kk..kk+BK: acc += A(i.., p) (TM, 1) * B(p, j..) (1, TN)
//           C(i.., j..) = alpha acc + beta C  (first strip) or C + alpha acc
//
// Per p: TM + TN loaded floats for TM * TN multiply-adds (4 x 8: 12 floats, 32 FMAs, 2.7
// per float, against 2 loads + 1 store per FMA in rung 3). Portable C++: the SIMD values
// are std::experimental::native_simd<float> (simd.hpp), whose width is what the build
// targets (SSE, W = 4, for baseline x86-64: 8 of the 16 registers hold the block); no
// intrinsics.
// BK: A strip + B strip in half of L1d; BN: the B tile in half of L2.
#include <fmt/format.h>

#include <algorithm>

#include "core/traffic.hpp"
#include "cpu/machine/cache_info.hpp"
#include "cpu/blis/operands.hpp"
#include "cpu/ladder/rungs.hpp"
#include "cpu/blis/simd.hpp"

namespace gemmlab::cpu {
namespace {

constexpr int kW = kVecWidth;  // floats per register
constexpr int kMr = 4;                             // rows of the register block (TM)
constexpr int kNv = 2;                             // registers per row
constexpr int kNr = kNv * kW;                      // columns of the register block (TN)

struct Strip {
  std::int64_t p_begin, p_end;
  float alpha, beta;
  bool first, beta_zero;  // first BK strip: apply beta (beta_zero: never read C)
};

inline void store_row(float* row, const float* acc, int cols, const Strip& s) {
  if (!s.first) {
    for (int j = 0; j < cols; ++j) row[j] += s.alpha * acc[j];
  } else if (s.beta_zero) {
    for (int j = 0; j < cols; ++j) row[j] = s.alpha * acc[j];
  } else {
    for (int j = 0; j < cols; ++j) row[j] = s.alpha * acc[j] + s.beta * row[j];
  }
}

// One full TM x TN block: the jammed loop with the block in registers. B_CONTIGUOUS: a
// row of op(B) is contiguous (B not transposed), so a register loads in one instruction.
template <bool B_CONTIGUOUS>
void full_block(const StridedView& a, const StridedView& b, float* c, std::int64_t ldc,
                std::int64_t i, std::int64_t j, const Strip& s) {
  Vec acc[kMr][kNv] = {};  // (TM, TN) in registers
  const float* a_col = a.data + i * a.rs;  // A(i, 0)
  const float* b_row = b.data + j * b.cs;  // B(0, j)
  for (std::int64_t p = s.p_begin; p < s.p_end; ++p) {
    const float* ap = a_col + p * a.cs;  // A(i.., p): (TM, 1)
    const float* bp = b_row + p * b.rs;  // B(p, j..): (1, TN)
    Vec bv[kNv];
    for (int v = 0; v < kNv; ++v) {
      if constexpr (B_CONTIGUOUS) {
        bv[v].copy_from(bp + v * kW, kVecAligned);
      } else {
        const std::int64_t stride = b.cs;
        const float* base = bp + v * kW * stride;
        bv[v] = Vec([&](auto lane) { return base[static_cast<std::int64_t>(lane) * stride]; });
      }
    }
    for (int r = 0; r < kMr; ++r) {
      const Vec x(ap[r * a.rs]);  // A(i + r, p) in every lane
      for (int v = 0; v < kNv; ++v) acc[r][v] += x * bv[v];
    }
  }
  for (int r = 0; r < kMr; ++r) {
    float row[kNr];
    for (int v = 0; v < kNv; ++v) acc[r][v].copy_to(row + v * kW, kVecAligned);
    store_row(c + (i + r) * ldc + j, row, kNr, s);
  }
}

// A partial block at the right or bottom edge: the same loop, scalar, run-time bounds.
void edge_block(const StridedView& a, const StridedView& b, float* c, std::int64_t ldc,
                std::int64_t i, std::int64_t j, int rows, int cols, const Strip& s) {
  float acc[kMr][kNr] = {};
  for (std::int64_t p = s.p_begin; p < s.p_end; ++p)
    for (int r = 0; r < rows; ++r) {
      const float av = a(i + r, p);
      for (int x = 0; x < cols; ++x) acc[r][x] += av * b(p, j + x);
    }
  for (int r = 0; r < rows; ++r) store_row(c + (i + r) * ldc + j, acc[r], cols, s);
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

Status run_register_tiled(const GemmProblem& problem, RunContext&) {
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
          if (rows < kMr || cols < kNr) edge_block(a, b, c, g.ldc, i, j, rows, cols, s);
          else if (b.cs == 1) full_block<true>(a, b, c, g.ldc, i, j, s);
          else full_block<false>(a, b, c, g.ldc, i, j, s);
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
  v.rung = 4;
  v.name = "register_tiled";
  v.backend = Backend::Cpu;
  v.technique = fmt::format("unroll-and-jam + scalar replacement: {}x{} block of C in registers", kMr, kNr);
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
