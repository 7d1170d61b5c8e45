// Session 14 probe: can a copy through the tensor memory accelerator (bulk load into shared
// memory, bulk store out) move two 4095^2 bf16 operands' bytes faster than a plain copy?
// Same setup as session 13's cp.cu: 256 MB memset before each launch (dirty L2), median of 30.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e_)); std::exit(1); } } while (0)

__device__ __forceinline__ unsigned smem_u32(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

__global__ void __launch_bounds__(256) plain_copy(const uint4* __restrict__ s, uint4* __restrict__ d, long long n) {
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < n; i += gridDim.x * 256LL) d[i] = s[i];
}

// One thread per block issues everything: tile t of `tiles` (tile bytes each) goes
// global -> stage (mbarrier) -> global (bulk group); a stage is reused once its store has
// read it.
__global__ void __launch_bounds__(32) bulk_copy(const unsigned char* __restrict__ s, unsigned char* __restrict__ d,
                                                long long tiles, int tile, int stages) {
  extern __shared__ __align__(128) unsigned char stage[];
  __shared__ __align__(8) unsigned long long landed[16];
  if (threadIdx.x != 0) return;
  for (int i = 0; i < stages; ++i) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(&landed[i])));
  asm volatile("fence.mbarrier_init.release.cluster;");
  long long mine = 0;
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) ++mine;
  auto load = [&](long long j) {
    const int st = static_cast<int>(j % stages);
    const long long t = blockIdx.x + j * gridDim.x;
    const unsigned bar = smem_u32(&landed[st]);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(tile) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(smem_u32(stage + static_cast<long long>(st) * tile)), "l"(s + t * tile), "r"(tile), "r"(bar) : "memory");
  };
  for (long long j = 0; j < stages && j < mine; ++j) load(j);
  for (long long j = 0; j < mine; ++j) {
    const int st = static_cast<int>(j % stages);
    const unsigned bar = smem_u32(&landed[st]);
    const unsigned parity = static_cast<unsigned>((j / stages) & 1);
    unsigned done = 0;
    while (!done)
      asm volatile("{ .reg .pred q; mbarrier.try_wait.parity.shared::cta.b64 q, [%1], %2; selp.u32 %0, 1, 0, q; }"
                   : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    const long long t = blockIdx.x + j * gridDim.x;
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 ::"l"(d + t * tile), "r"(smem_u32(stage + static_cast<long long>(st) * tile)), "r"(tile) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    if (j + stages < mine) {
      // the store of tile j must have read its stage before tile j + stages lands there
      asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
      load(j + stages);
    }
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

int main() {
  const long long bytes = 2LL * 4095 * 4096 * 2;  // two padded 4095 x 4096 bf16 operands' worth
  unsigned char *s, *d; char* flush;
  const size_t flush_bytes = 256u << 20;
  CK(cudaMalloc(&s, bytes)); CK(cudaMalloc(&d, bytes)); CK(cudaMalloc(&flush, flush_bytes));
  std::vector<unsigned> h(bytes / 4);
  for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<unsigned>(i * 2654435761u);
  CK(cudaMemcpy(s, h.data(), bytes, cudaMemcpyHostToDevice));
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaFuncSetAttribute(bulk_copy, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  auto run = [&](const char* name, auto launch, long long copied) {
    CK(cudaMemset(d, 0, bytes));
    launch(); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    std::vector<unsigned> got(bytes / 4);
    CK(cudaMemcpy(got.data(), d, bytes, cudaMemcpyDeviceToHost));
    const bool ok = std::equal(got.begin(), got.begin() + copied / 4, h.begin());
    std::vector<float> t;
    for (int rep = 0; rep < 30; ++rep) {
      CK(cudaMemset(flush, rep & 0xff, flush_bytes));
      CK(cudaEventRecord(e0)); launch(); CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
      float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); t.push_back(ms * 1000);
    }
    std::sort(t.begin(), t.end());
    std::printf("%-34s median %7.2f us  min %7.2f  (%.0f GB/s of traffic) %s\n", name, t[t.size() / 2], t[0],
                2.0 * copied / t[t.size() / 2] / 1e3, ok ? "ok" : "WRONG");
  };
  const long long n16 = bytes / 16;
  for (int bps : {4, 8, 16}) {
    char nm[64]; std::snprintf(nm, sizeof nm, "plain uint4 copy, %d blocks/SM", bps);
    run(nm, [&] { plain_copy<<<sms * bps, 256>>>(reinterpret_cast<const uint4*>(s), reinterpret_cast<uint4*>(d), n16); }, bytes);
  }
  run("cudaMemcpy D2D", [&] { CK(cudaMemcpyAsync(d, s, bytes, cudaMemcpyDeviceToDevice)); }, bytes);
  struct B { int tile_k, stages, bps; };
  for (B b : {B{8, 4, 1}, B{16, 4, 1}, B{32, 4, 1}, B{32, 6, 1}, B{16, 8, 1}, B{8, 8, 2}, B{16, 4, 2}, B{8, 4, 4}, B{4, 8, 4}}) {
    const int tile = b.tile_k * 1024;
    const long long tiles = bytes / tile;  // bytes is a multiple of 8 KiB and of 4 KiB; 16/32 KiB: the rest left
    char nm[64]; std::snprintf(nm, sizeof nm, "bulk %2dK x %d, %d blocks/SM", b.tile_k, b.stages, b.bps);
    if (bytes % tile != 0) std::snprintf(nm, sizeof nm, "bulk %2dK x %d, %d/SM (part)", b.tile_k, b.stages, b.bps);
    run(nm, [&] { bulk_copy<<<sms * b.bps, 32, tile * b.stages>>>(s, d, tiles, tile, b.stages); }, tiles * tile);
  }
  std::printf("done\n");
  return 0;
}
