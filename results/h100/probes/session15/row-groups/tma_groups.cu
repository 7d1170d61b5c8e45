// Probe: TMA loads of A's row groups (rows j, j+8, ... of an A whose pitch is 81 bf16) with the
// tensor maps (1) in an array inside a __grid_constant__ struct, (2) as a plain
// __grid_constant__ CUtensorMap parameter, (3) in global memory. argv[1] picks; checks the data.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
struct Maps { CUtensorMap maps[8]; int groups; int ld; };
__device__ __forceinline__ void tma_load(const void* map, unsigned dst, int c0, int c1, unsigned bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
               :: "r"(dst), "l"(map), "r"(c0), "r"(c1), "r"(bar) : "memory");
}
__device__ void body(const CUtensorMap* (*pick)(int, const void*), const void* ctx, int ld, std::uint16_t* out) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) std::uint64_t bar;
  unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  unsigned b = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared.b64 [%0], 1;" :: "r"(b));
    asm volatile("fence.proxy.async.shared::cta;");
    asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" :: "r"(b), "r"(16384));
    for (int j = 0; j < 8; ++j) tma_load(pick(j, ctx), s + j * 2048, j * ld, 0, b);
    unsigned done = 0;
    while (!done) asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(b));
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 8192; i += blockDim.x) out[i] = reinterpret_cast<std::uint16_t*>(smem)[i];
}
__device__ const CUtensorMap* from_struct(int j, const void* c) { return &static_cast<const Maps*>(c)->maps[j]; }
__device__ const CUtensorMap* from_global(int j, const void* c) { return static_cast<const CUtensorMap*>(c) + j; }
__global__ void k_struct(const __grid_constant__ Maps m, std::uint16_t* out) { body(from_struct, &m, m.ld, out); }
__global__ void k_global(const CUtensorMap* maps, int ld, std::uint16_t* out) {
  if (threadIdx.x == 0) for (int j = 0; j < 8; ++j) asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" :: "l"(maps + j) : "memory");
  body(from_global, maps, ld, out);
}
__global__ void k_single(const __grid_constant__ CUtensorMap m0, int ld, std::uint16_t* out) {
  // only box j = 0 from a parameter; the others from nowhere: compare row group 0 only
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) std::uint64_t bar;
  unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  unsigned b = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared.b64 [%0], 1;" :: "r"(b));
    asm volatile("fence.proxy.async.shared::cta;");
    asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" :: "r"(b), "r"(2048));
    tma_load(&m0, s, 0, 0, b);
    unsigned done = 0;
    while (!done) asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(b));
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) out[i] = reinterpret_cast<std::uint16_t*>(smem)[i];
}
int main(int argc, char** argv) {
  const int which = argc > 1 ? atoi(argv[1]) : 0;
  const int m = 300, K = 77, ld = 81, G = 8;
  std::vector<std::uint16_t> a(static_cast<size_t>(m) * ld);
  for (int r = 0; r < m; ++r) for (int c = 0; c < ld; ++c) a[r * ld + c] = static_cast<std::uint16_t>(c < K ? r * 100 + c + 1 : 0xFFFF);
  void* da; cudaMalloc(&da, a.size() * 2); cudaMemcpy(da, a.data(), a.size() * 2, cudaMemcpyHostToDevice);
  std::uint16_t* dout; cudaMalloc(&dout, 16384); cudaMemset(dout, 0, 16384);
  PFN_cuTensorMapEncodeTiled_v12000 enc; cudaDriverEntryPointQueryResult q;
  cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", reinterpret_cast<void**>(&enc), cudaEnableDefault, &q);
  Maps maps{}; maps.groups = G; maps.ld = ld;
  for (int j = 0; j < G; ++j) {
    cuuint64_t dims[2] = {static_cast<cuuint64_t>(j * ld + K), static_cast<cuuint64_t>((m - j + G - 1) / G)};
    cuuint64_t stride[1] = {static_cast<cuuint64_t>(G * ld * 2)};
    cuuint32_t box[2] = {64, 16}, es[2] = {1, 1};
    CUresult r = enc(&maps.maps[j], CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, da, dims, stride, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                     CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) { printf("encode %d failed %d\n", j, r); return 1; }
  }
  CUtensorMap* dmaps; cudaMalloc(&dmaps, sizeof(maps.maps)); cudaMemcpy(dmaps, maps.maps, sizeof(maps.maps), cudaMemcpyHostToDevice);
  const int smem = 16384 + 1024;
  cudaFuncSetAttribute(k_struct, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaFuncSetAttribute(k_global, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaFuncSetAttribute(k_single, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  int rows = 128;
  if (which == 0) k_struct<<<1, 128, smem>>>(maps, dout);
  else if (which == 1) k_global<<<1, 128, smem>>>(dmaps, ld, dout);
  else { k_single<<<1, 128, smem>>>(maps.maps[0], ld, dout); rows = 16; }
  cudaError_t e = cudaDeviceSynchronize();
  printf("variant %d: %s\n", which, cudaGetErrorString(e));
  if (e != cudaSuccess) return 2;
  std::vector<std::uint16_t> out(8192); cudaMemcpy(out.data(), dout, 16384, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int p = 0; p < rows; ++p) {
    const int j = p / 16, srow = p % 16, row = 8 * srow + j;
    for (int c = 0; c < 64; ++c) {
      const int chunk = (c / 8) ^ (p % 8);
      const std::uint16_t got = out[p * 64 + chunk * 8 + c % 8];
      const std::uint16_t want = row < m ? a[row * ld + c] : 0;
      if (got != want && ++bad <= 5) printf("p %d c %d: got %u want %u\n", p, c, got, want);
    }
  }
  printf("variant %d: %d bad\n", which, bad);
  return bad != 0;
}
