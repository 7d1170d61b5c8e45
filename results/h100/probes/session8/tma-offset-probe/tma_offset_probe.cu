// Probe: can TMA address a matrix whose row pitch is not a multiple of 16 bytes through
// 8 tensor maps, map j holding rows j, j+8, ... (pitch 8*ld*esize, a multiple of 16), with
// the base aligned down and the inner coordinate offset by the misalignment?
// Checks loads (with zero fill at the right edge) and stores (exactly the box, nothing else).
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>
#include <cuda/ptx>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include <string>

namespace ptx = cuda::ptx;
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e_)); std::exit(1);} } while (0)

constexpr int kBoxRows = 4;

__global__ void load_box(const __grid_constant__ CUtensorMap map, int c, int q, std::uint32_t* out, int esize, int swz) {
  __shared__ alignas(1024) unsigned char tile[kBoxRows * 128];
  __shared__ alignas(8) std::uint64_t bar;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&bar, 1);
    ptx::fence_proxy_async(ptx::space_shared);
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar, kBoxRows * 128);
    const std::int32_t at[2] = {c, q};
    ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, tile, &map, at, &bar);
    while (!ptx::mbarrier_try_wait_parity(&bar, 0)) {
    }
  }
  __syncthreads();
  // unswizzle: byte b of row t sits at t*128 + ((b/16) ^ (t%8))*16 + b%16
  for (int i = threadIdx.x; i < kBoxRows * 128 / esize; i += blockDim.x) {
    const int per_row = 128 / esize;
    const int t = i / per_row, x = i % per_row;
    const int b = x * esize;
    const unsigned char* p = tile + t * 128 + (((b / 16) ^ (swz ? t % 8 : 0)) * 16) + b % 16;
    out[i] = esize == 4 ? *reinterpret_cast<const std::uint32_t*>(p) : *reinterpret_cast<const std::uint16_t*>(p);
  }
}

__global__ void store_box(const __grid_constant__ CUtensorMap map, int c, int q, int esize, int swz) {
  __shared__ alignas(1024) unsigned char tile[kBoxRows * 128];
  for (int i = threadIdx.x; i < kBoxRows * 128 / esize; i += blockDim.x) {
    const int per_row = 128 / esize;
    const int t = i / per_row, x = i % per_row;
    const int b = x * esize;
    unsigned char* p = tile + t * 128 + (((b / 16) ^ (swz ? t % 8 : 0)) * 16) + b % 16;
    const std::uint32_t v = 0x4000u + t * 256 + x;
    if (esize == 4) *reinterpret_cast<std::uint32_t*>(p) = v; else *reinterpret_cast<std::uint16_t*>(p) = static_cast<std::uint16_t>(v);
  }
  ptx::fence_proxy_async(ptx::space_shared);
  __syncthreads();
  if (threadIdx.x == 0) {
    const std::int32_t at[2] = {c, q};
    ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, &map, at, tile);
    ptx::cp_async_bulk_commit_group();
    ptx::cp_async_bulk_wait_group(ptx::n32_t<0>{});
  }
}

PFN_cuTensorMapEncodeTiled_v12000 encoder() {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found{};
  CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found));
  return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
}

int failures = 0;

std::vector<int> g_cs; bool g_loads = true, g_stores = true;
void run(int esize, int M, int N, int ld, int shift) {
  const auto encode = encoder();
  const int per_row = 128 / esize;
  const std::size_t total = static_cast<std::size_t>(M) * ld + 256;
  unsigned char* g = nullptr;
  CK(cudaMalloc(&g, total * esize));
  unsigned char* x = g + shift * esize;  // the matrix, base misaligned by `shift` elements
  const auto value = [](int r, int col) { return static_cast<std::uint32_t>((r * 131 + col * 7 + 1) & 0x3fff); };
  const auto sentinel = 0xffffu;
  std::vector<std::uint32_t> host32(total);
  std::vector<std::uint16_t> host16(total);
  const auto fill = [&](bool matrix) {
    for (std::size_t i = 0; i < total; ++i) { host32[i] = sentinel; host16[i] = static_cast<std::uint16_t>(sentinel); }
    if (matrix)
      for (int r = 0; r < M; ++r)
        for (int col = 0; col < ld; ++col) {
          const std::size_t i = shift + static_cast<std::size_t>(r) * ld + col;
          const std::uint32_t v = col < N ? value(r, col) : 0x3fffu;  // padding beyond N, within ld
          host32[i] = v; host16[i] = static_cast<std::uint16_t>(v);
        }
    if (esize == 4) CK(cudaMemcpy(g, host32.data(), total * 4, cudaMemcpyHostToDevice));
    else CK(cudaMemcpy(g, host16.data(), total * 2, cudaMemcpyHostToDevice));
  };
  std::uint32_t* out = nullptr;
  CK(cudaMalloc(&out, kBoxRows * per_row * 4));
  std::vector<std::uint32_t> got(kBoxRows * per_row);
  int loads = 0, stores = 0, load_bad = 0, store_bad = 0, straddle_bad = 0, straddles = 0;
  for (int j = 0; j < 8 && j < M; ++j) {
    const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(x) + static_cast<std::uintptr_t>(j) * ld * esize;
    const std::uintptr_t base = a & ~std::uintptr_t{15};
    const int off = static_cast<int>((a - base) / esize);
    const int rows_j = (M - j + 7) / 8;
    CUtensorMap map{};
    const cuuint64_t dims[2] = {static_cast<cuuint64_t>(N + off), static_cast<cuuint64_t>(rows_j)};
    const cuuint64_t pitch[1] = {static_cast<cuuint64_t>(8) * ld * esize};
    const cuuint32_t box[2] = {static_cast<cuuint32_t>(per_row), kBoxRows};
    const cuuint32_t ones[2] = {1, 1};
    const CUresult r = encode(&map, esize == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_UINT16, 2,
                              reinterpret_cast<void*>(base), dims, pitch, box, ones, CU_TENSOR_MAP_INTERLEAVE_NONE,
                              (std::getenv("SWZ") && std::getenv("SWZ")[0]=='0') ? CU_TENSOR_MAP_SWIZZLE_NONE : CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) { std::printf("encode failed %d (j %d)\n", static_cast<int>(r), j); ++failures; continue; }
    // loads: every q block, columns at 0, odd offsets, straddling N
    fill(true);
    for (int q0 = 0; q0 < rows_j; q0 += kBoxRows - 1)
      for (int c : g_cs) {
        if (!g_loads) break;
        if (c < 0) continue;
        load_box<<<1, 128>>>(map, c + off, q0, out, esize, !(std::getenv("SWZ") && std::getenv("SWZ")[0]=='0'));
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(got.data(), out, got.size() * 4, cudaMemcpyDeviceToHost));
        ++loads;
        bool bad = false;
        for (int t = 0; t < kBoxRows; ++t)
          for (int xx = 0; xx < per_row; ++xx) {
            const int q = q0 + t, col = c + xx, row = 8 * q + j;
            const std::uint32_t want = (q < rows_j && col < N) ? value(row, col) : 0u;
            if (got[t * per_row + xx] != want) {
              if (!bad) std::printf("  load esize %d j %d off %d q0 %d c %d: (t %d x %d) got %x want %x\n", esize, j, off, q0, c, t, xx, got[t * per_row + xx], want);
              bad = true;
            }
          }
        load_bad += bad;
      }
    // stores: boxes inside [0, N), and one straddling N (reported apart)
    for (int q0 = 0; q0 < rows_j; q0 += kBoxRows - 1)
      for (int c : g_cs) {
        if (!g_stores) break;
        if (c >= N) continue;
        if (c < 0) continue;
        const bool straddle = c + per_row > N;
        fill(false);
        store_box<<<1, 128>>>(map, c + off, q0, esize, !(std::getenv("SWZ") && std::getenv("SWZ")[0]=='0'));
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        if (esize == 4) CK(cudaMemcpy(host32.data(), g, total * 4, cudaMemcpyDeviceToHost));
        else CK(cudaMemcpy(host16.data(), g, total * 2, cudaMemcpyDeviceToHost));
        bool bad = false;
        for (std::size_t i = 0; i < total; ++i) {
          const std::uint32_t v = esize == 4 ? host32[i] : host16[i];
          std::uint32_t want = sentinel & (esize == 4 ? 0xffffffffu : 0xffffu);
          const long long e = static_cast<long long>(i) - shift;
          if (e >= 0 && e < static_cast<long long>(M) * ld) {
            const int row = static_cast<int>(e / ld), col = static_cast<int>(e % ld);
            const int q = row / 8, t = q - q0;
            if (row % 8 == j && t >= 0 && t < kBoxRows && q < rows_j && col >= c && col < c + per_row && col < N)
              want = 0x4000u + t * 256 + (col - c);
            if (esize == 2) want &= 0xffffu;
          }
          if (v != want) {
            if (!bad) std::printf("  %sstore esize %d j %d off %d q0 %d c %d: element %lld (row %lld col %lld) got %x want %x\n",
                                  straddle ? "straddling " : "", esize, j, off, q0, c, e, e / ld, e % ld, v, want);
            bad = true;
          }
        }
        if (straddle) { ++straddles; straddle_bad += bad; } else { ++stores; store_bad += bad; }
      }
  }
  std::printf("esize %d M %d N %d ld %d shift %d: loads %d bad %d; stores %d bad %d; straddling stores %d bad %d\n", esize, M, N,
              ld, shift, loads, load_bad, stores, store_bad, straddles, straddle_bad);
  failures += load_bad + store_bad;
  CK(cudaFree(g));
  CK(cudaFree(out));
}

int main(int argc, char** argv) {
  // probe ESIZE M N LD SHIFT loads|stores|both C...
  if (argc < 8) { std::printf("usage\n"); return 2; }
  const int esize = std::atoi(argv[1]), M = std::atoi(argv[2]), N = std::atoi(argv[3]), ld = std::atoi(argv[4]),
            shift = std::atoi(argv[5]);
  const std::string mode = argv[6];
  g_loads = mode != "stores"; g_stores = mode != "loads";
  for (int i = 7; i < argc; ++i) g_cs.push_back(std::atoi(argv[i]));
  run(esize, M, N, ld, shift);
  std::printf("%s\n", failures ? "FAIL" : "ALL OK");
  return failures != 0;
}
