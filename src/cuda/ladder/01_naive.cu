// Rung 1 (cuda): the seeds' first kernel, one thread per element of C, every operand
// read from global memory. threadIdx.x walks down a column of C, so the 32 threads of a
// warp read 32 different rows of A and write 32 different rows of C: no coalescing.
// CGMA = 1 (two 4-byte loads per multiply-add).
#include "cuda/tiles/common.cuh"
#include "cuda/tiles/kernel_info.hpp"
#include "cuda/tiles/sub_grid.hpp"
#include "cuda/ladder/rungs.hpp"
#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda {
namespace {

constexpr int kBlockRows = 32;  // threadIdx.x: rows of C (the uncoalesced mapping)
constexpr int kBlockCols = 8;   // threadIdx.y: columns of C
// Rows of C along x, columns along y: past 65,535 x 8 columns, sub-grids in sequence.
constexpr GridLimits kGrid = cols_on_y(kBlockRows, kBlockCols);

template <bool TransA, bool TransB>
__global__ void __launch_bounds__(kBlockRows * kBlockCols) naive_kernel(GemmArgs g) {
  const int row = blockIdx.x * kBlockRows + threadIdx.x;
  const int col = blockIdx.y * kBlockCols + threadIdx.y;
  if (row >= g.m || col >= g.n) return;
  float acc = 0.0f;
  for (int kk = 0; kk < g.k; ++kk) acc += load_a<TransA>(g, row, kk) * load_b<TransB>(g, kk, col);
  store_c(g, row, col, acc);
}

// One grid: a sub-problem within kGrid's limits.
Status launch(const RowMajorGemm& rm, cudaStream_t stream) {
  const GemmArgs g = make_args(rm);
  const dim3 block(kBlockRows, kBlockCols);
  const dim3 grid(ceil_div(g.m, kBlockRows), ceil_div(g.n, kBlockCols));
  dispatch_trans(rm.trans_a, rm.trans_b, [&](auto ta, auto tb) {
    naive_kernel<decltype(ta)::value, decltype(tb)::value><<<grid, block, 0, stream>>>(g);
  });
  CUDA_CHECK_LAUNCH("naive_kernel");
  return Status::ok();
}

Status run(const GemmProblem& problem, Stream stream) {
  return for_each_sub_grid(canonicalize(problem), kGrid, sizeof(float), sizeof(float),
                           [&](const RowMajorGemm& sub) { return launch(sub, static_cast<cudaStream_t>(stream)); });
}

// For explain: the instantiation run() launches for this problem.
Status kernel_info(const GemmProblem& problem, KernelInfo& out) {
  const RowMajorGemm rm = canonicalize(problem);
  return dispatch_trans(rm.trans_a, rm.trans_b, [&](auto ta, auto tb) {
    return describe_kernel(out, naive_kernel<decltype(ta)::value, decltype(tb)::value>,
                           kernel_name("naive_kernel", rm.trans_a, rm.trans_b), kBlockRows * kBlockCols);
  });
}

}  // namespace

Variant naive_variant() {
  Variant v;
  v.rung = 1;
  v.name = "naive";
  v.backend = Backend::Cuda;
  v.technique = "one thread per C element, operands from global memory, uncoalesced";
  v.config = {{{"block_rows", kBlockRows}, {"block_cols", kBlockCols}}};
  v.can_implement = [](const GemmProblem& p) { return require_f32_simt(p, "naive"); };
  v.run = on_stream(run);
  v.kernel_info = kernel_info;
  v.model = [](const GemmProblem& p) {
    Traffic t = minimum_traffic(p);
    set_loads_per_fma(t, p, 2.0);
    t.threads_per_block = kBlockRows * kBlockCols;
    t.launches = launches(p, kGrid);
    return t;
  };
  return v;
}

}  // namespace gemmlab::cuda
