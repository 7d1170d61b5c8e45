// Reading and writing elements of any stored type as double, for host-side code.
#pragma once

#include <cstdint>
#include <cstring>

#include "gemmlab/types.hpp"

namespace gemmlab {

inline double bf16_bits_to_double(std::uint16_t bits) {
  const std::uint32_t word = static_cast<std::uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof value);
  return value;
}

// Round-to-nearest-even float -> bf16, NaN kept a NaN.
inline std::uint16_t float_to_bf16_bits(float value) {
  std::uint32_t word;
  std::memcpy(&word, &value, sizeof word);
  if ((word & 0x7F800000u) == 0x7F800000u && (word & 0x007FFFFFu) != 0)
    return static_cast<std::uint16_t>((word >> 16) | 0x0040u);
  word += 0x7FFFu + ((word >> 16) & 1u);
  return static_cast<std::uint16_t>(word >> 16);
}

inline double load_element(const void* data, std::int64_t offset, DType type) {
  switch (type) {
    case DType::F32:
    case DType::TF32: return static_cast<const float*>(data)[offset];
    case DType::F64: return static_cast<const double*>(data)[offset];
    case DType::BF16: return bf16_bits_to_double(static_cast<const std::uint16_t*>(data)[offset]);
    case DType::F16: return static_cast<double>(static_cast<const _Float16*>(data)[offset]);
  }
  return 0.0;
}

}  // namespace gemmlab
