// Rung wgmma_ws_bf16: bf16 inputs, f32 accumulation and output, on Hopper's tensor cores
// fed by the tensor memory accelerator, with the warps specialised.
//
// The seeds' lesson — move each tile once into fast memory, reuse it many times — at the
// scale the tensor cores need. A block owns a 128 x 256 tile of C (CGMA 2·128·256/(128+256)
// = 171 flops per element loaded) and is persistent: one block per SM walks the tiles in
// grouped order (kGroupM tile rows at a time, so the A rows and B columns in flight stay
// in L2). Inside it, one producer warp only issues TMA copies (cp.async.bulk.tensor) of
// 128 x 64 A and 64 x 256 B tiles into a ring of kStages shared-memory stages, each
// completing on a "full" mbarrier with its byte count; two consumer warpgroups each
// multiply their 64 rows by the whole B tile with wgmma.m64n256k16 straight from shared
// memory (128-byte swizzled, conflict-free) and hand the stage back on an "empty" mbarrier
// as soon as the tensor cores are done with it. setmaxnreg moves registers from the
// producer (which needs few) to the consumers (128 f32 accumulators each). The epilogue
// applies alpha and beta from registers while the producer already loads the next tile.
//
// Any shape: TMA zero-fills what lies outside A and B (ragged M, N and K cost nothing
// extra), stores are predicated. Layouts: an operand whose K is contiguous is read
// K-major; otherwise it is loaded as 64-wide MN chunks and read MN-major (the
// transposition bits of wgmma, available for 16-bit types). TMA needs 16-byte aligned
// bases and row pitches: other operands are refused by can_implement with the reason.
#include <cuda.h>
#include <cuda_bf16.h>

#include <cuda/ptx>

#include <algorithm>
#include <string>

#include "core/traffic.hpp"
#include "cuda/arch/wgmma.cuh"
#include "cuda/gemm/common.cuh"
#include "cuda/gemm/kernel_info.hpp"
#include "cuda/gemm/rungs.hpp"
#include "cuda/gemm/warp_tile.cuh"
#include "cuda/runtime/check.hpp"
#include "cuda/runtime/tensor_map.hpp"

namespace gemmlab::cuda {
namespace {

namespace ptx = ::cuda::ptx;

constexpr int kBM = 128, kBN = 256, kBK = 64;  // block tile; kBK bf16 = one 128-byte swizzled row
constexpr int kStages = 4;
constexpr int kConsumers = 2;                    // warpgroups of 64 rows each
constexpr int kWarpgroup = 128;
constexpr int kThreads = kWarpgroup * (kConsumers + 1);
constexpr int kChunk = 64;                       // elements in one 128-byte swizzled row
constexpr int kChunkBytes = kChunk * kBK * 2;    // a 64 (MN) x 64 (K) chunk: 8 KiB
constexpr int kABytes = kBM * kBK * 2;           // 16 KiB
constexpr int kBBytes = kBN * kBK * 2;           // 32 KiB
constexpr int kStageBytes = kABytes + kBBytes;
constexpr int kAtomBytes = 1024;                 // 8 rows x 128 bytes: the swizzle atom
constexpr int kSmemBytes = kStages * kStageBytes + kAtomBytes;  // + slack to align the ring
constexpr int kGroupM = 8;
constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;
constexpr int kKSteps = kBK / 16;                // wgmma k16 steps per stage
static_assert(kProducerRegisters * kWarpgroup + kConsumerRegisters * kWarpgroup * kConsumers <= 65536,
              "register file of one SM");

struct Epilogue {
  float* c;
  long long ldc;
  int m, n, k;
  float alpha, beta;
};

// Shared-memory descriptor of the A rows this warpgroup multiplies, k16 step `kk`.
template <bool TransA>
__device__ __forceinline__ std::uint64_t a_descriptor(const unsigned char* a_stage, int warpgroup, int kk) {
  if constexpr (!TransA)  // K-major: rows of 64 k, 8-row groups 1 KiB apart; k16 = 32 bytes on
    return arch::smem_descriptor_sw128(a_stage + warpgroup * 64 * 128 + kk * 32, 16, kAtomBytes);
  else  // M-major: chunk `warpgroup` holds these 64 rows; 8 k-rows per 1 KiB atom
    return arch::smem_descriptor_sw128(a_stage + warpgroup * kChunkBytes + kk * 2 * kAtomBytes, kChunkBytes,
                                       kAtomBytes);
}

template <bool TransB>
__device__ __forceinline__ std::uint64_t b_descriptor(const unsigned char* b_stage, int kk) {
  if constexpr (TransB)  // B stored n x k: K-major, 256 rows of 64 k
    return arch::smem_descriptor_sw128(b_stage + kk * 32, 16, kAtomBytes);
  else  // B stored k x n: N-major, four 64-wide chunks 8 KiB apart
    return arch::smem_descriptor_sw128(b_stage + kk * 2 * kAtomBytes, kChunkBytes, kAtomBytes);
}

// One stage's copies: A (128 x 64) and B (64 x 256), as one box or as 64-wide chunks.
template <bool TransA, bool TransB>
__device__ __forceinline__ void load_stage(const CUtensorMap* map_a, const CUtensorMap* map_b, unsigned char* stage,
                                           std::uint64_t* full, int m0, int n0, int k0) {
  ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, full, kStageBytes);
  unsigned char* a = stage;
  unsigned char* b = stage + kABytes;
  if constexpr (!TransA) {
    const std::int32_t at[2] = {k0, m0};  // A is m x k: (column k, row m)
    ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, a, map_a, at, full);
  } else {
#pragma unroll
    for (int h = 0; h < kBM / kChunk; ++h) {
      const std::int32_t at[2] = {m0 + h * kChunk, k0};  // A stored k x m
      ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, a + h * kChunkBytes, map_a, at, full);
    }
  }
  if constexpr (TransB) {
    const std::int32_t at[2] = {k0, n0};  // B stored n x k
    ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, b, map_b, at, full);
  } else {
#pragma unroll
    for (int q = 0; q < kBN / kChunk; ++q) {
      const std::int32_t at[2] = {n0 + q * kChunk, k0};  // B stored k x n
      ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, b + q * kChunkBytes, map_b, at, full);
    }
  }
}

// C(row, col..col+1) <- alpha * acc + beta * C, predicated; a float2 store where aligned.
__device__ __forceinline__ void store_pair(const Epilogue& e, int row, int col, float v0, float v1) {
  if (row >= e.m || col >= e.n) return;
  float* p = e.c + static_cast<long long>(row) * e.ldc + col;
  const bool both = col + 1 < e.n;
  if (both && (reinterpret_cast<std::uintptr_t>(p) % 8 == 0)) {
    float2 r = make_float2(e.alpha * v0, e.alpha * v1);
    if (e.beta != 0.0f) {
      const float2 old = *reinterpret_cast<const float2*>(p);
      r.x = fmaf(e.beta, old.x, r.x);
      r.y = fmaf(e.beta, old.y, r.y);
    }
    *reinterpret_cast<float2*>(p) = r;
    return;
  }
  p[0] = e.beta != 0.0f ? fmaf(e.beta, p[0], e.alpha * v0) : e.alpha * v0;
  if (both) p[1] = e.beta != 0.0f ? fmaf(e.beta, p[1], e.alpha * v1) : e.alpha * v1;
}

template <bool TransA, bool TransB>
__global__ void __launch_bounds__(kThreads, 1)
    wgmma_ws_bf16_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                         Epilogue e) {
  extern __shared__ unsigned char smem_raw[];
  // The swizzle pattern is a function of the address: every stage starts on an atom.
  unsigned char* ring = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + kAtomBytes - 1) / kAtomBytes * kAtomBytes);
  __shared__ std::uint64_t full[kStages], empty[kStages];

  const int warpgroup = threadIdx.x / kWarpgroup;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      ptx::mbarrier_init(&full[s], 1);                    // the producer's expect_tx arrival
      ptx::mbarrier_init(&empty[s], kConsumers * 4);      // one arrival per consumer warp
    }
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();

  const int tiles_m = ceil_div(e.m, kBM), tiles_n = ceil_div(e.n, kBN);
  const int tiles = tiles_m * tiles_n;
  const int k_tiles = ceil_div(e.k, kBK);

  if (warpgroup == kConsumers) {  // the producer: the last warpgroup, one thread of it
    arch::setmaxnreg_decrease<kProducerRegisters>();
    if (threadIdx.x % kWarpgroup != 0) return;
    int stage = 0;
    std::uint32_t phase = 0;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      int tm, tn;
      grouped_tile<kGroupM>(tile, tiles_m, tiles_n, tm, tn);
      for (int kt = 0; kt < k_tiles; ++kt) {
        // A fresh barrier counts as having completed the phase before phase 0: the first
        // pass over the ring does not wait.
        while (!ptx::mbarrier_try_wait_parity(&empty[stage], phase ^ 1)) {
        }
        load_stage<TransA, TransB>(&map_a, &map_b, ring + stage * kStageBytes, &full[stage], tm * kBM, tn * kBN,
                                   kt * kBK);
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1;
        }
      }
    }
    return;
  }

  arch::setmaxnreg_increase<kConsumerRegisters>();
  // A stored k x m (TransA) is M-major; B stored k x n (not TransB) is N-major.
  constexpr int kMnMajorA = TransA ? 1 : 0, kMnMajorB = TransB ? 0 : 1;
  const int lane = threadIdx.x % 32, warp = (threadIdx.x % kWarpgroup) / 32;
  int stage = 0;
  std::uint32_t phase = 0;
  float acc[128];
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    int tm, tn;
    grouped_tile<kGroupM>(tile, tiles_m, tiles_n, tm, tn);
    int previous = -1;
    for (int kt = 0; kt < k_tiles; ++kt) {
      while (!ptx::mbarrier_try_wait_parity(&full[stage], phase)) {
      }
      const unsigned char* a = ring + stage * kStageBytes;
      const unsigned char* b = a + kABytes;
#pragma unroll
      for (int i = 0; i < 128; ++i) arch::fence_accumulator(acc[i]);
      arch::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kKSteps; ++kk)
        arch::wgmma_m64n256k16_bf16<kMnMajorA, kMnMajorB>(acc, a_descriptor<TransA>(a, warpgroup, kk),
                                                     b_descriptor<TransB>(b, kk), kt > 0 || kk > 0);
      arch::wgmma_commit();
#pragma unroll
      for (int i = 0; i < 128; ++i) arch::fence_accumulator(acc[i]);
      // Keep this stage's MMAs in flight; the previous stage's are done: hand it back.
      arch::wgmma_wait<1>();
      if (previous >= 0 && lane == 0) ptx::mbarrier_arrive(&empty[previous]);
      previous = stage;
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1;
      }
    }
    arch::wgmma_wait<0>();
    if (previous >= 0 && lane == 0) ptx::mbarrier_arrive(&empty[previous]);
    // Accumulator fragment of m64nNk16: register 4j + {0,1} holds row lane/4 and columns
    // 8j + 2(lane%4) + {0,1} of this warp's 16 rows; 4j + {2,3} the same columns 8 rows down.
    const int row0 = tm * kBM + warpgroup * 64 + warp * 16 + lane / 4;
    const int col0 = tn * kBN + 2 * (lane % 4);
#pragma unroll
    for (int j = 0; j < kBN / 8; ++j) {
      store_pair(e, row0, col0 + 8 * j, acc[4 * j], acc[4 * j + 1]);
      store_pair(e, row0 + 8, col0 + 8 * j, acc[4 * j + 2], acc[4 * j + 3]);
    }
  }
}

struct Launch {
  const void* kernel;
  CUtensorMap map_a, map_b;
  Epilogue e;
};

Status prepare(const GemmProblem& p, Launch& out) {
  const RowMajorGemm g = canonicalize(p);
  // A: m x k (K contiguous) or stored k x m; B: k x n or stored n x k (K contiguous).
  const TmaMatrix a = g.trans_a ? TmaMatrix{g.a, std::uint64_t(g.k), std::uint64_t(g.m), std::uint64_t(g.lda),
                                            TmaElement::BF16, kBK, kChunk}
                                : TmaMatrix{g.a, std::uint64_t(g.m), std::uint64_t(g.k), std::uint64_t(g.lda),
                                            TmaElement::BF16, kBM, kChunk};
  const TmaMatrix b = g.trans_b ? TmaMatrix{g.b, std::uint64_t(g.n), std::uint64_t(g.k), std::uint64_t(g.ldb),
                                            TmaElement::BF16, kBN, kChunk}
                                : TmaMatrix{g.b, std::uint64_t(g.k), std::uint64_t(g.n), std::uint64_t(g.ldb),
                                            TmaElement::BF16, kBK, kChunk};
  GEMMLAB_TRY(encode_tensor_map(a, "A", out.map_a));
  GEMMLAB_TRY(encode_tensor_map(b, "B", out.map_b));
  out.e = Epilogue{static_cast<float*>(g.c), g.ldc, static_cast<int>(g.m), static_cast<int>(g.n),
                   static_cast<int>(g.k), static_cast<float>(g.alpha), static_cast<float>(g.beta)};
  out.kernel = dispatch_trans(g.trans_a, g.trans_b, [](auto ta, auto tb) {
    return reinterpret_cast<const void*>(wgmma_ws_bf16_kernel<decltype(ta)::value, decltype(tb)::value>);
  });
  return Status::ok();
}

template <bool TransA, bool TransB>
Status raise_smem_limit() {
  static const cudaError_t err = cudaFuncSetAttribute(wgmma_ws_bf16_kernel<TransA, TransB>,
                                                      cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  CUDA_CHECK(err);
  return Status::ok();
}

Status run(const GemmProblem& p, Stream stream) {
  Launch l;
  GEMMLAB_TRY(prepare(p, l));
  const RowMajorGemm g = canonicalize(p);
  GEMMLAB_TRY(dispatch_trans(g.trans_a, g.trans_b, [](auto ta, auto tb) {
    return raise_smem_limit<decltype(ta)::value, decltype(tb)::value>();
  }));
  const int tiles = ceil_div(g.m, kBM) * ceil_div(g.n, kBN);
  const int grid = std::min(tiles, device_sm_count());
  void* args[] = {&l.map_a, &l.map_b, &l.e};
  CUDA_CHECK(cudaLaunchKernel(l.kernel, dim3(grid), dim3(kThreads), args, kSmemBytes,
                              static_cast<cudaStream_t>(stream)));
  return Status::ok();
}

Status can_implement(const GemmProblem& p) {
  if (p.a.dtype != DType::BF16 || p.b.dtype != DType::BF16 || p.c.dtype != DType::F32)
    return {StatusCode::NotSupported, std::string("wgmma_ws_bf16 takes bf16 A and B and f32 C (got ") +
                                          std::string(to_string(p.a.dtype)) + " inputs, " +
                                          std::string(to_string(p.c.dtype)) + " output)"};
  if (device_compute_capability() != 90)
    return {StatusCode::ArchMismatch, "wgmma_ws_bf16 needs an sm_90 GPU (wgmma, setmaxnreg: sm_90a code)"};
  constexpr std::int64_t kIntMax = 2147483647;
  if (p.m > kIntMax || p.n > kIntMax || p.k > kIntMax)
    return {StatusCode::NotSupported, "wgmma_ws_bf16: m, n and k must each be below 2^31"};
  if (p.m == 0 || p.n == 0 || p.k == 0) return Status::ok();
  const RowMajorGemm g = canonicalize(p);
  const auto u = [](std::int64_t x) { return static_cast<std::uint64_t>(x); };
  GEMMLAB_TRY(tma_requirements(g.trans_a ? TmaMatrix{g.a, u(g.k), u(g.m), u(g.lda), TmaElement::BF16, kBK, kChunk}
                                         : TmaMatrix{g.a, u(g.m), u(g.k), u(g.lda), TmaElement::BF16, kBM, kChunk},
                               "wgmma_ws_bf16: A"));
  GEMMLAB_TRY(tma_requirements(g.trans_b ? TmaMatrix{g.b, u(g.n), u(g.k), u(g.ldb), TmaElement::BF16, kBN, kChunk}
                                         : TmaMatrix{g.b, u(g.k), u(g.n), u(g.ldb), TmaElement::BF16, kBK, kChunk},
                               "wgmma_ws_bf16: B"));
  return Status::ok();
}

Status kernel_info(const GemmProblem& p, KernelInfo& out) {
  const RowMajorGemm g = canonicalize(p);
  return dispatch_trans(g.trans_a, g.trans_b, [&](auto ta, auto tb) {
    return describe_kernel(out, wgmma_ws_bf16_kernel<decltype(ta)::value, decltype(tb)::value>,
                           kernel_name("wgmma_ws_bf16_kernel", g.trans_a, g.trans_b), kThreads, kSmemBytes);
  });
}

}  // namespace

Variant wgmma_ws_bf16_variant() {
  Variant v;
  v.name = "wgmma_ws_bf16";
  v.backend = Backend::Cuda;
  v.input = DType::BF16;
  v.compute = DType::BF16;
  v.output = DType::F32;
  v.technique = "TMA + wgmma, producer warp and 2 consumer warpgroups, persistent grouped tiles";
  v.config = {{{"BM", kBM}, {"BN", kBN}, {"BK", kBK}, {"stages", kStages}, {"consumers", kConsumers},
               {"threads", kThreads}, {"group_m", kGroupM}}};
  v.can_implement = can_implement;
  v.run = run;
  v.kernel_info = kernel_info;
  v.model = [](const GemmProblem& p) {
    Traffic t = minimum_traffic(p);
    set_loads_per_fma(t, p, 1.0 / kBN + 1.0 / kBM);
    t.threads_per_block = kThreads;
    t.smem_bytes_per_block = kSmemBytes;
    return t;
  };
  return v;
}

}  // namespace gemmlab::cuda
