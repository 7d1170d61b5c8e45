// Rung 3 (cuda): the seeds' tiled kernel (seed 003 §4.3). A block computes a
// TILE_WIDTH x TILE_WIDTH tile of C; in each phase its threads load one tile of op(A)
// and one of op(B) into shared memory together, wait at a barrier, compute from shared
// memory, and wait again before the tiles are overwritten. Each element loaded from
// global memory is used TILE_WIDTH times: CGMA = TILE_WIDTH.
#include "cuda/tiles/common.cuh"
#include "cuda/tiles/kernel_info.hpp"
#include "cuda/ladder/rungs.hpp"
#include "cuda/tiles/smem_tiled.hpp"
#include "cuda/tiles/sub_grid.hpp"
#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda {
namespace {

// Padding = 0: the seeds' layout. The smem_padded rung reuses this kernel with
// Padding = 1 (see 04_smem_padded.cu).
template <int TileWidth, int Padding, bool TransA, bool TransB>
__global__ void __launch_bounds__(TileWidth * TileWidth) smem_tiled_kernel(GemmArgs g) {
  __shared__ float sA[TileWidth][TileWidth + Padding];  // (TILE rows of C, TILE k)
  __shared__ float sB[TileWidth][TileWidth + Padding];  // (TILE k, TILE cols of C)
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row0 = blockIdx.y * TileWidth, col0 = blockIdx.x * TileWidth;
  float acc = 0.0f;
  for (int k0 = 0; k0 < g.k; k0 += TileWidth) {
    // Loads stay coalesced whichever way an operand is stored: consecutive threadIdx.x
    // read consecutive addresses. For a transposed operand that means writing the tile
    // transposed into shared memory, a column at a time: the access that bank conflicts
    // punish unless the rows are padded.
    if (TransA) sA[tx][ty] = load_a<true>(g, row0 + tx, k0 + ty);
    else        sA[ty][tx] = load_a<false>(g, row0 + ty, k0 + tx);
    if (TransB) sB[tx][ty] = load_b<true>(g, k0 + tx, col0 + ty);
    else        sB[ty][tx] = load_b<false>(g, k0 + ty, col0 + tx);
    __syncthreads();  // the tiles are complete
#pragma unroll
    for (int kk = 0; kk < TileWidth; ++kk) acc += sA[ty][kk] * sB[kk][tx];
    __syncthreads();  // everyone is done with the tiles before the next phase overwrites them
  }
  store_c(g, row0 + ty, col0 + tx, acc);
}

// Tile columns along x, tile rows along y (at most 65,535), K in int steps of TileWidth:
// larger problems run as sub-grids in sequence.
constexpr GridLimits grid_limits(int tile_width) { return rows_on_y(tile_width, tile_width, kMaxKChunk); }

}  // namespace

template <int TileWidth, int Padding>
Status run_smem_tiled(const GemmArgs& args, bool trans_a, bool trans_b, cudaStream_t stream) {
  const auto launch = [&](const RowMajorGemm& sub) {
    const GemmArgs g = make_args(sub);
    const dim3 block(TileWidth, TileWidth);
    const dim3 grid(ceil_div(g.n, TileWidth), ceil_div(g.m, TileWidth));
    dispatch_trans(trans_a, trans_b, [&](auto ta, auto tb) {
      smem_tiled_kernel<TileWidth, Padding, decltype(ta)::value, decltype(tb)::value>
          <<<grid, block, 0, stream>>>(g);
    });
    CUDA_CHECK_LAUNCH("smem_tiled_kernel");
    return Status::ok();
  };
  return for_each_sub_grid(row_major_of(args, trans_a, trans_b), grid_limits(TileWidth), sizeof(float),
                           sizeof(float), launch);
}
template Status run_smem_tiled<16, 0>(const GemmArgs&, bool, bool, cudaStream_t);
template Status run_smem_tiled<32, 0>(const GemmArgs&, bool, bool, cudaStream_t);
template Status run_smem_tiled<32, 1>(const GemmArgs&, bool, bool, cudaStream_t);

// For explain: the instantiation run_smem_tiled launches for this problem.
template <int TileWidth, int Padding>
Status smem_tiled_kernel_info(const GemmProblem& problem, KernelInfo& out) {
  const RowMajorGemm rm = canonicalize(problem);
  const std::string name = kernel_name("smem_tiled_kernel", rm.trans_a, rm.trans_b,
                                       std::to_string(TileWidth) + ", " + std::to_string(Padding) + ", ");
  return dispatch_trans(rm.trans_a, rm.trans_b, [&](auto ta, auto tb) {
    return describe_kernel(out, smem_tiled_kernel<TileWidth, Padding, decltype(ta)::value, decltype(tb)::value>, name,
                           TileWidth * TileWidth);
  });
}
template Status smem_tiled_kernel_info<16, 0>(const GemmProblem&, KernelInfo&);
template Status smem_tiled_kernel_info<32, 0>(const GemmProblem&, KernelInfo&);
template Status smem_tiled_kernel_info<32, 1>(const GemmProblem&, KernelInfo&);

Traffic smem_tiled_model(const GemmProblem& p, int tile_width, int padding) {
  Traffic t = minimum_traffic(p);
  // Per phase each thread loads one element of A and one of B, then does TILE_WIDTH FMAs.
  set_loads_per_fma(t, p, 2.0 / tile_width);
  t.threads_per_block = tile_width * tile_width;
  t.smem_bytes_per_block = 2LL * tile_width * (tile_width + padding) * 4;
  t.launches = launches(p, grid_limits(tile_width));
  return t;
}

Variant smem_tiled_variant(int tile_width) {
  Variant v;
  v.rung = 3;
  v.name = tile_width == 16 ? "smem_tiled_16" : "smem_tiled_32";
  v.backend = Backend::Cuda;
  v.technique = "shared-memory tiles loaded together, two barriers per phase";
  v.config = {{{"TILE_WIDTH", tile_width}}};
  v.can_implement = [name = v.name](const GemmProblem& p) { return require_f32_simt(p, name.c_str()); };
  v.run = [tile_width](const GemmProblem& p, RunContext& context) {
    const RowMajorGemm rm = canonicalize(p);
    const auto s = static_cast<cudaStream_t>(context.stream());
    return tile_width == 16 ? run_smem_tiled<16, 0>(make_args(rm), rm.trans_a, rm.trans_b, s)
                            : run_smem_tiled<32, 0>(make_args(rm), rm.trans_a, rm.trans_b, s);
  };
  v.model = [tile_width](const GemmProblem& p) { return smem_tiled_model(p, tile_width, 0); };
  v.kernel_info = tile_width == 16 ? smem_tiled_kernel_info<16, 0> : smem_tiled_kernel_info<32, 0>;
  return v;
}

}  // namespace gemmlab::cuda
