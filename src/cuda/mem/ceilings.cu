// gemmlab device's measured ceilings: what this GPU can move and compute at best, measured
// in the same run as whatever is compared with them. Copy bandwidth (cudaMemcpyAsync and
// the best copy kernel, bytes read + written), read-only bandwidth (a reduction), the FP32
// FMA rate from registers, and cuBLAS SGEMM. Buffers hold several L2 sizes so the caches
// cannot serve a repetition; every buffer is allocated before any timing.
#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "cuda/mem/check.cuh"
#include "cuda/mem/experiment.hpp"
#include "cuda/mem/streaming.hpp"
#include "gemmlab/gemm.hpp"

namespace gemmlab::cuda {
namespace {

using mem::Checker;
using mem::PatternWords;
using mem::SameAsPattern;

constexpr std::uint32_t kSeed = 0x5EED01u;

// ---- FP32 FMA rate --------------------------------------------------------------
// kFmaChains independent dependency chains per thread keep every FMA pipe busy; the
// inner loop is unrolled kFmaUnroll times so loop overhead is a few percent of the
// instructions. a and b arrive at run time, so nothing can be folded; the result is
// stored, so nothing can be dropped.
constexpr int kFmaChains = 8;
constexpr int kFmaUnroll = 16;
constexpr int kFmaThreads = 256;
constexpr int kFmaIters = 4096;  // multiple of kFmaUnroll
constexpr int kFmaWaves = 4;
constexpr float kFmaA = 0.9990234375f;  // 1 - 2^-10: chains settle at b / (1 - a)
constexpr float kFmaB = 0.5f;
static_assert(kFmaIters % kFmaUnroll == 0, "whole unrolled steps");

__global__ void __launch_bounds__(kFmaThreads) fma_kernel(float* __restrict__ out, int iters, float a, float b) {
  const int tid = blockIdx.x * kFmaThreads + threadIdx.x;
  float x[kFmaChains];  // (chains) in registers
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c) x[c] = static_cast<float>(tid % 1024 + c);
  for (int i = 0; i < iters; i += kFmaUnroll) {
#pragma unroll
    for (int u = 0; u < kFmaUnroll; ++u)
#pragma unroll
      for (int c = 0; c < kFmaChains; ++c) x[c] = fmaf(x[c], a, b);
  }
  float sum = 0.0f;
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c) sum += x[c];
  out[tid] = sum;
}

// The same thread's result on the host (std::fma is the same fused operation).
float fma_reference(int tid, int iters, float a, float b) {
  float x[kFmaChains];
  for (int c = 0; c < kFmaChains; ++c) x[c] = static_cast<float>(tid % 1024 + c);
  for (int i = 0; i < iters; ++i)
    for (int c = 0; c < kFmaChains; ++c) x[c] = std::fma(x[c], a, b);
  float sum = 0.0f;
  for (int c = 0; c < kFmaChains; ++c) sum += x[c];
  return sum;
}

struct SmallFloats {  // k / 65536 for small whole k: exact, and in [0, 1)
  std::uint32_t seed;
  __device__ std::uint32_t operator()(long long i) const {
    return __float_as_uint(mem::pattern_float(static_cast<std::uint64_t>(i), seed) * (1.0f / 65536.0f));
  }
};

struct Setup {
  const CeilingOptions& o;
  const DeviceFacts& facts;
  cudaStream_t s;
  EventTimer& timer;
  Checker& checker;
};

CeilingRow make_row(std::string name, std::string what, std::string unit, double work) {
  CeilingRow row;
  row.name = std::move(name);
  row.what = std::move(what);
  row.unit = std::move(unit);
  row.work = work;
  return row;
}

void finish(CeilingRow& row) {
  row.value = row.time.median_ms > 0 ? row.work / (row.time.median_ms * 1e-3) * 1e-9 : 0;
}

void set_check(CeilingRow& row, long long mismatches) {
  row.checked = true;
  row.passed = mismatches == 0;
  row.check = row.passed ? "ok" : std::to_string(mismatches) + " words not intact";
}

// One copy: verified once into a poisoned destination, then timed.
Status copy_row(Setup& st, CeilingRow& row, const DeviceMemory& dst, long long words,
                const std::function<Status()>& op) {
  CUDA_CHECK(cudaMemsetAsync(dst.data(), 0xFF, dst.bytes(), st.s));
  GEMMLAB_TRY(op());
  long long bad = 0;
  GEMMLAB_TRY(st.checker.count(dst.data(), words, SameAsPattern{kSeed}, st.s, bad));
  set_check(row, bad);
  GEMMLAB_TRY(st.timer.measure(st.s, st.o.timing, op, row.time));
  finish(row);
  return Status::ok();
}

Status measure_copy(Setup& st, const DeviceMemory& src, const DeviceMemory& dst, Ceilings& out) {
  const std::size_t bytes = src.bytes();
  const long long words = static_cast<long long>(bytes / 4), n4 = static_cast<long long>(bytes / 16);
  GEMMLAB_TRY(mem::fill(src.data(), words, PatternWords{kSeed}, st.s));
  {
    CeilingRow row = make_row("memcpy_d2d", "cudaMemcpyAsync device to device; bytes read + written", "GB/s",
                              2.0 * static_cast<double>(bytes));
    GEMMLAB_TRY(copy_row(st, row, dst, words, [&]() -> Status {
      CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, st.s));
      return Status::ok();
    }));
    out.memcpy_gbs = row.value;
    out.rows.push_back(row);
  }
  for (int unroll : mem::kUnrolls) {
    CeilingRow row = make_row(
        "copy_float4_x" + std::to_string(unroll),
        "copy kernel, float4, " + std::to_string(unroll) + " loads in flight per thread; bytes read + written", "GB/s",
        2.0 * static_cast<double>(bytes));
    GEMMLAB_TRY(copy_row(st, row, dst, words,
                         [&] { return mem::copy_float4(src.data(), dst.data(), n4, unroll, st.s); }));
    if (row.passed && row.value > out.copy_kernel_gbs) {
      out.copy_kernel_gbs = row.value;
      out.copy_kernel = row.name;
    }
    out.rows.push_back(row);
  }
  return Status::ok();
}

// One read row: the sum checked once against its closed form, then timed.
Status read_row(Setup& st, CeilingRow row, const DeviceMemory& total, std::uint32_t expected,
                const std::function<Status()>& op, Ceilings& out) {
  CUDA_CHECK(cudaMemsetAsync(total.data(), 0, sizeof(unsigned), st.s));
  GEMMLAB_TRY(op());
  unsigned got = 0;
  CUDA_CHECK(cudaMemcpyAsync(&got, total.data(), sizeof(unsigned), cudaMemcpyDeviceToHost, st.s));
  CUDA_CHECK(cudaStreamSynchronize(st.s));
  row.checked = true;
  row.passed = got == expected;
  row.check = row.passed ? "ok (sum of every word)"
                         : "sum " + std::to_string(got) + " != expected " + std::to_string(expected);
  GEMMLAB_TRY(st.timer.measure(st.s, st.o.timing, op, row.time));
  finish(row);
  if (row.passed && row.value > out.read_gbs) {
    out.read_gbs = row.value;
    out.read_kernel = row.name;
  }
  out.rows.push_back(row);
  return Status::ok();
}

Status measure_read(Setup& st, const DeviceMemory& src, Ceilings& out) {
  constexpr std::uint32_t kStep = 2654435761u;  // odd: consecutive words differ
  const std::size_t bytes = src.bytes();
  const long long words = static_cast<long long>(bytes / 4), n4 = static_cast<long long>(bytes / 16);
  GEMMLAB_TRY(mem::fill_linear(src.data(), words, kStep, kSeed, st.s));
  const std::uint32_t expected = mem::linear_sum(static_cast<std::uint64_t>(words), kStep, kSeed);
  DeviceMemory total;
  GEMMLAB_TRY(DeviceMemory::allocate(sizeof(unsigned), total));
  const int blocks = mem::resident_blocks(st.facts.sm_count, st.facts.max_threads_per_sm);
  for (int unroll : mem::kUnrolls) {
    GEMMLAB_TRY(read_row(st,
                         make_row("read_x" + std::to_string(unroll),
                                  "reduction over uint4 loads, " + std::to_string(unroll) + " in flight per thread, " +
                                      std::to_string(blocks) + " resident blocks; bytes read",
                                  "GB/s", static_cast<double>(bytes)),
                         total, expected,
                         [&] { return mem::read_sum(src.data(), n4, unroll, blocks, total.as<unsigned>(), st.s); }, out));
  }
  if (mem::read_bulk_runs(st.facts.cc_major, st.facts.smem_per_block_optin)) {  // bulk copies (TMA): sm_90
    GEMMLAB_TRY(read_row(st,
                         make_row("read_bulk",
                                  "reduction over bulk (TMA) copies into " + std::to_string(mem::kBulkStages) + " x " +
                                      std::to_string(mem::kBulkTileBytes / 1024) +
                                      " KiB shared-memory stages, one block per SM; bytes read",
                                  "GB/s", static_cast<double>(bytes)),
                         total, expected,
                         [&] { return mem::read_bulk(src.data(), n4, st.facts.sm_count, total.as<unsigned>(), st.s); },
                         out));
  }
  return Status::ok();
}

Status measure_fma(Setup& st, Ceilings& out) {
  const int blocks = mem::resident_blocks(st.facts.sm_count, st.facts.max_threads_per_sm) * kFmaWaves;
  const long long threads = static_cast<long long>(blocks) * kFmaThreads;
  DeviceMemory result;
  GEMMLAB_TRY(DeviceMemory::allocate(static_cast<std::size_t>(threads) * sizeof(float), result));
  CeilingRow row = make_row("fma",
                            std::to_string(kFmaChains) + " independent FFMA chains per thread, registers only, " +
                                std::to_string(blocks) + " blocks of " + std::to_string(kFmaThreads),
                            "GFLOP/s", 2.0 * kFmaChains * kFmaIters * static_cast<double>(threads));
  const auto op = [&]() -> Status {
    fma_kernel<<<static_cast<unsigned>(blocks), kFmaThreads, 0, st.s>>>(result.as<float>(), kFmaIters, kFmaA, kFmaB);
    CUDA_CHECK_LAUNCH("fma_kernel");
    return Status::ok();
  };
  GEMMLAB_TRY(op());
  // A few threads recomputed on the host, bit for bit.
  const long long probes[] = {0, 1, 777, threads / 2 + 3, threads - 1};
  int bad = 0;
  for (long long tid : probes) {
    float got = 0;
    CUDA_CHECK(cudaMemcpyAsync(&got, result.as<float>() + tid, sizeof(float), cudaMemcpyDeviceToHost, st.s));
    CUDA_CHECK(cudaStreamSynchronize(st.s));
    if (got != fma_reference(static_cast<int>(tid), kFmaIters, kFmaA, kFmaB)) ++bad;
  }
  row.checked = true;
  row.passed = bad == 0;
  row.check = row.passed ? "ok (5 threads recomputed on the host)" : std::to_string(bad) + " of 5 threads differ";
  GEMMLAB_TRY(st.timer.measure(st.s, st.o.timing, op, row.time));
  finish(row);
  out.fma_gflops = row.value;
  out.rows.push_back(row);
  return Status::ok();
}

Status measure_sgemm(Setup& st, Ceilings& out) {
  const Variant* v = find_variant(Backend::Cuda, "cublas_sgemm");
  if (!v) return {StatusCode::NotFound, "measure_ceilings: the cublas_sgemm variant is not registered"};
  long long n = st.o.sgemm_n;
  while (n > 256 && 3.0 * static_cast<double>(n * n) * sizeof(float) > 0.25 * static_cast<double>(st.facts.global_memory_bytes))
    n /= 2;
  const std::size_t bytes = static_cast<std::size_t>(n * n) * sizeof(float);
  DeviceMemory a, b, c;
  GEMMLAB_TRY(DeviceMemory::allocate(bytes, a));
  GEMMLAB_TRY(DeviceMemory::allocate(bytes, b));
  GEMMLAB_TRY(DeviceMemory::allocate(bytes, c));
  GEMMLAB_TRY(mem::fill(a.data(), n * n, SmallFloats{kSeed}, st.s));
  GEMMLAB_TRY(mem::fill(b.data(), n * n, SmallFloats{kSeed + 1}, st.s));
  GemmProblem p;
  p.m = p.n = p.k = n;
  p.a = Matrix{a.data(), n, n, n, Layout::RowMajor, DType::F32};
  p.b = Matrix{b.data(), n, n, n, Layout::RowMajor, DType::F32};
  p.c = Matrix{c.data(), n, n, n, Layout::RowMajor, DType::F32};
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  std::unique_ptr<Context> context;
  GEMMLAB_TRY(Context::create({.backend = Backend::Cuda, .device = device, .stream = st.s}, context));
  const auto op = [&] { return gemm(*context, p, *v); };
  GEMMLAB_TRY(op());  // creates the cuBLAS handle, outside the timed region
  CUDA_CHECK(cudaStreamSynchronize(st.s));
  CeilingRow row = make_row("sgemm", "cuBLAS SGEMM (cublas_sgemm variant, pedantic FP32) at " + std::to_string(n) + "^3",
                            "GFLOP/s", 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n));
  row.check = "not checked here (the anchor; gemmlab verify checks it)";
  GEMMLAB_TRY(st.timer.measure(st.s, st.o.timing, op, row.time));
  finish(row);
  out.sgemm_gflops = row.value;
  out.sgemm_n = static_cast<int>(n);
  out.rows.push_back(row);
  return Status::ok();
}

}  // namespace

Status measure_ceilings(const CeilingOptions& o, DeviceFacts& facts, Ceilings& out) {
  if (!device_present()) return {StatusCode::NotSupported, "no CUDA device is present on this machine"};
  int ordinal = 0;
  GEMMLAB_TRY(select_device(o.device, ordinal));
  GEMMLAB_TRY(query_device(ordinal, facts));
  out = Ceilings{};
  StreamOwner stream;
  GEMMLAB_TRY(make_stream(stream));
  EventTimer timer;
  GEMMLAB_TRY(timer.init());
  Checker checker;
  GEMMLAB_TRY(checker.init());
  Setup st{o, facts, stream.get(), timer, checker};
  if (o.copy || o.read) {
    out.buffer_bytes = mem::streaming_buffer_bytes(facts, o.buffer_l2_multiple);
    DeviceMemory src, dst;
    GEMMLAB_TRY(DeviceMemory::allocate(out.buffer_bytes, src));
    if (o.copy) {
      GEMMLAB_TRY(DeviceMemory::allocate(out.buffer_bytes, dst));
      GEMMLAB_TRY(measure_copy(st, src, dst, out));
    }
    if (o.read) GEMMLAB_TRY(measure_read(st, src, out));
  }
  if (o.fma) GEMMLAB_TRY(measure_fma(st, out));
  if (o.sgemm) GEMMLAB_TRY(measure_sgemm(st, out));
  CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  return Status::ok();
}

}  // namespace gemmlab::cuda
