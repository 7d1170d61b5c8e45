// A GEMM problem with its buffers owned on the host: the one way every test suite (unit,
// gpu) builds its inputs. Backend-neutral: a device suite uploads the storage and swaps the
// data pointers of a copy of `problem`; verification then reads C back into a host vector.
//
//   HostProblem hp = make_host_problem({.m = 33, .n = 65, .k = 17, .op_a = Op::T,
//                                       .layout = Layout::ColMajor, .ld_padding = 3,
//                                       .alpha = 0.75, .beta = -1.5, .seed = seed});
//   gemm(hp.problem, variant);            // C computed in place in hp.c.storage
//
// Each matrix's storage holds lines x ld floats: the elements, then ld padding. The padding
// of A and B holds NaN (a rung that reads past a line poisons its result); the padding of C
// holds random canaries, compared bitwise after the run.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "core/random.hpp"
#include "core/reference.hpp"
#include "core/verify.hpp"
#include "gemmlab/matrix.hpp"
#include "gemmlab/problem.hpp"
#include "gemmlab/types.hpp"

namespace gemmlab::testing {

struct ProblemSpec {
  std::int64_t m = 1, n = 1, k = 1;
  Op op_a = Op::N, op_b = Op::N;
  // Storage order: `layout` gives the default of all three; set layout_a, layout_b or
  // layout_c to give one matrix its own. The defaults are taken when the spec is built
  // (designated initializers): assigning `layout` afterwards changes none of the three.
  Layout layout = Layout::RowMajor;
  Layout layout_a = layout;
  Layout layout_b = layout;
  Layout layout_c = layout;
  std::int64_t ld_padding = 0;               // extra elements in every leading dimension
  double alpha = 1.0, beta = 0.0;
  std::uint64_t seed = 0;
  Distribution distribution = Distribution::Uniform;  // Integer: exact products and sums
  bool nan_c = false;  // C holds NaN before the run (beta = 0 must not read it)
  bool nan_a = false;  // A holds NaN (k = 0 or alpha = 0 must not read it)
  bool nan_b = false;
  bool null_when_empty = false;  // a matrix without elements gets a null data pointer

  // "33x65x17 TN A=row B=col C=row pad=3 alpha=0.75 beta=-1.5 seed=42", for SCOPED_TRACE.
  std::string describe() const {
    return fmt::format("{}x{}x{} {}{} A={} B={} C={} pad={} alpha={} beta={} seed={}", m, n, k,
                       to_string(op_a), to_string(op_b), to_string(layout_a),
                       to_string(layout_b), to_string(layout_c), ld_padding, alpha, beta, seed);
  }
};

// What every suite sweeps: both storage orders and both operations.
inline constexpr std::array<Layout, 2> kLayouts = {Layout::RowMajor, Layout::ColMajor};
inline constexpr std::array<Op, 2> kOps = {Op::N, Op::T};

struct Dims {
  std::int64_t m, n, k;
};
// Awkward shapes (STYLE.md, practice 6): 1x1x1, primes, k = 1, a single row or column.
inline constexpr std::array<Dims, 6> kAwkwardDims = {
    Dims{1, 1, 1}, Dims{7, 5, 3}, Dims{13, 1, 17}, Dims{1, 11, 5}, Dims{17, 19, 1}, Dims{31, 29, 37}};

// One matrix: its descriptor and the storage it points into.
struct HostMatrix {
  Matrix desc;                 // desc.data points at storage (or is null, see null_when_empty)
  std::vector<float> storage;  // (lines, ld): elements and padding

  float& at(std::int64_t i, std::int64_t j) { return storage[static_cast<std::size_t>(desc.offset(i, j))]; }
  float at(std::int64_t i, std::int64_t j) const {
    return storage[static_cast<std::size_t>(desc.offset(i, j))];
  }
  bool is_padding(std::size_t index) const {
    return static_cast<std::int64_t>(index) % desc.ld >= desc.contiguous_extent();
  }
};

// Owns its buffers; `problem` points into them, so it moves but never copies.
struct HostProblem {
  ProblemSpec spec;
  HostMatrix a, b, c;
  std::vector<float> c_before;  // C's storage as built: input of verify() and no-op checks
  GemmProblem problem;

  HostProblem() = default;
  HostProblem(HostProblem&&) = default;
  HostProblem& operator=(HostProblem&&) = default;
  HostProblem(const HostProblem&) = delete;
  HostProblem& operator=(const HostProblem&) = delete;
};

namespace detail {

// Independent random streams per buffer of one problem.
enum RandomStream : std::uint64_t { kStreamA = 1, kStreamB = 2, kStreamC = 3, kStreamCanary = 4 };

inline HostMatrix make_matrix(std::int64_t rows, std::int64_t cols, Layout layout,
                              std::int64_t padding) {
  HostMatrix x;
  x.desc.rows = rows;
  x.desc.cols = cols;
  x.desc.layout = layout;
  x.desc.dtype = DType::F32;
  x.desc.ld = std::max<std::int64_t>(1, x.desc.contiguous_extent()) + padding;
  x.storage.resize(static_cast<std::size_t>(x.desc.lines() * x.desc.ld));
  return x;
}

// Elements random (or NaN), padding NaN for inputs and random canaries for C.
inline void fill_matrix(HostMatrix& x, const ProblemSpec& spec, std::uint64_t stream, bool nan_elements,
                        bool canary_padding) {
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  if (nan_elements) std::fill(x.storage.begin(), x.storage.end(), kNaN);
  else fill_random(x.storage, spec.seed, stream, spec.distribution);
  std::vector<float> canary(x.storage.size());
  if (canary_padding) fill_random(canary, spec.seed, kStreamCanary);
  for (std::size_t idx = 0; idx < x.storage.size(); ++idx)
    if (x.is_padding(idx)) x.storage[idx] = canary_padding ? canary[idx] : kNaN;
}

inline void point_at(HostMatrix& x, bool null_when_empty) {
  x.desc.data = null_when_empty && x.desc.empty() ? nullptr : x.storage.data();
}

}  // namespace detail

inline HostProblem make_host_problem(const ProblemSpec& spec) {
  HostProblem hp;
  hp.spec = spec;
  const bool ta = spec.op_a == Op::T, tb = spec.op_b == Op::T;
  // A is stored m x k (k x m under T), B k x n (n x k under T), C m x n.
  hp.a = detail::make_matrix(ta ? spec.k : spec.m, ta ? spec.m : spec.k, spec.layout_a, spec.ld_padding);
  hp.b = detail::make_matrix(tb ? spec.n : spec.k, tb ? spec.k : spec.n, spec.layout_b, spec.ld_padding);
  hp.c = detail::make_matrix(spec.m, spec.n, spec.layout_c, spec.ld_padding);
  detail::fill_matrix(hp.a, spec, detail::kStreamA, spec.nan_a, /*canary_padding=*/false);
  detail::fill_matrix(hp.b, spec, detail::kStreamB, spec.nan_b, /*canary_padding=*/false);
  detail::fill_matrix(hp.c, spec, detail::kStreamC, spec.nan_c, /*canary_padding=*/true);
  detail::point_at(hp.a, spec.null_when_empty);
  detail::point_at(hp.b, spec.null_when_empty);
  detail::point_at(hp.c, spec.null_when_empty);
  hp.c_before = hp.c.storage;

  GemmProblem& p = hp.problem;
  p.m = spec.m;
  p.n = spec.n;
  p.k = spec.k;
  p.op_a = spec.op_a;
  p.op_b = spec.op_b;
  p.alpha = spec.alpha;
  p.beta = spec.beta;
  p.a = hp.a.desc;
  p.b = hp.b.desc;
  p.c = hp.c.desc;
  p.compute = DType::F32;
  return hp;
}

// The float64 reference of the problem as built (C as it was before any run).
inline Status host_reference(const HostProblem& hp, ReferenceResult& out) {
  GemmProblem before = hp.problem;
  before.c.data = const_cast<float*>(hp.c_before.data());
  return reference_gemm(before, out);
}

// Verifies `result` (C's whole storage after a run, on the host) against the reference.
inline Verification verify_result(const HostProblem& hp, std::span<const float> result,
                                  const ReferenceResult& reference) {
  return verify(hp.problem, result, hp.c_before, reference, hp.spec.nan_c);
}

}  // namespace gemmlab::testing
