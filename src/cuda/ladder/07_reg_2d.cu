// Rung 7 (cuda): register tiling in two dimensions. Each thread computes a TM x TN block
// of C as outer products: per step of k it reads TM elements of A and TN of B from shared
// memory into registers and does TM * TN FMAs with them (seed 002's unroll-and-jam in
// both i and j). Shared-memory reads per FMA: 1/TN + 1/TM. Larger block tiles (BM x BN)
// also raise the CGMA ratio: each word loaded from global memory feeds BN (or BM) FMAs.
#include "cuda/tiles/common.cuh"
#include "cuda/tiles/kernel_info.hpp"
#include "cuda/tiles/sub_grid.hpp"
#include "cuda/ladder/rungs.hpp"
#include "cuda/tiles/tile_copy.cuh"
#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda {
namespace {

struct Reg2dConfig {
  static constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
  static constexpr int kThreads = (BM / TM) * (BN / TN);
  static_assert(BM % TM == 0 && BN % TN == 0, "thread tiles cover the block tile");
};

// Tile columns along x, tile rows along y (at most 65,535), K in int steps of BK: larger
// problems run as sub-grids in sequence.
constexpr GridLimits kGrid = rows_on_y(Reg2dConfig::BM, Reg2dConfig::BN, kMaxKChunk);

template <bool TransA, bool TransB>
__global__ void __launch_bounds__(Reg2dConfig::kThreads) reg_2d_kernel(GemmArgs g) {
  using C = Reg2dConfig;
  __shared__ float sA[C::BM * C::BK];  // (BM, BK) row-major
  __shared__ float sB[C::BK * C::BN];  // (BK, BN) row-major
  using LayoutA = SmemLayout<C::BK, 1>;
  using LayoutB = SmemLayout<C::BN, 1>;
  const int tid = threadIdx.x;
  const int ty = tid / (C::BN / C::TN), tx = tid % (C::BN / C::TN);
  const int row0 = blockIdx.y * C::BM, col0 = blockIdx.x * C::BN;
  float acc[C::TM][C::TN] = {};  // (TM, TN) of C in registers
  float rA[C::TM], rB[C::TN];    // one column of the A tile, one row of the B tile
  for (int k0 = 0; k0 < g.k; k0 += C::BK) {
    copy_tile_scalar<C::BM, C::BK, C::kThreads, !TransA, LayoutA>(a_tile<TransA>(g, row0, k0), sA, tid);
    copy_tile_scalar<C::BK, C::BN, C::kThreads, !TransB, LayoutB>(b_tile<TransB>(g, k0, col0), sB, tid);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < C::BK; ++kk) {
#pragma unroll
      for (int i = 0; i < C::TM; ++i) rA[i] = sA[LayoutA::offset(ty * C::TM + i, kk)];
#pragma unroll
      for (int j = 0; j < C::TN; ++j) rB[j] = sB[LayoutB::offset(kk, tx * C::TN + j)];
#pragma unroll
      for (int i = 0; i < C::TM; ++i)
#pragma unroll
        for (int j = 0; j < C::TN; ++j) acc[i][j] += rA[i] * rB[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < C::TM; ++i)
#pragma unroll
    for (int j = 0; j < C::TN; ++j) store_c(g, row0 + ty * C::TM + i, col0 + tx * C::TN + j, acc[i][j]);
}

// One grid: a sub-problem within kGrid's limits.
Status launch(const RowMajorGemm& rm, cudaStream_t stream) {
  using C = Reg2dConfig;
  const GemmArgs g = make_args(rm);
  const dim3 grid(ceil_div(g.n, C::BN), ceil_div(g.m, C::BM));
  dispatch_trans(rm.trans_a, rm.trans_b, [&](auto ta, auto tb) {
    reg_2d_kernel<decltype(ta)::value, decltype(tb)::value><<<grid, C::kThreads, 0, stream>>>(g);
  });
  CUDA_CHECK_LAUNCH("reg_2d_kernel");
  return Status::ok();
}

Status run(const GemmProblem& p, Stream stream) {
  return for_each_sub_grid(canonicalize(p), kGrid, sizeof(float), sizeof(float),
                           [&](const RowMajorGemm& sub) { return launch(sub, static_cast<cudaStream_t>(stream)); });
}

// For explain: the instantiation run() launches for this problem.
Status kernel_info(const GemmProblem& problem, KernelInfo& out) {
  const RowMajorGemm rm = canonicalize(problem);
  return dispatch_trans(rm.trans_a, rm.trans_b, [&](auto ta, auto tb) {
    return describe_kernel(out, reg_2d_kernel<decltype(ta)::value, decltype(tb)::value>,
                           kernel_name("reg_2d_kernel", rm.trans_a, rm.trans_b), Reg2dConfig::kThreads);
  });
}

}  // namespace

Variant reg_2d_variant() {
  using C = Reg2dConfig;
  Variant v;
  v.rung = 7;
  v.name = "reg_2d";
  v.backend = Backend::Cuda;
  v.technique = "each thread a TM x TN block of C: outer products from registers";
  v.config = {{{"BM", C::BM}, {"BN", C::BN}, {"BK", C::BK}, {"TM", C::TM}, {"TN", C::TN}}};
  v.can_implement = [](const GemmProblem& p) { return require_f32_simt(p, "reg_2d"); };
  v.run = on_stream(run);
  v.kernel_info = kernel_info;
  v.model = [](const GemmProblem& p) {
    Traffic t = minimum_traffic(p);
    set_loads_per_fma(t, p, 1.0 / C::BN + 1.0 / C::BM);
    t.threads_per_block = C::kThreads;
    t.smem_bytes_per_block = (C::BM * C::BK + C::BK * C::BN) * 4;
    t.launches = launches(p, kGrid);
    return t;
  };
  return v;
}

}  // namespace gemmlab::cuda
