// Per-tensor quantisation of a matrix to an FP8 type, as a framework quantises a tensor for
// cuBLASLt: the largest magnitude maps onto the type's largest finite value, every element is
// stored as its value over that scale, rounded, and the scale multiplies the product back
// (GemmProblem::scale_a, scale_b). The harness quantises its FP8 operands so, and so do the
// tests.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/element.hpp"
#include "gemmlab/matrix.hpp"

namespace gemmlab {

// The scale for a tensor whose largest magnitude is `amax`: amax over the type's largest
// finite value, in float (a device reads the very value the reference multiplies by), or 1
// for a tensor of zeros.
inline float fp8_scale(float amax, DType type) {
  return amax > 0.0f ? amax / static_cast<float>(fp8_max_finite(type)) : 1.0f;
}

// `storage` (lines x ld floats of the matrix `shape` describes, padding included) quantised to
// `type` in place: each value divided by the scale and rounded (round_to_storage), so that it
// holds the stored elements. Only the matrix's own elements set the scale (the padding may
// hold NaN or anything else). Returns the scale.
inline float quantise_per_tensor(const Matrix& shape, DType type, std::span<float> storage) {
  const std::int64_t extent = shape.contiguous_extent();
  float amax = 0.0f;
  for (std::int64_t line = 0; line < shape.lines(); ++line)
    for (std::int64_t e = 0; e < extent; ++e) {
      const float magnitude = std::fabs(storage[static_cast<std::size_t>(line * shape.ld + e)]);
      if (magnitude > amax) amax = magnitude;
    }
  const float scale = fp8_scale(amax, type);
  for (float& value : storage) value = round_to_storage(value / scale, type);
  return scale;
}

}  // namespace gemmlab
