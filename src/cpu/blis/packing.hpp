// Packing for the BLIS-style rungs (05_packed_simd, 06_threaded): a block of op(A) or op(B)
// is copied into micro-panels that the micro-kernel then reads strictly sequentially.
//
// Every canonical operand is a strided view (operands.hpp), so the transposition is
// absorbed here and the micro-kernel never sees it.
//
// Packed formats (W = MR for A, NR for B), zero-padded to whole panels:
//   A block (mc, kc) -> ceil(mc / MR) panels, panel q holds dst[q*MR*kc + p*MR + r]
//                       = op(A)(i0 + q*MR + r, p0 + p), and 0 where the row is past mc;
//   B block (kc, nc) -> ceil(nc / NR) panels, panel q holds dst[q*NR*kc + p*NR + c]
//                       = op(B)(p0 + p, j0 + q*NR + c), and 0 where the column is past nc.
// The zeros let the micro-kernel always compute a full MR x NR tile; the driver keeps
// only the part that lies inside C.
#pragma once

#include <cstdint>

#include "cpu/blis/operands.hpp"

namespace gemmlab::cpu {

// Packs one panel: `w` <= `width` lines of `kc` elements, element (line r, step p) read at
// src[r * line_stride + p * step_stride], written to dst[p * width + r]; lines w..width-1
// are written as zeros. Fast paths for step_stride == 1 (lines contiguous in memory: a
// transpose) and line_stride == 1 (a panel row contiguous: a copy).
void pack_panel(float* dst, const float* src, int width, int w, std::int64_t kc,
                std::int64_t line_stride, std::int64_t step_stride);

// op(A)(i0 .. i0+mc, p0 .. p0+kc) into MR-row panels; writes round_up(mc, mr) * kc floats.
void pack_a(float* dst, const StridedView& a, std::int64_t i0, std::int64_t mc, std::int64_t p0,
            std::int64_t kc, int mr);

// Panels first_panel .. last_panel-1 (of NR columns each) of op(B)(p0 .. p0+kc, j0 .. j0+nc);
// panel q lands at dst + q * nr * kc, so threads can each pack a share of one block.
void pack_b(float* dst, const StridedView& b, std::int64_t p0, std::int64_t kc, std::int64_t j0,
            std::int64_t nc, int nr, std::int64_t first_panel, std::int64_t last_panel);

}  // namespace gemmlab::cpu
