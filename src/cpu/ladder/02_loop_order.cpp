// Rung 2 (cpu): the same triple loop, permuted by seed 002's innermost-loop memory cost.
//
// CM(L) assumes loop L is innermost and sums, over the references C(i,j), op(A)(i,p),
// op(B)(p,j): 1 if the reference does not depend on L, N_L / cls if L walks it with unit
// stride (a cache line of cls = 16 floats serves 16 iterations), N_L otherwise. The loops
// are ordered by cost, the dearest outermost, the cheapest innermost. For row-major NN:
//   CM(I) = 2m + 1  (C and A walk columns),  CM(K) = k + k/16 + 1  (B walks a column),
//   CM(J) = 2n/16 + 1  (C and B walk rows)  ->  order i, k, j:  C(i,:) += A(i,p) * B(p,:).
// The costs are computed per problem from the canonical strides, so transposed operands
// get their own best order (NT: i, j, k, a dot product of two contiguous rows).
#include <array>

#include "core/traffic.hpp"
#include "cpu/blis/operands.hpp"
#include "cpu/ladder/rungs.hpp"

namespace gemmlab::cpu {
namespace {

constexpr double kLineFloats = 16;  // cls: a 64-byte line of floats

// Cost of one reference with stride `s` along the candidate innermost loop of `extent`.
double reference_cost(std::int64_t stride, std::int64_t extent) {
  const auto n = static_cast<double>(extent);
  if (stride == 0) return 1.0;
  return stride == 1 || stride == -1 ? n / kLineFloats : n;
}

}  // namespace

LoopOrder choose_loop_order(const RowMajorGemm& g) {
  const StridedView a = view_a(g), b = view_b(g);
  // Strides of C(i,j), A(i,p), B(p,j) along i, j and p.
  const std::array<std::int64_t, 3> extent{g.m, g.n, g.k};
  const std::array<std::array<std::int64_t, 3>, 3> stride{{
      {g.ldc, a.rs, 0},     // along i: C, A, B
      {1, 0, b.cs},         // along j
      {0, a.cs, b.rs},      // along p
  }};
  LoopOrder order;
  for (int loop = 0; loop < 3; ++loop) {
    double cost = 0;
    for (int ref = 0; ref < 3; ++ref) cost += reference_cost(stride[loop][ref], extent[loop]);
    order.cost[loop] = cost;
  }
  // Dearest outermost; ties keep the order j (innermost), p, i.
  std::array<int, 3> loops{0, 2, 1};  // i, p, j: seed 002's answer for row-major NN
  for (int x = 0; x < 3; ++x)
    for (int y = x + 1; y < 3; ++y)
      if (order.cost[loops[y]] > order.cost[loops[x]]) std::swap(loops[x], loops[y]);
  order.loops = loops;
  return order;
}

namespace {

// The innermost loop, for fixed values of the other two indices (idx: i, j, p).
template <int Inner>
void innermost(const RowMajorGemm& g, const StridedView& a, const StridedView& b, float* c,
               float alpha, const std::array<std::int64_t, 3>& idx) {
  const std::int64_t i = idx[0], j = idx[1], p = idx[2];
  if constexpr (Inner == 1) {  // j: C(i, :) += alpha A(i, p) B(p, :)
    const float s = alpha * a(i, p);
    float* crow = c + i * g.ldc;
    const float* brow = b.data + p * b.rs;
    if (b.cs == 1) {
      for (std::int64_t jj = 0; jj < g.n; ++jj) crow[jj] += s * brow[jj];
    } else {
      for (std::int64_t jj = 0; jj < g.n; ++jj) crow[jj] += s * brow[jj * b.cs];
    }
  } else if constexpr (Inner == 2) {  // p: C(i, j) += alpha A(i, :) . B(:, j)
    const float* arow = a.data + i * a.rs;
    const float* bcol = b.data + j * b.cs;
    float sum = 0.0f;
    for (std::int64_t pp = 0; pp < g.k; ++pp) sum += arow[pp * a.cs] * bcol[pp * b.rs];
    c[i * g.ldc + j] += alpha * sum;
  } else {  // i: C(:, j) += alpha A(:, p) B(p, j)
    const float s = alpha * b(p, j);
    const float* acol = a.data + p * a.cs;
    for (std::int64_t ii = 0; ii < g.m; ++ii) c[ii * g.ldc + j] += s * acol[ii * a.rs];
  }
}

template <int Inner>
void nest(const RowMajorGemm& g, const LoopOrder& order, float alpha) {
  const StridedView a = view_a(g), b = view_b(g);
  auto* c = static_cast<float*>(g.c);
  const std::array<std::int64_t, 3> extent{g.m, g.n, g.k};
  const int outer = order.loops[0], middle = order.loops[1];
  std::array<std::int64_t, 3> idx{0, 0, 0};
  for (idx[outer] = 0; idx[outer] < extent[outer]; ++idx[outer])
    for (idx[middle] = 0; idx[middle] < extent[middle]; ++idx[middle])
      innermost<Inner>(g, a, b, c, alpha, idx);
}

Status run_loop_order(const GemmProblem& problem, RunContext&) {
  const RowMajorGemm g = canonicalize(problem);
  scale_block(static_cast<float*>(g.c), g.ldc, g.m, g.n, g.beta);  // C <- beta C, then accumulate
  const LoopOrder order = choose_loop_order(g);
  const auto alpha = static_cast<float>(g.alpha);
  switch (order.loops[2]) {
    case 0: nest<0>(g, order, alpha); break;
    case 1: nest<1>(g, order, alpha); break;
    default: nest<2>(g, order, alpha); break;
  }
  return Status::ok();
}

}  // namespace

Variant loop_order_variant() {
  Variant v;
  v.rung = 2;
  v.name = "loop_order";
  v.backend = Backend::Cpu;
  v.technique = "loops permuted by seed 002's innermost cost CM (ikj for row-major NN)";
  v.threads = 1;
  v.can_implement = [](const GemmProblem& p) { return require_f32_host(p, "loop_order"); };
  v.run = run_loop_order;
  v.model = [](const GemmProblem& p) {
    // Seed 002's view: cache lines the innermost loop touches, times the iterations of
    // the two loops around it, as bytes; every line is assumed to come from memory.
    Traffic t = minimum_traffic(p);
    const RowMajorGemm g = canonicalize(p);
    const LoopOrder order = choose_loop_order(g);
    const std::array<double, 3> extent{static_cast<double>(g.m), static_cast<double>(g.n),
                                       static_cast<double>(g.k)};
    const int inner = order.loops[2];
    const double lines = order.cost[inner] * extent[0] * extent[1] * extent[2] / extent[inner];
    t.global_load_bytes = lines * 64.0;
    t.cgma = t.flops / (t.global_load_bytes / 4.0);
    return t;
  };
  return v;
}

}  // namespace gemmlab::cpu
