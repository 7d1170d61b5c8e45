// Reading, writing and rounding elements of any stored type on the host: the harness
// rounds its float inputs to the storage type, and the references read them back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "gemmlab/types.hpp"

namespace gemmlab {

inline std::uint32_t float_bits(float value) {
  std::uint32_t word;
  std::memcpy(&word, &value, sizeof word);
  return word;
}
inline float bits_float(std::uint32_t word) {
  float value;
  std::memcpy(&value, &word, sizeof value);
  return value;
}

inline double bf16_bits_to_double(std::uint16_t bits) {
  return bits_float(static_cast<std::uint32_t>(bits) << 16);
}

// IEEE binary32: 23 stored mantissa bits under an 8-bit exponent.
inline constexpr std::uint32_t kF32ExponentMask = 0x7F800000u;
inline constexpr std::uint32_t kF32MantissaMask = 0x007FFFFFu;

// Keeps the top (23 - dropped) mantissa bits of a float, rounding to nearest with ties to
// even; infinities stay, NaN stays a (quiet) NaN, a carry into the exponent gives the next
// binade or infinity, as IEEE rounding does.
inline std::uint32_t round_mantissa(std::uint32_t word, int dropped) {
  const std::uint32_t low = (1u << dropped) - 1u;
  if ((word & kF32ExponentMask) == kF32ExponentMask)
    return (word & kF32MantissaMask) != 0 ? (word | (1u << 22)) & ~low : word;
  const std::uint32_t half_minus_one = (low >> 1);
  word += half_minus_one + ((word >> dropped) & 1u);
  return word & ~low;
}

// Round-to-nearest-even float -> bf16 (8 significand bits), NaN kept a NaN.
inline std::uint16_t float_to_bf16_bits(float value) {
  constexpr int kDropped = 16;  // bf16 is the top half of a binary32
  return static_cast<std::uint16_t>(round_mantissa(float_bits(value), kDropped) >> kDropped);
}

// Round-to-nearest-even float -> tf32 (11 significand bits), as a float whose low 13
// mantissa bits are zero: the value a tensor core that rounds would multiply.
inline float round_to_tf32(float value) {
  constexpr int kDropped = 13;  // 23 stored mantissa bits, tf32 keeps 10
  return bits_float(round_mantissa(float_bits(value), kDropped));
}

// The value `value` takes once stored as `type` (round to nearest even). tf32 is stored
// as float32 (the tensor cores reduce it), so storing it changes nothing.
inline float round_to_storage(float value, DType type) {
  switch (type) {
    case DType::BF16: return bits_float(static_cast<std::uint32_t>(float_to_bf16_bits(value)) << 16);
    case DType::F16: return static_cast<float>(static_cast<_Float16>(value));
    case DType::F32:
    case DType::TF32:
    case DType::F64: return value;
  }
  return value;
}

// `values` (already representable in `type`: see round_to_storage) in `type`'s storage.
inline std::vector<std::byte> encode(std::span<const float> values, DType type) {
  std::vector<std::byte> out(values.size() * storage_bytes(type));
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::byte* dst = out.data() + i * storage_bytes(type);
    switch (type) {
      case DType::BF16: {
        const std::uint16_t bits = float_to_bf16_bits(values[i]);
        std::memcpy(dst, &bits, sizeof bits);
        break;
      }
      case DType::F16: {
        const auto half = static_cast<_Float16>(values[i]);
        std::memcpy(dst, &half, sizeof half);
        break;
      }
      case DType::F32:
      case DType::TF32: std::memcpy(dst, &values[i], sizeof(float)); break;
      case DType::F64: {
        const double wide = values[i];
        std::memcpy(dst, &wide, sizeof wide);
        break;
      }
    }
  }
  return out;
}

// `type`'s storage (encode's bytes, or a device's) back to floats, into `out` (one float per
// stored element: out.size() of them). Every bf16 and f16 value is a float exactly, NaN
// included, so decode(encode(x)) is x bit for bit where x is representable (round_to_storage).
inline void decode(std::span<const std::byte> stored, DType type, std::span<float> out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::byte* src = stored.data() + i * storage_bytes(type);
    switch (type) {
      case DType::BF16: {
        std::uint16_t bits;
        std::memcpy(&bits, src, sizeof bits);
        out[i] = bits_float(static_cast<std::uint32_t>(bits) << 16);
        break;
      }
      case DType::F16: {
        _Float16 half;
        std::memcpy(&half, src, sizeof half);
        out[i] = static_cast<float>(half);
        break;
      }
      case DType::F32:
      case DType::TF32: std::memcpy(&out[i], src, sizeof(float)); break;
      case DType::F64: {
        double wide;
        std::memcpy(&wide, src, sizeof wide);
        out[i] = static_cast<float>(wide);
        break;
      }
    }
  }
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
