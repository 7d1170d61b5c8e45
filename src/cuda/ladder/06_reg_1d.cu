// Rung 6 (cuda): register tiling in one dimension (seed 002's unroll-and-jam with scalar
// replacement). Each thread computes TM consecutive rows of one column of C: the element
// of B it reads from shared memory is kept in a register and reused TM times, and the
// TM partial sums live in registers. Shared-memory reads per FMA fall from 2 to 1 + 1/TM.
#include "cuda/tiles/common.cuh"
#include "cuda/tiles/kernel_info.hpp"
#include "cuda/tiles/sub_grid.hpp"
#include "cuda/ladder/rungs.hpp"
#include "cuda/tiles/tile_copy.cuh"
#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda {
namespace {

struct Reg1dConfig {
  static constexpr int BM = 64, BN = 64, BK = 8, TM = 8;
  static constexpr int kThreads = BM * BN / TM;  // one thread per TM x 1 strip of C
  static_assert(BM % TM == 0, "a block's rows split into whole strips");
  static_assert(kThreads % BN == 0 && kThreads <= 1024, "threads cover the tile");
};

// Tile columns along x, tile rows along y (at most 65,535), K in int steps of BK: larger
// problems run as sub-grids in sequence.
constexpr GridLimits kGrid = rows_on_y(Reg1dConfig::BM, Reg1dConfig::BN, kMaxKChunk);

template <bool TransA, bool TransB>
__global__ void __launch_bounds__(Reg1dConfig::kThreads) reg_1d_kernel(GemmArgs g) {
  using C = Reg1dConfig;
  __shared__ float sA[C::BM * C::BK];  // (BM, BK) row-major
  __shared__ float sB[C::BK * C::BN];  // (BK, BN) row-major
  using LayoutA = SmemLayout<C::BK, 1>;
  using LayoutB = SmemLayout<C::BN, 1>;
  const int tid = threadIdx.x;
  const int col = tid % C::BN;          // a warp spans 32 consecutive columns
  const int strip = tid / C::BN;        // which TM rows
  const int row0 = blockIdx.y * C::BM, col0 = blockIdx.x * C::BN;
  float acc[C::TM] = {};                // (TM) partial sums in registers
  for (int k0 = 0; k0 < g.k; k0 += C::BK) {
    copy_tile_scalar<C::BM, C::BK, C::kThreads, !TransA, LayoutA>(a_tile<TransA>(g, row0, k0), sA, tid);
    copy_tile_scalar<C::BK, C::BN, C::kThreads, !TransB, LayoutB>(b_tile<TransB>(g, k0, col0), sB, tid);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < C::BK; ++kk) {
      const float b = sB[LayoutB::offset(kk, col)];  // reused TM times from a register
#pragma unroll
      for (int i = 0; i < C::TM; ++i) acc[i] += sA[LayoutA::offset(strip * C::TM + i, kk)] * b;
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < C::TM; ++i) store_c(g, row0 + strip * C::TM + i, col0 + col, acc[i]);
}

// One grid: a sub-problem within kGrid's limits.
Status launch(const RowMajorGemm& rm, cudaStream_t stream) {
  using C = Reg1dConfig;
  const GemmArgs g = make_args(rm);
  const dim3 grid(ceil_div(g.n, C::BN), ceil_div(g.m, C::BM));
  dispatch_trans(rm.trans_a, rm.trans_b, [&](auto ta, auto tb) {
    reg_1d_kernel<decltype(ta)::value, decltype(tb)::value><<<grid, C::kThreads, 0, stream>>>(g);
  });
  CUDA_CHECK_LAUNCH("reg_1d_kernel");
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
    return describe_kernel(out, reg_1d_kernel<decltype(ta)::value, decltype(tb)::value>,
                           kernel_name("reg_1d_kernel", rm.trans_a, rm.trans_b), Reg1dConfig::kThreads);
  });
}

}  // namespace

Variant reg_1d_variant() {
  using C = Reg1dConfig;
  Variant v;
  v.rung = 6;
  v.name = "reg_1d";
  v.backend = Backend::Cuda;
  v.technique = "each thread a TM x 1 strip of C in registers, B element reused TM times";
  v.config = {{{"BM", C::BM}, {"BN", C::BN}, {"BK", C::BK}, {"TM", C::TM}}};
  v.can_implement = [](const GemmProblem& p) { return require_f32_simt(p, "reg_1d"); };
  v.run = on_stream(run);
  v.kernel_info = kernel_info;
  v.model = [](const GemmProblem& p) {
    Traffic t = minimum_traffic(p);
    // A block loads BM*BK + BK*BN words per BM*BN*BK FMAs.
    set_loads_per_fma(t, p, 1.0 / C::BN + 1.0 / C::BM);
    t.threads_per_block = C::kThreads;
    t.smem_bytes_per_block = (C::BM * C::BK + C::BK * C::BN) * 4;
    t.launches = launches(p, kGrid);
    return t;
  };
  return v;
}

}  // namespace gemmlab::cuda
