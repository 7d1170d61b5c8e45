// Reading, writing and rounding elements of any stored type on the host: the harness
// rounds its float inputs to the storage type, and the references read them back.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
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

// ---- FP8 (OCP 8-bit floating point, as the Hopper tensor cores read it) -------------------
// A code is sign | exponent | mantissa. e4m3 ("fn"): 4 exponent bits of bias 7, 3 mantissa
// bits, no infinities; S.1111.111 is NaN, so the largest finite is S.1111.110 = 448 and the
// smallest subnormal 2^-9. e5m2: 5 exponent bits of bias 15, 2 mantissa bits, IEEE-like (an
// all-ones exponent is infinity or NaN): largest finite 57344, smallest subnormal 2^-16.
struct Fp8Format {
  int mantissa_bits;
  int bias;
  std::uint8_t max_code;  // the largest finite magnitude's code
  std::uint8_t nan_code;  // the NaN a conversion writes
  bool has_infinity;
};
inline constexpr Fp8Format kE4M3{3, 7, 0x7E, 0x7F, false};
inline constexpr Fp8Format kE5M2{2, 15, 0x7B, 0x7F, true};
inline constexpr const Fp8Format& fp8_format(DType type) { return type == DType::E5M2 ? kE5M2 : kE4M3; }

// The exact value of `code` (every FP8 value is a float).
inline float fp8_to_float(std::uint8_t code, const Fp8Format& f) {
  const int exponent_field = (code & 0x7F) >> f.mantissa_bits;
  const int mantissa = code & ((1 << f.mantissa_bits) - 1);
  const float sign = (code & 0x80) != 0 ? -1.0f : 1.0f;
  // e5m2's all-ones exponent holds infinity and NaN; e4m3 keeps only the all-ones code for NaN.
  const bool special = f.has_infinity ? exponent_field == (0x7F >> f.mantissa_bits) : (code & 0x7F) == 0x7F;
  if (special) {
    if (f.has_infinity && mantissa == 0) return sign * std::numeric_limits<float>::infinity();
    return std::numeric_limits<float>::quiet_NaN();
  }
  // A subnormal has no implicit leading one and the exponent of the smallest normal.
  const int significand = exponent_field == 0 ? mantissa : mantissa | (1 << f.mantissa_bits);
  const int exponent = (exponent_field == 0 ? 1 : exponent_field) - f.bias - f.mantissa_bits;
  return sign * std::ldexp(static_cast<float>(significand), exponent);
}

// float -> FP8, rounding to nearest with ties to even, subnormals included. Like CUDA's
// __NV_SATFINITE conversions: a magnitude beyond the largest finite (infinity too) becomes the
// largest finite of its sign, and NaN stays NaN.
inline std::uint8_t float_to_fp8(float value, const Fp8Format& f) {
  const std::uint32_t word = float_bits(value);
  const auto sign = static_cast<std::uint8_t>((word >> 24) & 0x80u);
  if ((word & kF32ExponentMask) == kF32ExponentMask && (word & kF32MantissaMask) != 0) return f.nan_code;
  const int float_exponent = static_cast<int>((word & kF32ExponentMask) >> 23);
  // Float subnormals lie far below half of either format's smallest subnormal: zero.
  if (float_exponent == 0) return sign;
  const int exponent = float_exponent - 127;  // value = significand * 2^(exponent - 23)
  const std::uint32_t significand = (word & kF32MantissaMask) | (1u << 23);
  // Below the smallest normal, the quantum stays that of the subnormals: more bits go.
  const int min_exponent = 1 - f.bias;
  const int kept_exponent = std::max(exponent, min_exponent);
  const int dropped = 23 - f.mantissa_bits + (kept_exponent - exponent);
  if (dropped > 24) return sign;  // under half the smallest subnormal
  std::uint32_t kept = significand >> dropped;
  const std::uint32_t rest = significand & ((1u << dropped) - 1u), half = 1u << (dropped - 1);
  if (rest > half || (rest == half && (kept & 1u) != 0)) ++kept;
  // `kept` carries the implicit one of a normal (a carry out of the mantissa lands in the
  // exponent by itself): the code is the exponent field above it, 0 for a subnormal.
  const std::int64_t magnitude =
      (static_cast<std::int64_t>(kept_exponent - min_exponent) << f.mantissa_bits) + static_cast<std::int64_t>(kept);
  return static_cast<std::uint8_t>(sign | std::min<std::int64_t>(magnitude, f.max_code));
}

// The largest finite value of an FP8 type: 448 (e4m3) or 57344 (e5m2); 0 for any other type.
inline double fp8_max_finite(DType type) {
  return is_fp8(type) ? static_cast<double>(fp8_to_float(fp8_format(type).max_code, fp8_format(type))) : 0.0;
}

// The value `value` takes once stored as `type` (round to nearest even). tf32 is stored
// as float32 (the tensor cores reduce it), so storing it changes nothing.
inline float round_to_storage(float value, DType type) {
  switch (type) {
    case DType::BF16: return bits_float(static_cast<std::uint32_t>(float_to_bf16_bits(value)) << 16);
    case DType::F16: return static_cast<float>(static_cast<_Float16>(value));
    case DType::E4M3:
    case DType::E5M2: return fp8_to_float(float_to_fp8(value, fp8_format(type)), fp8_format(type));
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
      case DType::E4M3:
      case DType::E5M2: *dst = std::byte{float_to_fp8(values[i], fp8_format(type))}; break;
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
// stored element: out.size() of them). Every bf16, f16 and FP8 value is a float exactly, NaN
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
      case DType::E4M3:
      case DType::E5M2: out[i] = fp8_to_float(std::to_integer<std::uint8_t>(*src), fp8_format(type)); break;
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
    case DType::E4M3:
    case DType::E5M2: return fp8_to_float(static_cast<const std::uint8_t*>(data)[offset], fp8_format(type));
  }
  return 0.0;
}

}  // namespace gemmlab
