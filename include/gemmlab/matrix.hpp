// Matrix descriptors: a pointer, a shape, a leading dimension, a layout and an element type.
#pragma once

#include <cstdint>

#include "gemmlab/types.hpp"

namespace gemmlab {

// A type-erased view of a matrix that someone else owns (host or device memory).
// Element (i, j) lives at data[i * ld + j] (row-major) or data[i + j * ld] (column-major).
struct Matrix {
  void* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t ld = 0;
  Layout layout = Layout::RowMajor;
  DType dtype = DType::F32;

  // Extent along the contiguous dimension: the smallest legal leading dimension.
  std::int64_t contiguous_extent() const { return layout == Layout::RowMajor ? cols : rows; }
  // Number of lines (rows of a row-major matrix, columns of a column-major one).
  std::int64_t lines() const { return layout == Layout::RowMajor ? rows : cols; }
  bool empty() const { return rows == 0 || cols == 0; }
  // Offset in elements of (i, j); callers guarantee it fits (validate() checks).
  std::int64_t offset(std::int64_t i, std::int64_t j) const {
    return layout == Layout::RowMajor ? i * ld + j : i + j * ld;
  }
  // Elements spanned from the first to one past the last, (lines - 1) * ld + extent.
  std::int64_t span_elements() const {
    return empty() ? 0 : (lines() - 1) * ld + contiguous_extent();
  }
};

// Typed host-side accessor, for references and tests.
template <class T>
struct HostView {
  T* data;
  Matrix desc;
  T& operator()(std::int64_t i, std::int64_t j) const { return data[desc.offset(i, j)]; }
};

}  // namespace gemmlab
