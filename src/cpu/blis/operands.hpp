// The canonical problem's operands as strided views, shared by every CPU rung after the
// first: the transposition flags of canonicalize() become a pair of strides, so a loop
// nest reads op(A) and op(B) alike whatever their storage.
//   op(A)(i, p) = a[i * a.rs + p * a.cs]   (N: rs = lda, cs = 1;  T: rs = 1, cs = lda)
//   op(B)(p, j) = b[p * b.rs + j * b.cs]   (N: rs = ldb, cs = 1;  T: rs = 1, cs = ldb)
//   C(i, j)     = c[i * ldc + j]           (always row-major after canonicalize())
#pragma once

#include <cstdint>

#include "gemmlab/problem.hpp"

namespace gemmlab::cpu {

// A read-only strided view: element (r, c) = data[r * rs + c * cs].
struct StridedView {
  const float* data = nullptr;
  std::int64_t rs = 0, cs = 0;
  float operator()(std::int64_t r, std::int64_t c) const { return data[r * rs + c * cs]; }
};

inline StridedView view_a(const RowMajorGemm& g) {
  const auto* a = static_cast<const float*>(g.a);
  return g.trans_a ? StridedView{a, 1, g.lda} : StridedView{a, g.lda, 1};
}

inline StridedView view_b(const RowMajorGemm& g) {
  const auto* b = static_cast<const float*>(g.b);
  return g.trans_b ? StridedView{b, 1, g.ldb} : StridedView{b, g.ldb, 1};
}

// C(rows, cols) <- beta * C; beta == 0 writes zeros without reading (NaN in C stays out).
inline void scale_block(float* c, std::int64_t ldc, std::int64_t rows, std::int64_t cols,
                        double beta) {
  const auto b = static_cast<float>(beta);
  for (std::int64_t i = 0; i < rows; ++i) {
    float* row = c + i * ldc;
    if (beta == 0.0) {
      for (std::int64_t j = 0; j < cols; ++j) row[j] = 0.0f;
    } else if (beta != 1.0) {
      for (std::int64_t j = 0; j < cols; ++j) row[j] *= b;
    }
  }
}

inline std::int64_t round_up(std::int64_t x, std::int64_t multiple) {
  return (x + multiple - 1) / multiple * multiple;
}
inline std::int64_t ceil_div(std::int64_t x, std::int64_t y) { return (x + y - 1) / y; }

}  // namespace gemmlab::cpu
