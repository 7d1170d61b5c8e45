// The FP8 formats on the host (core/element.hpp): every one of the 256 codes of e4m3 and
// e5m2 decoded and checked against the format's definition, and encoded back to itself;
// rounding to nearest with ties to even at every midpoint between neighbours, subnormals
// included; saturation to the largest finite value; NaN; and the per-tensor quantisation the
// harness applies (core/quantise.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/element.hpp"
#include "core/quantise.hpp"
#include "gemmlab/matrix.hpp"
#include "support/seeds.hpp"

namespace gemmlab {
namespace {

constexpr DType kFp8Types[] = {DType::E4M3, DType::E5M2};
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// What the OCP FP8 specification says a code is, written out from its fields with pow():
// nothing shared with the bit manipulation under test. NaN for the NaN codes, infinity for
// e5m2's infinities.
double defined_value(std::uint8_t code, DType type) {
  const int exponent_bits = type == DType::E4M3 ? 4 : 5, mantissa_bits = 7 - exponent_bits;
  const int bias = type == DType::E4M3 ? 7 : 15;
  const int exponent = (code >> mantissa_bits) & ((1 << exponent_bits) - 1);
  const int mantissa = code & ((1 << mantissa_bits) - 1);
  const double sign = (code & 0x80) != 0 ? -1.0 : 1.0;
  const int all_ones = (1 << exponent_bits) - 1;
  if (type == DType::E4M3 && exponent == all_ones && mantissa == 7) return std::nan("");
  if (type == DType::E5M2 && exponent == all_ones)
    return mantissa == 0 ? sign * std::numeric_limits<double>::infinity() : std::nan("");
  const double fraction = mantissa / std::pow(2.0, mantissa_bits);
  if (exponent == 0) return sign * fraction * std::pow(2.0, 1 - bias);
  return sign * (1.0 + fraction) * std::pow(2.0, exponent - bias);
}

std::uint8_t encode_one(float value, DType type) {
  return std::to_integer<std::uint8_t>(encode(std::vector<float>{value}, type).front());
}

// Every finite positive value of the type, ascending.
std::vector<float> positive_values(DType type) {
  std::vector<float> values;
  for (int code = 0; code < 0x80; ++code) {
    const double value = defined_value(static_cast<std::uint8_t>(code), type);
    if (std::isfinite(value)) values.push_back(static_cast<float>(value));
  }
  return values;
}

TEST(Fp8Format, EveryCodeDecodesToItsDefinitionAndEncodesBackToItself) {
  for (const DType type : kFp8Types) {
    SCOPED_TRACE(to_string(type));
    EXPECT_EQ(storage_bytes(type), 1u);
    int finite = 0;
    for (int code = 0; code < 256; ++code) {
      const auto byte = static_cast<std::uint8_t>(code);
      // Room for the widest element type: the compiler cannot tell that only FP8 is read.
      std::vector<std::byte> stored(sizeof(double));
      stored[0] = std::byte{byte};
      std::vector<float> decoded(1);
      decode(stored, type, decoded);
      const double want = defined_value(byte, type);
      EXPECT_EQ(std::isnan(load_element(stored.data(), 0, type)), std::isnan(want)) << "code " << code;
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(decoded[0])) << "code " << code;
        continue;
      }
      ASSERT_EQ(static_cast<double>(decoded[0]), want) << "code " << code;
      ASSERT_EQ(load_element(stored.data(), 0, type), want) << "code " << code;
      EXPECT_EQ(std::signbit(decoded[0]), (code & 0x80) != 0) << "code " << code << ": the sign of zero too";
      if (std::isinf(want)) continue;  // e5m2's infinities: a conversion saturates them (below)
      ++finite;
      EXPECT_EQ(round_to_storage(decoded[0], type), decoded[0]) << "code " << code;
      EXPECT_EQ(encode_one(decoded[0], type), byte) << "code " << code;
    }
    // e4m3 gives up only S.1111.111 to NaN; e5m2 its all-ones exponent to infinities and NaN.
    EXPECT_EQ(finite, type == DType::E4M3 ? 254 : 248);
  }
}

TEST(Fp8Format, RangesAreTheSpecifications) {
  EXPECT_EQ(fp8_max_finite(DType::E4M3), 448.0);
  EXPECT_EQ(fp8_max_finite(DType::E5M2), 57344.0);
  EXPECT_EQ(fp8_max_finite(DType::BF16), 0.0);
  EXPECT_EQ(positive_values(DType::E4M3)[1], 0x1p-9f);   // the smallest subnormal
  EXPECT_EQ(positive_values(DType::E5M2)[1], 0x1p-16f);
  EXPECT_EQ(positive_values(DType::E4M3).back(), 448.0f);
  EXPECT_EQ(positive_values(DType::E5M2).back(), 57344.0f);
  EXPECT_EQ(unit_roundoff(DType::E4M3), 0x1p-4);
  EXPECT_EQ(unit_roundoff(DType::E5M2), 0x1p-3);
  // The codes of each sign are in the order of their values.
  for (const DType type : kFp8Types) {
    const std::vector<float> values = positive_values(type);
    for (std::size_t i = 1; i < values.size(); ++i) EXPECT_LT(values[i - 1], values[i]) << to_string(type);
  }
}

// Between each pair of neighbours (subnormals, the normal boundary and binades alike), the
// midpoint goes to the one whose code is even and the floats beside it to the nearer one.
TEST(Fp8Format, RoundsToNearestWithTiesToEvenEverywhere) {
  for (const DType type : kFp8Types) {
    SCOPED_TRACE(to_string(type));
    const std::vector<float> values = positive_values(type);
    for (std::size_t i = 0; i + 1 < values.size(); ++i) {
      const float low = values[i], high = values[i + 1];
      const float mid = (low + high) / 2;  // exact: both are floats of few bits
      const float even = (encode_one(low, type) & 1) == 0 ? low : high;
      EXPECT_EQ(round_to_storage(mid, type), even) << low << " .. " << high;
      EXPECT_EQ(round_to_storage(-mid, type), -even) << low << " .. " << high;
      EXPECT_EQ(round_to_storage(std::nextafter(mid, 0.0f), type), low) << low << " .. " << high;
      EXPECT_EQ(round_to_storage(std::nextafter(mid, kInf), type), high) << low << " .. " << high;
    }
  }
  // A few worked by hand. e4m3 steps by 1/8 in [1, 2): 1 + 1/16 is a tie to 1 (even code
  // 0x38), 1 + 3/16 a tie to 1.25 (0x3A); below the smallest subnormal 2^-9 half of it is a
  // tie to zero, 3 * 2^-10 a tie to 2^-8.
  EXPECT_EQ(round_to_storage(1.0f + 0x1p-4f, DType::E4M3), 1.0f);
  EXPECT_EQ(round_to_storage(1.0f + 3 * 0x1p-4f, DType::E4M3), 1.25f);
  EXPECT_EQ(round_to_storage(0x1p-10f, DType::E4M3), 0.0f);
  EXPECT_EQ(round_to_storage(3 * 0x1p-10f, DType::E4M3), 0x1p-8f);
  EXPECT_EQ(round_to_storage(0x1p-10f + 0x1p-20f, DType::E4M3), 0x1p-9f);
  // e5m2 steps by 1/4 in [1, 2): 1.125 to 1, 1.375 to 1.5; 2^-17 to zero.
  EXPECT_EQ(round_to_storage(1.125f, DType::E5M2), 1.0f);
  EXPECT_EQ(round_to_storage(1.375f, DType::E5M2), 1.5f);
  EXPECT_EQ(round_to_storage(0x1p-17f, DType::E5M2), 0.0f);
  // A mantissa carry moves to the next binade: 1.9375 (between 1.875 and 2, a tie) to 2.
  EXPECT_EQ(round_to_storage(1.9375f, DType::E4M3), 2.0f);
  // Far below the smallest subnormal, float subnormals included: a zero that keeps its sign.
  for (const DType type : kFp8Types) {
    EXPECT_EQ(round_to_storage(1e-30f, type), 0.0f);
    EXPECT_TRUE(std::signbit(round_to_storage(-1e-30f, type)));
    EXPECT_EQ(round_to_storage(std::numeric_limits<float>::denorm_min(), type), 0.0f);
  }
}

// As CUDA's __NV_SATFINITE conversions: beyond the largest finite value (infinity too), the
// largest finite value of the sign.
TEST(Fp8Format, SaturatesBeyondTheLargestFiniteValue) {
  for (const DType type : kFp8Types) {
    SCOPED_TRACE(to_string(type));
    const auto max = static_cast<float>(fp8_max_finite(type));
    // The first value past the largest (its exponent's step of 32 or 8192 on) and their tie.
    const float step = type == DType::E4M3 ? 32.0f : 8192.0f;
    for (const float beyond : {max + step / 2, max + step / 2 + 1, max + step, 1e6f, 1e30f,
                               std::numeric_limits<float>::max(), kInf}) {
      EXPECT_EQ(round_to_storage(beyond, type), max) << beyond;
      EXPECT_EQ(round_to_storage(-beyond, type), -max) << beyond;
    }
    EXPECT_EQ(round_to_storage(max - step / 8, type), max);
  }
}

TEST(Fp8Format, NaNStaysNaN) {
  for (const DType type : kFp8Types) {
    SCOPED_TRACE(to_string(type));
    for (const float nan : {kNaN, -kNaN}) {
      EXPECT_TRUE(std::isnan(round_to_storage(nan, type)));
      std::vector<std::byte> stored = encode(std::vector<float>{nan}, type);
      ASSERT_EQ(stored.size(), 1u);
      stored.resize(sizeof(double));  // room for the widest element type, as above
      EXPECT_TRUE(std::isnan(load_element(stored.data(), 0, type)));
      std::vector<float> decoded(1);
      decode(stored, type, decoded);
      EXPECT_TRUE(std::isnan(decoded[0]));
    }
  }
}

// A matrix with ld padding: the scale maps the largest magnitude among its elements (not the
// padding's) onto the largest finite value, and every element is stored as its value over the
// scale, rounded; a matrix of zeros keeps a scale of 1.
TEST(Fp8Format, QuantisesPerTensorFromTheElementsOnly) {
  testing::Seeds seeds;
  const std::uint64_t seed = seeds.next();
  SCOPED_TRACE(seeds.describe(seed));
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<float> unit(-3.0f, 3.0f);
  for (const DType type : kFp8Types)
    for (const Layout layout : {Layout::RowMajor, Layout::ColMajor}) {
      SCOPED_TRACE(to_string(type));
      Matrix shape;
      shape.rows = 5;
      shape.cols = 7;
      shape.layout = layout;
      shape.ld = shape.contiguous_extent() + 2;
      std::vector<float> storage(static_cast<std::size_t>(shape.lines() * shape.ld));
      for (float& v : storage) v = unit(engine);
      float amax = 0;
      for (std::int64_t i = 0; i < shape.rows; ++i)
        for (std::int64_t j = 0; j < shape.cols; ++j) {
          float& v = storage[static_cast<std::size_t>(shape.offset(i, j))];
          v = v * 0.5f;  // the padding keeps the larger values: they must not set the scale
          amax = std::max(amax, std::fabs(v));
        }
      const std::vector<float> values = storage;
      const float scale = quantise_per_tensor(shape, type, storage);
      EXPECT_EQ(scale, amax / static_cast<float>(fp8_max_finite(type)));
      float stored_max = 0;
      for (std::size_t idx = 0; idx < storage.size(); ++idx) {
        ASSERT_EQ(storage[idx], round_to_storage(values[idx] / scale, type)) << idx;
        if (static_cast<std::int64_t>(idx) % shape.ld < shape.contiguous_extent())
          stored_max = std::max(stored_max, std::fabs(storage[idx]));
      }
      EXPECT_EQ(stored_max, static_cast<float>(fp8_max_finite(type))) << "amax lands on the largest finite value";
      std::vector<float> zeros(storage.size(), 0.0f);
      EXPECT_EQ(quantise_per_tensor(shape, type, zeros), 1.0f);
    }
}

}  // namespace
}  // namespace gemmlab
