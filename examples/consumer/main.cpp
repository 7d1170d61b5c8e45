// gemmlab from another project: C <- A * B on a small random problem, with the automatic
// choice and with a named rung, on the CPU and (where the package has CUDA and a GPU is
// present) on the GPU; every result checked against a plain float64 loop. Prints one line;
// exits with 1 on a failure.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gemmlab/context.hpp>
#include <gemmlab/gemm.hpp>
#if GEMMLAB_HAVE_CUDA  // defined by gemmlab::gemmlab when the package has the CUDA backend
#include <cuda_runtime.h>
#endif

constexpr std::int64_t M = 97, N = 131, K = 64;  // no tile's multiples

// C <- A * B in `backend`'s context, by `rung` ("auto": the library's choice); a, b, c are
// where the backend computes. Empty on success, else what went wrong.
std::string run(gemmlab::Backend backend, const std::string& rung, float* a, float* b, float* c) {
  std::unique_ptr<gemmlab::Context> ctx;
  gemmlab::Status status = gemmlab::Context::create({.backend = backend}, ctx);
  gemmlab::GemmProblem p{.m = M, .n = N, .k = K};
  p.a = {.data = a, .rows = M, .cols = K, .ld = K};  // (M, K) row-major
  p.b = {.data = b, .rows = K, .cols = N, .ld = N};  // (K, N)
  p.c = {.data = c, .rows = M, .cols = N, .ld = N};  // (M, N)
  if (status) status = gemmlab::gemm(*ctx, p, {.variant = rung});
  return status ? "" : status.describe();
}

// Empty when every element of c is within a float32 dot product's error of the float64 one.
std::string check(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c) {
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double ref = 0, magnitude = 0;
      for (std::int64_t p = 0; p < K; ++p) {
        ref += double(a[i * K + p]) * b[p * N + j];
        magnitude += std::abs(double(a[i * K + p]) * b[p * N + j]);
      }
      if (!(std::abs(c[i * N + j] - ref) <= 8 * (K + 2) * 0x1p-24 * magnitude))
        return "C(" + std::to_string(i) + "," + std::to_string(j) + ") = " + std::to_string(c[i * N + j]) +
               ", expected " + std::to_string(ref);
  }
  return "";
}

int main() {
  std::mt19937 rng(27);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> a(M * K), b(K * N), c(M * N);
  for (float& x : a) x = uniform(rng);
  for (float& x : b) x = uniform(rng);
  const float nan = std::numeric_limits<float>::quiet_NaN();  // beta = 0: C is written, never read

  std::string line = "gemmlab consumer " + std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
  bool ok = true;
  auto record = [&](const std::string& what, std::string error) {
    if (error.empty()) error = check(a, b, c);
    line += "; " + what + (error.empty() ? " ok" : " FAILED: " + error);
    ok = ok && error.empty();
  };
  for (const char* rung : {"auto", "packed_simd"}) {
    std::fill(c.begin(), c.end(), nan);
    record(std::string("cpu ") + rung, run(gemmlab::Backend::Cpu, rung, a.data(), b.data(), c.data()));
  }
#if GEMMLAB_HAVE_CUDA
  auto bytes = [](const std::vector<float>& v) { return v.size() * sizeof(float); };
  int devices = 0;
  float *da = nullptr, *db = nullptr, *dc = nullptr;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    line += "; cuda skipped (no CUDA device)";
  } else if (cudaMalloc(&da, bytes(a)) != cudaSuccess || cudaMalloc(&db, bytes(b)) != cudaSuccess ||
             cudaMalloc(&dc, bytes(c)) != cudaSuccess) {
    record("cuda", "cudaMalloc failed");
  } else {
    cudaMemcpy(da, a.data(), bytes(a), cudaMemcpyHostToDevice);
    cudaMemcpy(db, b.data(), bytes(b), cudaMemcpyHostToDevice);
    for (const char* rung : {"auto", "pipelined"}) {
      std::fill(c.begin(), c.end(), nan);
      cudaMemcpy(dc, c.data(), bytes(c), cudaMemcpyHostToDevice);
      std::string error = run(gemmlab::Backend::Cuda, rung, da, db, dc);
      // The context ran on the legacy default stream, so this copy waits for the GEMM.
      if (cudaMemcpy(c.data(), dc, bytes(c), cudaMemcpyDeviceToHost) != cudaSuccess && error.empty())
        error = "the copy back failed";
      record(std::string("cuda ") + rung, error);
    }
  }
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
#else
  line += "; cuda skipped (the package has no CUDA backend)";
#endif
  std::puts(line.c_str());
  return ok ? 0 : 1;
}
