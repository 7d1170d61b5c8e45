// The float64 reference: op(A) and op(B) are unpacked to row-major float64 once, then
// C is accumulated in blocks of B that stay in cache, rows of C split across threads.
#include "core/reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>
#include <tuple>
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

// Threads for `rows` rows of a reference: one per core, at most one per row.
std::int64_t reference_threads(std::int64_t rows) {
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(std::thread::hardware_concurrency()), 1,
                                  std::max<std::int64_t>(rows, 1));
}

// work(begin, end) over rows [0, rows) split evenly between reference_threads(rows) threads;
// on the calling thread alone for small problems (under 2^20 multiply-adds), not worth a thread.
template <class Work>
void split_rows(std::int64_t rows, double fmas, const Work& work) {
  const std::int64_t threads = reference_threads(rows);
  if (threads == 1 || fmas < (1 << 20)) {
    work(0, rows);
    return;
  }
  std::vector<std::jthread> pool;
  const std::int64_t per = (rows + threads - 1) / threads;
  for (std::int64_t t = 0; t < threads; ++t) {
    const std::int64_t begin = t * per, end = std::min(rows, begin + per);
    if (begin < end) pool.emplace_back(work, begin, end);
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

namespace {

// value = alpha * sum + beta * C0; magnitude = |alpha| * sum|.| + |beta| * |C0|, for the
// result's element (r, c), which is C's element (row(r), col(c)). alpha is the effective one:
// the sums are of the stored elements, and FP8 operands' scales multiply them here. beta = 0
// never reads C0 (it may hold NaN on purpose).
template <class Row, class Col>
void scale_into(const GemmProblem& p, ReferenceResult& out, Row row, Col col) {
  const double alpha = effective_alpha(p);
  for (std::int64_t r = 0; r < out.m; ++r)
    for (std::int64_t c = 0; c < out.n; ++c) {
      const auto idx = static_cast<std::size_t>(r * out.n + c);
      double value = alpha * out.value[idx];
      double magnitude = std::fabs(alpha) * out.magnitude[idx];
      if (p.beta != 0.0) {
        const double c0 = load_element(p.c.data, p.c.offset(row(r), col(c)), p.c.dtype);
        value += p.beta * c0;
        magnitude += std::fabs(p.beta) * std::fabs(c0);
      }
      out.value[idx] = value;
      out.magnitude[idx] = magnitude;
    }
}

}  // namespace

void apply_alpha_beta(const GemmProblem& p, ReferenceResult& out) {
  const auto same = [](std::int64_t x) { return x; };
  scale_into(p, out, same, same);
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
    split_rows(p.m, static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k), work);
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

// ---- sampled references ------------------------------------------------------------------
namespace {

// The K extent a sampled reference unpacks at a time: (sampled rows + columns) x this many
// doubles per thread, whatever K is.
constexpr std::int64_t kSampleBlockK = 2048;

// `want` distinct values of [0, extent), ascending: the first and the last, then random ones.
std::vector<std::int64_t> pick_lines(std::int64_t extent, std::int64_t want, std::mt19937_64& random) {
  std::vector<std::int64_t> lines;
  if (extent <= 0) return lines;
  if (want >= extent) {
    for (std::int64_t i = 0; i < extent; ++i) lines.push_back(i);
    return lines;
  }
  lines = {0, extent - 1};
  while (static_cast<std::int64_t>(lines.size()) < want) {
    const auto line = static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(extent));
    if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

}  // namespace

SamplePositions sample_positions(std::int64_t m, std::int64_t n, std::uint64_t seed, std::int64_t samples) {
  // Its own stream of the seed: the positions do not repeat the inputs' random values.
  std::mt19937_64 random(seed ^ 0x5A3D1E5C0FFEE123ull);
  SamplePositions s;
  // A square grid where C allows it; a thin C gives its few rows (or columns) all, and the
  // other side takes what is left of the samples.
  const auto side = static_cast<std::int64_t>(std::ceil(std::sqrt(static_cast<double>(std::max<std::int64_t>(samples, 1)))));
  const std::int64_t rows = std::min(m, std::max(side, (samples + std::max<std::int64_t>(n, 1) - 1) / std::max<std::int64_t>(n, 1)));
  s.rows = pick_lines(m, rows, random);
  const std::int64_t picked = std::max<std::int64_t>(static_cast<std::int64_t>(s.rows.size()), 1);
  s.cols = pick_lines(n, (samples + picked - 1) / picked, random);
  return s;
}

namespace {

}  // namespace

std::uint64_t reference_sampled_bytes(const SamplePositions& s) {
  const auto rows = static_cast<std::uint64_t>(s.rows.size()), cols = static_cast<std::uint64_t>(s.cols.size());
  const auto threads = static_cast<std::uint64_t>(reference_threads(static_cast<std::int64_t>(rows)));
  // Value and magnitude per sample; each thread its rows' and every column's K block.
  return (2 * rows * cols + (rows + threads * cols) * static_cast<std::uint64_t>(kSampleBlockK)) * sizeof(double);
}

Status reference_sampled(const GemmProblem& p, const SamplePositions& s, ReferenceResult& out) {
  GEMMLAB_TRY(validate(p));
  for (const auto& [lines, extent, name] : {std::tuple{&s.rows, p.m, "row"}, std::tuple{&s.cols, p.n, "column"}})
    for (const std::int64_t line : *lines)
      if (line < 0 || line >= extent)
        return {StatusCode::InvalidValue, fmt::format("sampled {} {} is outside C ({} x {})", name, line, p.m, p.n)};
  out.m = static_cast<std::int64_t>(s.rows.size());
  out.n = static_cast<std::int64_t>(s.cols.size());
  out.value.assign(static_cast<std::size_t>(out.m * out.n), 0.0);
  out.magnitude.assign(out.value.size(), 0.0);
  if (out.m > 0 && out.n > 0 && !is_scale_only(p)) {
    const std::int64_t cols = out.n;
    // Sampled rows [begin, end): op(A)'s rows and op(B)'s columns one K block at a time,
    // each contiguous in K, then their dot products.
    const auto work = [&](std::int64_t begin, std::int64_t end) {
      std::vector<double> a(static_cast<std::size_t>((end - begin) * kSampleBlockK));  // (rows, KB)
      std::vector<double> b(static_cast<std::size_t>(cols * kSampleBlockK));           // (cols, KB)
      for (std::int64_t p0 = 0; p0 < p.k; p0 += kSampleBlockK) {
        const std::int64_t kb = std::min(kSampleBlockK, p.k - p0);
        for (std::int64_t r = begin; r < end; ++r)
          for (std::int64_t q = 0; q < kb; ++q) {
            const std::int64_t i = s.rows[static_cast<std::size_t>(r)], kk = p0 + q;
            a[static_cast<std::size_t>((r - begin) * kb + q)] =
                load_element(p.a.data, p.op_a == Op::T ? p.a.offset(kk, i) : p.a.offset(i, kk), p.a.dtype);
          }
        for (std::int64_t c = 0; c < cols; ++c)
          for (std::int64_t q = 0; q < kb; ++q) {
            const std::int64_t j = s.cols[static_cast<std::size_t>(c)], kk = p0 + q;
            b[static_cast<std::size_t>(c * kb + q)] =
                load_element(p.b.data, p.op_b == Op::T ? p.b.offset(j, kk) : p.b.offset(kk, j), p.b.dtype);
          }
        for (std::int64_t r = begin; r < end; ++r)
          for (std::int64_t c = 0; c < cols; ++c) {
            const double* x = &a[static_cast<std::size_t>((r - begin) * kb)];
            const double* y = &b[static_cast<std::size_t>(c * kb)];
            double sum = 0, mag = 0;
            for (std::int64_t q = 0; q < kb; ++q) {
              sum += x[q] * y[q];
              mag += std::fabs(x[q]) * std::fabs(y[q]);
            }
            out.value[static_cast<std::size_t>(r * cols + c)] += sum;
            out.magnitude[static_cast<std::size_t>(r * cols + c)] += mag;
          }
      }
    };
    split_rows(out.m, static_cast<double>(out.m) * static_cast<double>(out.n) * static_cast<double>(p.k), work);
  }
  scale_into(p, out, [&](std::int64_t r) { return s.rows[static_cast<std::size_t>(r)]; },
             [&](std::int64_t c) { return s.cols[static_cast<std::size_t>(c)]; });
  return Status::ok();
}

}  // namespace gemmlab
