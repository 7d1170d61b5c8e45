#include "cpu/blis/packed_gemm.hpp"

#include <algorithm>

namespace gemmlab::cpu {
namespace {

// Splits `count` items into `parts` near-equal contiguous ranges; returns range `index`.
struct Range {
  std::int64_t begin, end;
};
Range split(std::int64_t count, int parts, int index) {
  const std::int64_t base = count / parts, extra = count % parts;
  const std::int64_t begin = index * base + std::min<std::int64_t>(index, extra);
  return {begin, begin + base + (index < extra ? 1 : 0)};
}

// Block size for `extent` split into blocks of at most `max_block`, balanced, rounded up to
// a multiple of `quantum` (so 2049 with 256 gives 232, not 256 and a remainder of 1).
std::int64_t balanced_block(std::int64_t extent, std::int64_t max_block, std::int64_t quantum) {
  const std::int64_t blocks = ceil_div(extent, max_block);
  return std::min(max_block, round_up(ceil_div(extent, blocks), quantum));
}

// C(mr, nr) at c <- alpha * tile + beta * C for a partial tile; beta_zero: C never read.
void store_edge(const float* tile, int tile_ld, float* c, std::int64_t ldc, std::int64_t rows,
                std::int64_t cols, float alpha, float beta, bool beta_zero) {
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = c + r * ldc;
    const float* t = tile + r * tile_ld;
    if (beta_zero) {
      for (std::int64_t j = 0; j < cols; ++j) row[j] = alpha * t[j];
    } else {
      for (std::int64_t j = 0; j < cols; ++j) row[j] = alpha * t[j] + beta * row[j];
    }
  }
}

}  // namespace

TeamShape team_shape(int threads, std::int64_t m, std::int64_t n, const Blocking& b) {
  // Per step of k, the busiest thread multiplies rows_t x cols_t elements of C and packs its
  // rows_t rows of A itself (threads that share rows each pack them). Packing an element
  // costs about as much as kPackFmas multiply-adds (one cycle, two 8-wide FMA pipes).
  constexpr std::int64_t kPackFmas = 16;
  const std::int64_t row_panels = ceil_div(m, b.mr);
  const std::int64_t col_panels = ceil_div(std::min(n, b.nc), b.nr);
  TeamShape best{threads, threads, 1};
  std::int64_t best_cost = -1;
  for (int ic = threads; ic >= 1; --ic) {
    if (threads % ic != 0) continue;
    const int jr = threads / ic;
    const std::int64_t rows_t = ceil_div(row_panels, ic) * b.mr;
    const std::int64_t cols_t = ceil_div(col_panels, jr) * b.nr;
    const std::int64_t cost = rows_t * (cols_t + kPackFmas);
    if (best_cost < 0 || cost < best_cost) {  // ties keep the larger ic (less A packing)
      best = {threads, ic, jr};
      best_cost = cost;
    }
  }
  return best;
}

std::int64_t a_buffer_floats(const Blocking& b, std::int64_t m, std::int64_t k) {
  return round_up(std::min(m, b.mc), b.mr) * std::min(k, b.kc);
}

std::int64_t b_buffer_floats(const Blocking& b, std::int64_t n, std::int64_t k) {
  return round_up(std::min(n, b.nc), b.nr) * std::min(k, b.kc);
}

void packed_gemm_part(const PackedJob& job, int tid, float* a_buffer) {
  const RowMajorGemm& g = job.g;
  const Blocking& bk = job.blocking;
  const MicroKernel& kernel = *job.kernel;
  const int mr = bk.mr, nr = bk.nr;
  const StridedView a = view_a(g), b = view_b(g);
  auto* c = static_cast<float*>(g.c);
  const auto alpha = static_cast<float>(g.alpha);

  const std::int64_t nc_max = balanced_block(g.n, bk.nc, nr);
  const std::int64_t kc_max = balanced_block(g.k, bk.kc, 1);
  // This thread's rows of C, in whole MR panels, and its column slot among the panels.
  const int ic_id = tid / job.team.ways_jr, jr_id = tid % job.team.ways_jr;
  const Range panels = split(ceil_div(g.m, mr), job.team.ways_ic, ic_id);
  const std::int64_t row_begin = panels.begin * mr, row_end = std::min(panels.end * mr, g.m);
  const std::int64_t mc_max =
      row_end > row_begin ? balanced_block(row_end - row_begin, bk.mc, mr) : bk.mc;

  alignas(64) float tile[kMaxMr * kMaxNr];  // (MR, NR) for edge tiles
  int buffer = 0;
  for (std::int64_t jc = 0; jc < g.n; jc += nc_max) {
    const std::int64_t nc = std::min(nc_max, g.n - jc);
    const std::int64_t col_panels = ceil_div(nc, nr);
    const Range my_cols = split(col_panels, job.team.ways_jr, jr_id);
    for (std::int64_t pc = 0; pc < g.k; pc += kc_max) {
      const std::int64_t kc = std::min(kc_max, g.k - pc);
      const bool first = pc == 0;
      const float beta = first ? static_cast<float>(g.beta) : 1.0f;
      const bool beta_zero = first && g.beta == 0.0;

      // The team packs the B block together, then waits until every panel is in place.
      float* bp = job.b_buffers[buffer];
      buffer ^= 1;
      const Range my_pack = split(col_panels, job.team.threads, tid);
      pack_b(bp, b, pc, kc, jc, nc, nr, my_pack.begin, my_pack.end);
      if (job.barrier) job.barrier->arrive_and_wait();

      for (std::int64_t ic = row_begin; ic < row_end; ic += mc_max) {
        const std::int64_t mc = std::min(mc_max, row_end - ic);
        pack_a(a_buffer, a, ic, mc, pc, kc, mr);
        // One micro-tile: C(ic+ir .., jc+q*NR ..) += A micro-panel (MR, KC) * B panel q.
        auto micro_tile = [&](std::int64_t ir, std::int64_t q) {
          const std::int64_t jr = q * nr;
          const std::int64_t rows = std::min<std::int64_t>(mr, mc - ir);
          const std::int64_t cols = std::min<std::int64_t>(nr, nc - jr);
          const float* a_panel = a_buffer + ir * kc;  // (MR, KC)
          const float* b_panel = bp + q * nr * kc;    // (KC, NR)
          float* c_tile = c + (ic + ir) * g.ldc + jc + jr;
          if (rows == mr && cols == nr) {
            kernel.fn(kc, a_panel, b_panel, c_tile, g.ldc, alpha, beta_zero ? 0.0f : beta);
          } else {
            kernel.fn(kc, a_panel, b_panel, tile, nr, 1.0f, 0.0f);
            store_edge(tile, nr, c_tile, g.ldc, rows, cols, alpha, beta, beta_zero);
          }
        };
        if (kernel.l1_panel == L1Panel::B) {
          for (std::int64_t q = my_cols.begin; q < my_cols.end; ++q)  // B panel q in L1
            for (std::int64_t ir = 0; ir < mc; ir += mr) micro_tile(ir, q);
        } else {
          for (std::int64_t ir = 0; ir < mc; ir += mr)  // A panel ir in L1
            for (std::int64_t q = my_cols.begin; q < my_cols.end; ++q) micro_tile(ir, q);
        }
      }
      // No barrier here: the next B block goes to the other buffer, and the barrier after
      // packing it guarantees nobody still reads this one when it is packed again.
    }
  }
}

}  // namespace gemmlab::cpu
