// Rung 8 (cuda): 16-byte accesses. Global loads are float4 (one instruction moves four
// elements; rows must be 16-byte aligned, otherwise the same kernel loads element by
// element), the A tile is stored transposed in shared memory, (BK, BM), so that a
// thread's TM elements of A for one k are contiguous, and both fragments are read with
// 16-byte shared loads: 4 instructions per step of k instead of 16.
#include "cuda/tiles/common.cuh"
#include "cuda/tiles/kernel_info.hpp"
#include "cuda/tiles/sub_grid.hpp"
#include "cuda/ladder/rungs.hpp"
#include "cuda/tiles/tile_copy.cuh"
#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda {
namespace {

struct VectorizedConfig {
  static constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
  static constexpr int kPad = 4;  // keeps 16-byte alignment of rows; spreads transposed stores
  static constexpr int kThreads = (BM / TM) * (BN / TN);
  static_assert(TM % 4 == 0 && TN % 4 == 0, "fragments are read as float4");
};

// Tile columns along x, tile rows along y (at most 65,535), K in int steps of BK: larger
// problems run as sub-grids in sequence.
constexpr GridLimits kGrid = rows_on_y(VectorizedConfig::BM, VectorizedConfig::BN, kMaxKChunk);

template <bool TransA, bool TransB, bool Vec>
__global__ void __launch_bounds__(VectorizedConfig::kThreads) vectorized_kernel(GemmArgs g, bool vec_c) {
  using C = VectorizedConfig;
  __shared__ alignas(16) float sA[C::BK * (C::BM + C::kPad)];  // (BK, BM): A transposed
  __shared__ alignas(16) float sB[C::BK * (C::BN + C::kPad)];  // (BK, BN)
  using LayoutA = SmemLayout<1, C::BM + C::kPad>;  // element (m, k) at k * (BM + pad) + m
  using LayoutB = SmemLayout<C::BN + C::kPad, 1>;  // element (k, n) at k * (BN + pad) + n
  StagedTileCopy<C::BM, C::BK, C::kThreads, !TransA, Vec> copy_a;
  StagedTileCopy<C::BK, C::BN, C::kThreads, !TransB, Vec> copy_b;
  const int tid = threadIdx.x;
  const int ty = tid / (C::BN / C::TN), tx = tid % (C::BN / C::TN);
  const int row0 = blockIdx.y * C::BM, col0 = blockIdx.x * C::BN;
  float acc[C::TM][C::TN] = {};
  float rA[C::TM], rB[C::TN];
  for (int k0 = 0; k0 < g.k; k0 += C::BK) {
    copy_a.load(a_tile<TransA>(g, row0, k0), tid);
    copy_b.load(b_tile<TransB>(g, k0, col0), tid);
    copy_a.template store<LayoutA>(sA, tid);
    copy_b.template store<LayoutB>(sB, tid);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < C::BK; ++kk) {
#pragma unroll
      for (int i = 0; i < C::TM; i += 4)
        *reinterpret_cast<float4*>(&rA[i]) =
            *reinterpret_cast<const float4*>(&sA[LayoutA::offset(ty * C::TM + i, kk)]);
#pragma unroll
      for (int j = 0; j < C::TN; j += 4)
        *reinterpret_cast<float4*>(&rB[j]) =
            *reinterpret_cast<const float4*>(&sB[LayoutB::offset(kk, tx * C::TN + j)]);
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
    for (int j = 0; j < C::TN; j += 4)
      store_c4(g, row0 + ty * C::TM + i, col0 + tx * C::TN + j,
               make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]), vec_c);
}

// One grid: a sub-problem within kGrid's limits (its bases moved by whole tiles: aligned
// as the problem's are).
Status launch(const RowMajorGemm& rm, cudaStream_t s) {
  using C = VectorizedConfig;
  const GemmArgs g = make_args(rm);
  const dim3 grid(ceil_div(g.n, C::BN), ceil_div(g.m, C::BM));
  // One flag for both operands: halves the instantiations; a misaligned operand is rare.
  const bool vec_ab = rows_16b_aligned(g.a, g.lda) && rows_16b_aligned(g.b, g.ldb);
  const bool vec_c = rows_16b_aligned(g.c, g.ldc);
  dispatch_trans(rm.trans_a, rm.trans_b, [&](auto ta, auto tb) {
    constexpr bool kTa = decltype(ta)::value, kTb = decltype(tb)::value;
    if (vec_ab) vectorized_kernel<kTa, kTb, true><<<grid, C::kThreads, 0, s>>>(g, vec_c);
    else vectorized_kernel<kTa, kTb, false><<<grid, C::kThreads, 0, s>>>(g, vec_c);
  });
  CUDA_CHECK_LAUNCH("vectorized_kernel");
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
  const std::string name = kernel_name("vectorized_kernel", rm.trans_a, rm.trans_b) + (vec_ab ? " float4" : " scalar");
  return dispatch_trans(rm.trans_a, rm.trans_b, [&](auto ta, auto tb) {
    constexpr bool kTa = decltype(ta)::value, kTb = decltype(tb)::value;
    return vec_ab ? describe_kernel(out, vectorized_kernel<kTa, kTb, true>, name, VectorizedConfig::kThreads)
                  : describe_kernel(out, vectorized_kernel<kTa, kTb, false>, name, VectorizedConfig::kThreads);
  });
}

}  // namespace

Variant vectorized_variant() {
  using C = VectorizedConfig;
  Variant v;
  v.rung = 8;
  v.name = "vectorized";
  v.backend = Backend::Cuda;
  v.technique = "float4 global and shared accesses, A transposed in shared memory";
  v.config = {{{"BM", C::BM}, {"BN", C::BN}, {"BK", C::BK}, {"TM", C::TM}, {"TN", C::TN}, {"pad", C::kPad}}};
  v.can_implement = [](const GemmProblem& p) { return require_f32_simt(p, "vectorized"); };
  v.run = on_stream(run);
  v.kernel_info = kernel_info;
  v.model = [](const GemmProblem& p) {
    Traffic t = minimum_traffic(p);
    set_loads_per_fma(t, p, 1.0 / C::BN + 1.0 / C::BM);
    t.threads_per_block = C::kThreads;
    t.smem_bytes_per_block = C::BK * (C::BM + C::BN + 2 * C::kPad) * 4;
    t.launches = launches(p, kGrid);
    return t;
  };
  return v;
}

}  // namespace gemmlab::cuda
