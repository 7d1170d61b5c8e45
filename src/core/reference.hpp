// The float64 reference GEMM on the host.
#pragma once

#include <cstdint>
#include <vector>

#include "gemmlab/problem.hpp"

namespace gemmlab {

// What the reference computes, for a problem whose data is in host memory:
//   value(i, j)     = alpha * sum_p op(A)(i,p) op(B)(p,j) + beta * C0(i,j)   (in float64)
//   magnitude(i, j) = |alpha| * sum_p |op(A)(i,p)| |op(B)(p,j)| + |beta| * |C0(i,j)|
// both m x n row-major, with alpha = effective_alpha() (FP8 operands: the stored elements
// summed, their scales applied with alpha). The magnitude scales the error bound of every element.
// With beta = 0, C0 is not read. Blocked and threaded over all cores.
struct ReferenceResult {
  std::int64_t m = 0, n = 0;
  std::vector<double> value;
  std::vector<double> magnitude;
};

Status reference_gemm(const GemmProblem& problem, ReferenceResult& out);

// The last step of both: value <- alpha * value + beta * C0 and the same for the
// magnitude (beta = 0 does not read C0), for a result holding the bare sums.
void apply_alpha_beta(const GemmProblem& problem, ReferenceResult& out);

// The textbook triple loop in float64, for testing the reference itself.
Status reference_gemm_naive(const GemmProblem& problem, ReferenceResult& out);

// Problems of at least this many multiply-adds get their reference on the device from the
// CUDA executor (cuda/runtime/reference_gpu.cpp); smaller ones stay on the host, where the
// reference is exact in the same arithmetic and quick enough.
inline constexpr double kDeviceReferenceMinFmas = 1024.0 * 1024.0 * 1024.0;

// ---- sampled references ------------------------------------------------------------------
// A problem whose full reference would not fit host memory, or would take too long, is
// checked at a sample of C's elements instead: every pair (rows[r], cols[c]), a grid of
// rows x cols positions, so that a handful of rows of op(A) and columns of op(B) serve
// thousands of dot products.
struct SamplePositions {
  std::vector<std::int64_t> rows, cols;  // ascending, distinct
  std::int64_t count() const { return static_cast<std::int64_t>(rows.size() * cols.size()); }
};

// About this many elements of C a sampled check compares (a grid, so a few more or fewer).
inline constexpr std::int64_t kVerifySamples = 4096;

// Positions drawn with `seed` (the run's, so a failure replays): about `samples` of them,
// every row and column when C has fewer. The first and last row and column are always among
// them: the four corners, and the last row and column, where partial tiles end.
SamplePositions sample_positions(std::int64_t m, std::int64_t n, std::uint64_t seed,
                                 std::int64_t samples = kVerifySamples);

// The reference at the sampled positions only, as reference_gemm() computes it there:
// `out` is rows.size() x cols.size(), row-major (out.m, out.n are those counts). Memory
// beyond the result: a block of K of the sampled rows and columns, per thread.
Status reference_sampled(const GemmProblem& problem, const SamplePositions& positions, ReferenceResult& out);

// The host bytes reference_sampled() allocates at most, for the memory plan.
std::uint64_t reference_sampled_bytes(const SamplePositions& positions);

}  // namespace gemmlab
