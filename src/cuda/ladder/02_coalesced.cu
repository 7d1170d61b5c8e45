// Rung 2 (cuda): the same work as naive, with threadIdx.x walking along a row of C. The
// 32 threads of a warp now read 32 consecutive elements of a row of B and write 32
// consecutive elements of C (one 128-byte transaction each), and all read the same
// element of A (a broadcast). CGMA is still 1; what changes is how many bytes each
// request drags in from DRAM (seed 001: coalesced vs permuted access).
#include "cuda/tiles/common.cuh"
#include "cuda/tiles/kernel_info.hpp"
#include "cuda/tiles/sub_grid.hpp"
#include "cuda/ladder/rungs.hpp"
#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda {
namespace {

constexpr int kBlockCols = 32;  // threadIdx.x: columns of C (consecutive addresses)
constexpr int kBlockRows = 8;   // threadIdx.y: rows of C
// Columns of C along x, rows along y: past 65,535 x 8 rows, sub-grids in sequence.
constexpr GridLimits kGrid = rows_on_y(kBlockRows, kBlockCols);

template <bool TransA, bool TransB>
__global__ void __launch_bounds__(kBlockRows * kBlockCols) coalesced_kernel(GemmArgs g) {
  const int col = blockIdx.x * kBlockCols + threadIdx.x;
  const int row = blockIdx.y * kBlockRows + threadIdx.y;
  if (row >= g.m || col >= g.n) return;
  float acc = 0.0f;
  for (int kk = 0; kk < g.k; ++kk) acc += load_a<TransA>(g, row, kk) * load_b<TransB>(g, kk, col);
  store_c(g, row, col, acc);
}

// One grid: a sub-problem within kGrid's limits.
Status launch(const RowMajorGemm& rm, cudaStream_t stream) {
  const GemmArgs g = make_args(rm);
  const dim3 block(kBlockCols, kBlockRows);
  const dim3 grid(ceil_div(g.n, kBlockCols), ceil_div(g.m, kBlockRows));
  dispatch_trans(rm.trans_a, rm.trans_b, [&](auto ta, auto tb) {
    coalesced_kernel<decltype(ta)::value, decltype(tb)::value><<<grid, block, 0, stream>>>(g);
  });
  CUDA_CHECK_LAUNCH("coalesced_kernel");
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
    return describe_kernel(out, coalesced_kernel<decltype(ta)::value, decltype(tb)::value>,
                           kernel_name("coalesced_kernel", rm.trans_a, rm.trans_b), kBlockRows * kBlockCols);
  });
}

}  // namespace

Variant coalesced_variant() {
  Variant v;
  v.rung = 2;
  v.name = "coalesced";
  v.backend = Backend::Cuda;
  v.technique = "warp walks a row of C: coalesced B loads and C stores, A broadcast";
  v.config = {{{"block_cols", kBlockCols}, {"block_rows", kBlockRows}}};
  v.can_implement = [](const GemmProblem& p) { return require_f32_simt(p, "coalesced"); };
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
