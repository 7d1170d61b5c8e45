// Rung 9 (cuda): block -> warp -> thread tiling. The block tile is split into warp tiles
// and each warp's lanes into an 8 x 4 grid of thread tiles made of 4 x 4 pieces (see
// warp_tile.cuh). A warp's shared-memory reads then touch a compact WM x WN region:
// every fragment read is a conflict-free float4, and each element read is shared by the
// lanes of the other dimension (broadcast). BK doubles to 16 to halve the barriers.
#include "cuda/tiles/common.cuh"
#include "cuda/tiles/kernel_info.hpp"
#include "cuda/tiles/sub_grid.hpp"
#include "cuda/ladder/rungs.hpp"
#include "cuda/tiles/tile_copy.cuh"
#include "cuda/tiles/warp_tile.cuh"
#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda {
namespace {

using WarptileConfig = WarpTileConfig</*BM=*/128, /*BN=*/128, /*BK=*/16, /*WM=*/64, /*WN=*/32>;
constexpr int kPad = 4;  // keeps rows 16-byte aligned; staggers the transposing stores
// Tile columns along x, tile rows along y (at most 65,535), K in int steps of BK: larger
// problems run as sub-grids in sequence.
constexpr GridLimits kGrid = rows_on_y(WarptileConfig::BM, WarptileConfig::BN, kMaxKChunk);

template <bool TransA, bool TransB, bool Vec>
__global__ void __launch_bounds__(WarptileConfig::kThreads) warptile_kernel(GemmArgs g, bool vec_c) {
  using C = WarptileConfig;
  using LayoutA = SmemLayout<1, C::BM + kPad>;  // (m, k) at k * (BM + pad) + m: k-major
  using LayoutB = SmemLayout<C::BN + kPad, 1>;  // (k, n) at k * (BN + pad) + n
  __shared__ alignas(16) float sA[C::BK * (C::BM + kPad)];  // (BK, BM)
  __shared__ alignas(16) float sB[C::BK * (C::BN + kPad)];  // (BK, BN)
  StagedTileCopy<C::BM, C::BK, C::kThreads, !TransA, Vec> copy_a;
  StagedTileCopy<C::BK, C::BN, C::kThreads, !TransB, Vec> copy_b;
  WarpTileMma<C, LayoutA, LayoutB> mma;
  const int tid = threadIdx.x;
  mma.init(tid);
  const int row0 = blockIdx.y * C::BM, col0 = blockIdx.x * C::BN;
  for (int k0 = 0; k0 < g.k; k0 += C::BK) {
    copy_a.load(a_tile<TransA>(g, row0, k0), tid);
    copy_b.load(b_tile<TransB>(g, k0, col0), tid);
    copy_a.template store<LayoutA>(sA, tid);
    copy_b.template store<LayoutB>(sB, tid);
    __syncthreads();
    mma.compute(sA, sB);
    __syncthreads();
  }
  mma.store(g, row0, col0, vec_c);
}

// One grid: a sub-problem within kGrid's limits (its bases moved by whole tiles: aligned
// as the problem's are).
Status launch(const RowMajorGemm& rm, cudaStream_t s) {
  using C = WarptileConfig;
  const GemmArgs g = make_args(rm);
  const dim3 grid(ceil_div(g.n, C::BN), ceil_div(g.m, C::BM));
  const bool vec_ab = rows_16b_aligned(g.a, g.lda) && rows_16b_aligned(g.b, g.ldb);
  const bool vec_c = rows_16b_aligned(g.c, g.ldc);
  dispatch_trans(rm.trans_a, rm.trans_b, [&](auto ta, auto tb) {
    constexpr bool kTa = decltype(ta)::value, kTb = decltype(tb)::value;
    if (vec_ab) warptile_kernel<kTa, kTb, true><<<grid, C::kThreads, 0, s>>>(g, vec_c);
    else warptile_kernel<kTa, kTb, false><<<grid, C::kThreads, 0, s>>>(g, vec_c);
  });
  CUDA_CHECK_LAUNCH("warptile_kernel");
  return Status::ok();
}

Status run(const GemmProblem& p, Stream stream) {
  return for_each_sub_grid(canonicalize(p), kGrid, sizeof(float), sizeof(float),
                           [&](const RowMajorGemm& sub) { return launch(sub, static_cast<cudaStream_t>(stream)); });
}

// For explain: the instantiation run() launches for this problem (float4 loads when A's
// and B's rows are 16-byte aligned, as in run()).
Status kernel_info(const GemmProblem& problem, KernelInfo& out) {
  const RowMajorGemm rm = canonicalize(problem);
  const GemmArgs g = make_args(rm);
  const bool vec_ab = rows_16b_aligned(g.a, g.lda) && rows_16b_aligned(g.b, g.ldb);
  const std::string name = kernel_name("warptile_kernel", rm.trans_a, rm.trans_b) + (vec_ab ? " float4" : " scalar");
  return dispatch_trans(rm.trans_a, rm.trans_b, [&](auto ta, auto tb) {
    constexpr bool kTa = decltype(ta)::value, kTb = decltype(tb)::value;
    return vec_ab ? describe_kernel(out, warptile_kernel<kTa, kTb, true>, name, WarptileConfig::kThreads)
                  : describe_kernel(out, warptile_kernel<kTa, kTb, false>, name, WarptileConfig::kThreads);
  });
}

}  // namespace

Variant warptile_variant() {
  using C = WarptileConfig;
  Variant v;
  v.rung = 9;
  v.name = "warptile";
  v.backend = Backend::Cuda;
  v.technique = "block -> warp -> thread tiles of 4x4 pieces: conflict-free float4 fragments";
  v.config = {{{"BM", C::BM}, {"BN", C::BN}, {"BK", C::BK}, {"WM", C::WM}, {"WN", C::WN},
               {"TM", C::TM}, {"TN", C::TN}, {"threads", C::kThreads}}};
  v.can_implement = [](const GemmProblem& p) { return require_f32_simt(p, "warptile"); };
  v.run = on_stream(run);
  v.kernel_info = kernel_info;
  v.model = [](const GemmProblem& p) {
    Traffic t = minimum_traffic(p);
    set_loads_per_fma(t, p, 1.0 / C::BN + 1.0 / C::BM);
    t.threads_per_block = C::kThreads;
    t.smem_bytes_per_block = C::BK * (C::BM + C::BN + 2 * kPad) * 4;
    t.launches = launches(p, kGrid);
    return t;
  };
  return v;
}

}  // namespace gemmlab::cuda
