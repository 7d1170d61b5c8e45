// The float64 reference: op(A) and op(B) are unpacked to row-major float64 once, then
// C is accumulated in blocks of B that stay in cache, rows of C split across threads.
#include "core/reference.hpp"

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include "core/element.hpp"

namespace gemmlab {
namespace {

// Block sizes of the reference's loops: a KB x NB block of B (256 KiB of doubles) stays
// in L2 while every row of C in the thread's range passes over it.
constexpr std::int64_t kBlockK = 128;
constexpr std::int64_t kBlockN = 256;

// acc[j] += a * b[j] and mag[j] += |a| * |b[j]| over one block row; compiled for the
// widest vector unit the machine has (the reference must be quick on any x86 machine).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2,fma", "default")))
#endif
void axpy_with_magnitude(std::int64_t count, double a, const double* __restrict b,
                         double* __restrict acc, double* __restrict mag) {
  const double abs_a = std::fabs(a);
  for (std::int64_t j = 0; j < count; ++j) {
    acc[j] += a * b[j];
    mag[j] += abs_a * std::fabs(b[j]);
  }
}

// op(X) as a dense row-major float64 matrix of `rows` x `cols`.
std::vector<double> unpack(const Matrix& x, bool transposed, std::int64_t rows, std::int64_t cols) {
  std::vector<double> out(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      out[static_cast<std::size_t>(i * cols + j)] =
          load_element(x.data, transposed ? x.offset(j, i) : x.offset(i, j), x.dtype);
  return out;
}

}  // namespace

void apply_alpha_beta(const GemmProblem& p, ReferenceResult& out) {
  // value = alpha * sum + beta * C0; magnitude = |alpha| * sum|.| + |beta| * |C0|.
  // beta = 0 never reads C0 (it may hold NaN on purpose).
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      const auto idx = static_cast<std::size_t>(i * p.n + j);
      double value = p.alpha * out.value[idx];
      double magnitude = std::fabs(p.alpha) * out.magnitude[idx];
      if (p.beta != 0.0) {
        const double c0 = load_element(p.c.data, p.c.offset(i, j), p.c.dtype);
        value += p.beta * c0;
        magnitude += std::fabs(p.beta) * std::fabs(c0);
      }
      out.value[idx] = value;
      out.magnitude[idx] = magnitude;
    }
}

namespace {

Status prepare(const GemmProblem& p, ReferenceResult& out) {
  GEMMLAB_TRY(validate(p));
  out.m = p.m;
  out.n = p.n;
  out.value.assign(static_cast<std::size_t>(p.m * p.n), 0.0);
  out.magnitude.assign(static_cast<std::size_t>(p.m * p.n), 0.0);
  return Status::ok();
}

}  // namespace

Status reference_gemm(const GemmProblem& p, ReferenceResult& out) {
  GEMMLAB_TRY(prepare(p, out));
  if (p.m == 0 || p.n == 0) return Status::ok();
  if (!is_scale_only(p)) {
    const std::vector<double> a = unpack(p.a, p.op_a == Op::T, p.m, p.k);  // (m, k)
    const std::vector<double> b = unpack(p.b, p.op_b == Op::T, p.k, p.n);  // (k, n)
    const auto work = [&](std::int64_t row_begin, std::int64_t row_end) {
      for (std::int64_t j0 = 0; j0 < p.n; j0 += kBlockN) {
        const std::int64_t nb = std::min(kBlockN, p.n - j0);
        for (std::int64_t p0 = 0; p0 < p.k; p0 += kBlockK) {
          const std::int64_t kb = std::min(kBlockK, p.k - p0);
          for (std::int64_t i = row_begin; i < row_end; ++i) {
            double* acc = &out.value[static_cast<std::size_t>(i * p.n + j0)];
            double* mag = &out.magnitude[static_cast<std::size_t>(i * p.n + j0)];
            for (std::int64_t q = p0; q < p0 + kb; ++q)
              axpy_with_magnitude(nb, a[static_cast<std::size_t>(i * p.k + q)],
                                  &b[static_cast<std::size_t>(q * p.n + j0)], acc, mag);
          }
        }
      }
    };
    const std::int64_t threads = std::clamp<std::int64_t>(
        static_cast<std::int64_t>(std::thread::hardware_concurrency()), 1, std::max<std::int64_t>(p.m, 1));
    // Small problems are not worth a thread.
    if (threads == 1 || p.m * p.n * p.k < (1 << 20)) {
      work(0, p.m);
    } else {
      std::vector<std::jthread> pool;
      const std::int64_t per = (p.m + threads - 1) / threads;
      for (std::int64_t t = 0; t < threads; ++t) {
        const std::int64_t begin = t * per, end = std::min(p.m, begin + per);
        if (begin < end) pool.emplace_back(work, begin, end);
      }
    }
  }
  apply_alpha_beta(p, out);
  return Status::ok();
}

Status reference_gemm_naive(const GemmProblem& p, ReferenceResult& out) {
  GEMMLAB_TRY(prepare(p, out));
  if (!is_scale_only(p)) {
    for (std::int64_t i = 0; i < p.m; ++i)
      for (std::int64_t j = 0; j < p.n; ++j) {
        double sum = 0, mag = 0;
        for (std::int64_t q = 0; q < p.k; ++q) {
          const double x =
              load_element(p.a.data, p.op_a == Op::T ? p.a.offset(q, i) : p.a.offset(i, q), p.a.dtype);
          const double y =
              load_element(p.b.data, p.op_b == Op::T ? p.b.offset(j, q) : p.b.offset(q, j), p.b.dtype);
          sum += x * y;
          mag += std::fabs(x) * std::fabs(y);
        }
        out.value[static_cast<std::size_t>(i * p.n + j)] = sum;
        out.magnitude[static_cast<std::size_t>(i * p.n + j)] = mag;
      }
  }
  apply_alpha_beta(p, out);
  return Status::ok();
}

}  // namespace gemmlab
