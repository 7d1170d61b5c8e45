#include "cuda/runtime/reference_gpu.hpp"

#include <cublas_v2.h>
#include <fmt/format.h>

#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "core/element.hpp"
#include "core/verify.hpp"
#include "cuda/runtime/buffer.hpp"
#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda {
namespace {

// Positions of C recomputed on the host to check the device's result.
constexpr int kSpotChecks = 256;

// op(X) as dense row-major float64 rows x cols, and its absolute values, split over threads.
void unpack(const Matrix& x, bool transposed, std::int64_t rows, std::int64_t cols, std::vector<double>& value,
            std::vector<double>& magnitude) {
  value.resize(static_cast<std::size_t>(rows * cols));
  magnitude.resize(value.size());
  const auto work = [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i)
      for (std::int64_t j = 0; j < cols; ++j) {
        const double v = load_element(x.data, transposed ? x.offset(j, i) : x.offset(i, j), x.dtype);
        value[static_cast<std::size_t>(i * cols + j)] = v;
        magnitude[static_cast<std::size_t>(i * cols + j)] = std::fabs(v);
      }
  };
  const std::int64_t threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::jthread> pool;
  const std::int64_t per = (rows + threads - 1) / threads;
  for (std::int64_t t = 0; t < threads; ++t)
    if (t * per < rows) pool.emplace_back(work, t * per, std::min(rows, (t + 1) * per));
}

struct CublasHandle {
  cublasHandle_t h = nullptr;
  ~CublasHandle() {
    if (h) cublasDestroy(h);
  }
};

// Row-major C (m x n) = A (m x k) B (k x n) in float64: cuBLAS computes the column-major
// C^T = B^T A^T, which is the same memory.
Status dgemm_row_major(cublasHandle_t h, std::int64_t m, std::int64_t n, std::int64_t k, const double* a,
                       const double* b, double* c) {
  const double one = 1.0, zero = 0.0;
  CUBLAS_CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                           static_cast<int>(k), &one, b, static_cast<int>(n), a, static_cast<int>(k), &zero, c,
                           static_cast<int>(n)));
  return Status::ok();
}

}  // namespace

Status reference_on_device(const GemmProblem& p, cudaStream_t stream, ReferenceResult& out) {
  const double fmas = static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
  if (fmas < kDeviceReferenceMinFmas || is_scale_only(p) || p.m == 0 || p.n == 0) return reference_gemm(p, out);
  GEMMLAB_TRY(validate(p));
  std::vector<double> a, abs_a, b, abs_b;
  unpack(p.a, p.op_a == Op::T, p.m, p.k, a, abs_a);
  unpack(p.b, p.op_b == Op::T, p.k, p.n, b, abs_b);
  const std::size_t a_bytes = a.size() * sizeof(double), b_bytes = b.size() * sizeof(double);
  const std::size_t c_bytes = static_cast<std::size_t>(p.m * p.n) * sizeof(double);
  DeviceMemory d_a, d_b, d_c;
  GEMMLAB_TRY(DeviceMemory::allocate(a_bytes, d_a));
  GEMMLAB_TRY(DeviceMemory::allocate(b_bytes, d_b));
  GEMMLAB_TRY(DeviceMemory::allocate(c_bytes, d_c));
  CublasHandle handle;
  CUBLAS_CHECK(cublasCreate(&handle.h));
  CUBLAS_CHECK(cublasSetStream(handle.h, stream));
  out.m = p.m;
  out.n = p.n;
  out.value.resize(static_cast<std::size_t>(p.m * p.n));
  out.magnitude.resize(out.value.size());
  // Two products: the values, and |A| |B| for the error bound.
  for (int pass = 0; pass < 2; ++pass) {
    const std::vector<double>& ha = pass == 0 ? a : abs_a;
    const std::vector<double>& hb = pass == 0 ? b : abs_b;
    std::vector<double>& hc = pass == 0 ? out.value : out.magnitude;
    CUDA_CHECK(cudaMemcpyAsync(d_a.data(), ha.data(), a_bytes, cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaMemcpyAsync(d_b.data(), hb.data(), b_bytes, cudaMemcpyHostToDevice, stream));
    GEMMLAB_TRY(dgemm_row_major(handle.h, p.m, p.n, p.k, d_a.as<double>(), d_b.as<double>(), d_c.as<double>()));
    CUDA_CHECK(cudaMemcpyAsync(hc.data(), d_c.data(), c_bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  // The device's answer is only trusted after host float64 dot products agree with it.
  std::mt19937_64 pick(static_cast<std::uint64_t>(p.m * 131 + p.n * 17 + p.k));
  for (int s = 0; s < kSpotChecks; ++s) {
    const std::int64_t i = static_cast<std::int64_t>(pick() % static_cast<std::uint64_t>(p.m));
    const std::int64_t j = static_cast<std::int64_t>(pick() % static_cast<std::uint64_t>(p.n));
    double sum = 0, mag = 0;
    for (std::int64_t q = 0; q < p.k; ++q) {
      sum += a[static_cast<std::size_t>(i * p.k + q)] * b[static_cast<std::size_t>(q * p.n + j)];
      mag += abs_a[static_cast<std::size_t>(i * p.k + q)] * abs_b[static_cast<std::size_t>(q * p.n + j)];
    }
    const std::size_t idx = static_cast<std::size_t>(i * p.n + j);
    const double bound = 2.0 * gamma_bound(static_cast<double>(p.k), unit_roundoff(DType::F64)) * mag;
    if (!(std::fabs(out.value[idx] - sum) <= bound) || !(std::fabs(out.magnitude[idx] - mag) <= bound))
      return {StatusCode::InternalError,
              fmt::format("device float64 reference disagrees with the host at C({}, {}): {} vs {}", i, j,
                          out.value[idx], sum)};
  }
  apply_alpha_beta(p, out);
  return Status::ok();
}

}  // namespace gemmlab::cuda
