// Tensor maps for the tensor memory accelerator (TMA): a 2D tile of a row-major matrix,
// loaded into shared memory with the 128-byte swizzle that wgmma reads conflict-free.
// Encoded by the driver's cuTensorMapEncodeTiled, reached through the runtime's entry-point
// query so that nothing links libcuda directly.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "gemmlab/status.hpp"

namespace gemmlab::cuda {

enum class TmaElement : std::uint8_t { BF16, F16, F32, Byte };  // Byte: FP8 (e4m3, e5m2)

// A row-major matrix of `rows` x `cols` elements, row pitch `ld` elements, loaded as
// boxes of box_rows x box_cols (box_cols x element size must be 128 bytes for the swizzle).
// Elements outside the matrix read as zeros. Requirements (reported, never violated): base
// 16-byte aligned, ld x element size a multiple of 16 bytes below 2^40, rows and cols
// in [1, 2^32), box sides in [1, 256].
struct TmaMatrix {
  const void* base;
  std::uint64_t rows, cols, ld;
  TmaElement element;
  std::uint32_t box_rows, box_cols;
};

// Why TMA cannot address this matrix (empty Status when it can); the message names the
// operand, e.g. "A: row pitch of 2006 bytes is not a multiple of 16".
Status tma_requirements(const TmaMatrix& m, const char* operand);

Status encode_tensor_map(const TmaMatrix& m, const char* operand, CUtensorMap& out);

}  // namespace gemmlab::cuda
