#include "cpu/blis/packing.hpp"

#include <algorithm>

namespace gemmlab::cpu {
namespace {

// W known at compile time: the compiler unrolls the line loop and keeps the stores dense.
template <int W>
void pack_panel_fixed(float* dst, const float* src, int w, std::int64_t kc,
                      std::int64_t line_stride, std::int64_t step_stride) {
  if (w == W && step_stride == 1) {
    // Lines contiguous (op(A) = A row-major, op(B) = B^T): W read streams, one write stream.
    const float* line[W];
    for (int r = 0; r < W; ++r) line[r] = src + r * line_stride;
    for (std::int64_t p = 0; p < kc; ++p, dst += W)
#pragma GCC unroll 32
      for (int r = 0; r < W; ++r) dst[r] = line[r][p];
  } else if (w == W && line_stride == 1) {
    // A panel row contiguous (op(B) = B row-major, op(A) = A^T): a copy of W floats per step.
    for (std::int64_t p = 0; p < kc; ++p, dst += W, src += step_stride)
#pragma GCC unroll 32
      for (int r = 0; r < W; ++r) dst[r] = src[r];
  } else {
    // Edge panel (w < W) or an unusual stride pair: element by element, zeros past w.
    for (std::int64_t p = 0; p < kc; ++p, dst += W) {
      for (int r = 0; r < w; ++r) dst[r] = src[r * line_stride + p * step_stride];
      for (int r = w; r < W; ++r) dst[r] = 0.0f;
    }
  }
}

void pack_panel_any(float* dst, const float* src, int width, int w, std::int64_t kc,
                    std::int64_t line_stride, std::int64_t step_stride) {
  for (std::int64_t p = 0; p < kc; ++p, dst += width) {
    for (int r = 0; r < w; ++r) dst[r] = src[r * line_stride + p * step_stride];
    for (int r = w; r < width; ++r) dst[r] = 0.0f;
  }
}

}  // namespace

void pack_panel(float* dst, const float* src, int width, int w, std::int64_t kc,
                std::int64_t line_stride, std::int64_t step_stride) {
  // The widths of the micro-kernel table (MR and NR of every ISA) get unrolled copies.
  switch (width) {
    case 4: return pack_panel_fixed<4>(dst, src, w, kc, line_stride, step_stride);
    case 6: return pack_panel_fixed<6>(dst, src, w, kc, line_stride, step_stride);
    case 8: return pack_panel_fixed<8>(dst, src, w, kc, line_stride, step_stride);
    case 12: return pack_panel_fixed<12>(dst, src, w, kc, line_stride, step_stride);
    case 16: return pack_panel_fixed<16>(dst, src, w, kc, line_stride, step_stride);
    case 32: return pack_panel_fixed<32>(dst, src, w, kc, line_stride, step_stride);
    default: return pack_panel_any(dst, src, width, w, kc, line_stride, step_stride);
  }
}

void pack_a(float* dst, const StridedView& a, std::int64_t i0, std::int64_t mc, std::int64_t p0,
            std::int64_t kc, int mr) {
  // Panel lines are rows of op(A): a line steps by a.rs, a step along k by a.cs.
  for (std::int64_t q = 0; q * mr < mc; ++q) {
    const std::int64_t i = i0 + q * mr;
    const int w = static_cast<int>(std::min<std::int64_t>(mr, mc - q * mr));
    pack_panel(dst + q * mr * kc, a.data + i * a.rs + p0 * a.cs, mr, w, kc, a.rs, a.cs);
  }
}

void pack_b(float* dst, const StridedView& b, std::int64_t p0, std::int64_t kc, std::int64_t j0,
            std::int64_t nc, int nr, std::int64_t first_panel, std::int64_t last_panel) {
  // Panel lines are columns of op(B): a line steps by b.cs, a step along k by b.rs.
  for (std::int64_t q = first_panel; q < last_panel; ++q) {
    const std::int64_t j = j0 + q * nr;
    const int w = static_cast<int>(std::min<std::int64_t>(nr, nc - q * nr));
    pack_panel(dst + q * nr * kc, b.data + p0 * b.rs + j * b.cs, nr, w, kc, b.cs, b.rs);
  }
}

}  // namespace gemmlab::cpu
