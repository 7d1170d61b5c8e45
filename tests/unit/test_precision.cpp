// The dtype plumbing on the CPU: --dtype and --out-dtype names and the precision each pair
// stands for, rounding to bf16, tf32 and f16 (checked against an independent nearest-value
// search), storage encoding and decoding, the tolerance a tensor-core result is held to
// (emulated on the host, worst case; C in float32 or rounded to its 16-bit type), and which
// variants a precision selects.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "bench/harness.hpp"
#include "core/element.hpp"
#include "core/verify.hpp"
#include "gemmlab/registry.hpp"
#include "support/assertions.hpp"
#include "support/encoded.hpp"
#include "support/host_problem.hpp"
#include "support/seeds.hpp"

namespace gemmlab {
namespace {

using testing::contains;

TEST(DType, EveryNameParsesAndStandsForItsPrecision) {
  for (const DType name : kDTypeNames) {
    EXPECT_EQ(parse_dtype(to_string(name)), name);
    const std::optional<Precision> p = precision_for(name);
    ASSERT_TRUE(p.has_value()) << to_string(name);
    EXPECT_EQ(p->output, DType::F32) << "C is float32 unless --out-dtype says otherwise";
    EXPECT_EQ(dtype_name(*p), name);
  }
  EXPECT_EQ(*precision_for(DType::F32), (Precision{DType::F32, DType::F32, DType::F32}));
  EXPECT_EQ(*precision_for(DType::TF32), (Precision{DType::F32, DType::TF32, DType::F32}));
  EXPECT_EQ(*precision_for(DType::BF16), (Precision{DType::BF16, DType::F32, DType::F32}));
  EXPECT_EQ(*precision_for(DType::F16), (Precision{DType::F16, DType::F32, DType::F32}));
  // FP8: 1-byte inputs, exact products summed in float32.
  EXPECT_EQ(*precision_for(DType::E4M3), (Precision{DType::E4M3, DType::F32, DType::F32}));
  EXPECT_EQ(*precision_for(DType::E5M2), (Precision{DType::E5M2, DType::F32, DType::F32}));
  EXPECT_EQ(parse_dtype("e4m3"), DType::E4M3);
  EXPECT_EQ(parse_dtype("e5m2"), DType::E5M2);
  EXPECT_EQ(to_string(DType::E4M3), "e4m3");
  EXPECT_EQ(to_string(DType::E5M2), "e5m2");
  for (const DType type : {DType::F32, DType::TF32, DType::BF16, DType::F16, DType::F64, DType::E4M3, DType::E5M2})
    EXPECT_EQ(is_fp8(type), type == DType::E4M3 || type == DType::E5M2) << to_string(type);
  EXPECT_EQ(dtype_names_text(), "f32, tf32, bf16, f16, e4m3 or e5m2");
  EXPECT_FALSE(precision_for(DType::F64).has_value());
  EXPECT_FALSE(parse_dtype("fp8").has_value());
  EXPECT_FALSE(dtype_name({DType::BF16, DType::BF16, DType::F32}).has_value());
}

// --out-dtype: C in float32 for every name, or in the 2-byte input type itself, or in either
// 2-byte type beside FP8 inputs; never in an FP8 type. Each allowed pair's precision finds its
// --dtype name again, whatever its output.
TEST(DType, COfAHalfTypeGoesWithInputsOfThatTypeOrFp8Only) {
  const DType outputs[] = {DType::F32, DType::TF32, DType::BF16, DType::F16, DType::F64, DType::E4M3, DType::E5M2};
  for (const DType name : kDTypeNames)
    for (const DType output : outputs) {
      SCOPED_TRACE(fmt::format("--dtype {} --out-dtype {}", to_string(name), to_string(output)));
      const bool two_byte_c = storage_bytes(output) == 2;
      const bool allowed = output == DType::F32 || (two_byte_c && (output == name || storage_bytes(name) == 1));
      EXPECT_EQ(output_allowed(name, output), allowed);
      const std::optional<Precision> p = precision_for(name, output);
      ASSERT_EQ(p.has_value(), allowed);
      if (!allowed) continue;
      EXPECT_EQ(p->output, output);
      EXPECT_EQ(p->input, precision_for(name)->input) << "the output changes only C";
      EXPECT_EQ(p->compute, precision_for(name)->compute) << "the output changes only C";
      EXPECT_EQ(dtype_name(*p), name);
    }
  EXPECT_EQ(*precision_for(DType::BF16, DType::BF16), (Precision{DType::BF16, DType::F32, DType::BF16}));
  EXPECT_EQ(*precision_for(DType::F16, DType::F16), (Precision{DType::F16, DType::F32, DType::F16}));
  EXPECT_EQ(*precision_for(DType::E4M3, DType::BF16), (Precision{DType::E4M3, DType::F32, DType::BF16}));
  EXPECT_EQ(*precision_for(DType::E5M2, DType::F16), (Precision{DType::E5M2, DType::F32, DType::F16}));
  EXPECT_FALSE(precision_for(DType::E4M3, DType::E4M3).has_value()) << "no FP8 C";
  EXPECT_FALSE(precision_for(DType::E5M2, DType::E4M3).has_value()) << "no FP8 C";
  // tf32 is stored as float32: its C is float32 only.
  EXPECT_FALSE(precision_for(DType::TF32, DType::BF16).has_value());
  EXPECT_FALSE(precision_for(DType::F64, DType::F32).has_value());
  // A precision no name stands for, whatever its output.
  EXPECT_FALSE(dtype_name({DType::BF16, DType::F32, DType::F16}).has_value());
  EXPECT_FALSE(dtype_name({DType::F32, DType::F32, DType::BF16}).has_value());
}

// The nearest value with `bits` significand bits (the leading one included), ties to the
// even significand, found by comparing the two neighbours in double arithmetic: an oracle
// that shares nothing with the bit manipulation under test. Normal, finite inputs only.
double nearest_with_bits(float x, int bits) {
  int exponent = 0;
  const double mantissa = std::frexp(static_cast<double>(x), &exponent);  // x = mantissa * 2^exponent
  const double scale = std::ldexp(1.0, bits);
  const double scaled = std::fabs(mantissa) * scale;  // in [2^(bits-1), 2^bits)
  const double down = std::floor(scaled), up = down + 1;
  double pick = std::fmod(down, 2.0) == 0 ? down : up;  // a tie goes to the even one
  if (scaled - down < up - scaled) pick = down;
  if (up - scaled < scaled - down) pick = up;
  return std::copysign(std::ldexp(pick / scale, exponent), static_cast<double>(x));
}

std::vector<float> random_floats(std::uint64_t seed, int count) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-60, 60);
  std::vector<float> out;
  for (int i = 0; i < count; ++i) out.push_back(std::ldexp(unit(engine), exponent(engine)));
  return out;
}

constexpr int kBf16Bits = 8, kTf32Bits = 11, kF16Bits = 11;

TEST(Rounding, Bf16IsRoundToNearestEven) {
  const auto bf16 = [](float x) { return round_to_storage(x, DType::BF16); };
  // bf16 keeps 7 stored bits: the ulp of 1 is 2^-7.
  EXPECT_EQ(bf16(1.0f), 1.0f);
  EXPECT_EQ(bf16(1.0f + 0x1p-8f), 1.0f);                          // a tie: to the even 1
  EXPECT_EQ(bf16(1.0f + 3 * 0x1p-8f), 1.0f + 0x1p-6f);            // a tie: to the even 1 + 2^-6
  EXPECT_EQ(bf16(1.0f + 0x1p-8f + 0x1p-20f), 1.0f + 0x1p-7f);     // past the tie: up
  EXPECT_EQ(bf16(-(1.0f + 3 * 0x1p-8f)), -(1.0f + 0x1p-6f));      // sign-symmetric
  EXPECT_TRUE(std::isinf(bf16(std::numeric_limits<float>::max())));  // beyond bf16's largest
  EXPECT_TRUE(std::isnan(bf16(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(bf16(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
  testing::Seeds seeds;
  const std::uint64_t seed = seeds.next();
  SCOPED_TRACE(seeds.describe(seed));
  for (const float x : random_floats(seed, 20000)) {
    ASSERT_EQ(static_cast<double>(bf16(x)), nearest_with_bits(x, kBf16Bits)) << std::hexfloat << x;
    // The bits handed to the device are the top half of that float.
    ASSERT_EQ(static_cast<std::uint32_t>(float_to_bf16_bits(x)) << 16, float_bits(bf16(x)));
  }
}

TEST(Rounding, Tf32IsRoundToNearestEvenOnTenStoredBits) {
  EXPECT_EQ(round_to_tf32(1.0f + 0x1p-11f), 1.0f);                     // a tie: to even
  EXPECT_EQ(round_to_tf32(1.0f + 3 * 0x1p-11f), 1.0f + 0x1p-9f);       // a tie: to even
  EXPECT_EQ(round_to_tf32(1.0f + 0x1p-11f + 0x1p-22f), 1.0f + 0x1p-10f);
  EXPECT_EQ(float_bits(round_to_tf32(0.1f)) & 0x1FFFu, 0u) << "the low 13 bits are cleared";
  EXPECT_TRUE(std::isnan(round_to_tf32(std::numeric_limits<float>::quiet_NaN())));
  // Storing as tf32 changes nothing: it is float32 storage, reduced by the tensor cores.
  EXPECT_EQ(round_to_storage(0.1f, DType::TF32), 0.1f);
  testing::Seeds seeds;
  const std::uint64_t seed = seeds.next();
  SCOPED_TRACE(seeds.describe(seed));
  for (const float x : random_floats(seed, 20000))
    ASSERT_EQ(static_cast<double>(round_to_tf32(x)), nearest_with_bits(x, kTf32Bits)) << std::hexfloat << x;
}

TEST(Rounding, F16IsRoundToNearestEven) {
  const auto f16 = [](float x) { return round_to_storage(x, DType::F16); };
  EXPECT_EQ(f16(2049.0f), 2048.0f);  // 11 significand bits: a tie, to even
  EXPECT_EQ(f16(2051.0f), 2052.0f);
  testing::Seeds seeds;
  const std::uint64_t seed = seeds.next();
  SCOPED_TRACE(seeds.describe(seed));
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<float> in_range(-60000.0f, 60000.0f);
  for (int i = 0; i < 20000; ++i) {
    const float x = in_range(engine);
    if (std::fabs(x) < 0x1p-14f) continue;  // f16 subnormals: fewer bits than the oracle assumes
    ASSERT_EQ(static_cast<double>(f16(x)), nearest_with_bits(x, kF16Bits)) << std::hexfloat << x;
  }
}

TEST(Rounding, EncodedStorageReadsBackTheRoundedValues) {
  testing::Seeds seeds;
  const std::uint64_t seed = seeds.next();
  SCOPED_TRACE(seeds.describe(seed));
  for (const DType type : {DType::F32, DType::TF32, DType::BF16, DType::F16, DType::E4M3, DType::E5M2}) {
    std::vector<float> values = random_floats(seed, 1000);
    for (float& v : values) v = round_to_storage(std::ldexp(v, -std::ilogb(v)), type);  // into [1, 2): f16 range
    values.push_back(std::numeric_limits<float>::quiet_NaN());
    const std::vector<std::byte> stored = encode(values, type);
    ASSERT_EQ(stored.size(), values.size() * storage_bytes(type));
    for (std::size_t i = 0; i + 1 < values.size(); ++i)
      ASSERT_EQ(load_element(stored.data(), static_cast<std::int64_t>(i), type), static_cast<double>(values[i]))
          << to_string(type) << " element " << i;
    EXPECT_TRUE(std::isnan(load_element(stored.data(), static_cast<std::int64_t>(values.size() - 1), type)))
        << to_string(type);
  }
}

// A result comes back from the device in C's storage and is decoded to floats: the values
// stored, bit for bit (signed zeros, infinities, subnormals of f16; NaN stays NaN), so the
// padding's canaries compare bitwise after the trip. FP8 alike (its infinities saturate when
// rounded: test_fp8_format.cpp).
TEST(Rounding, DecodeGivesBackTheStoredValuesBitForBit) {
  testing::Seeds seeds;
  const std::uint64_t seed = seeds.next();
  SCOPED_TRACE(seeds.describe(seed));
  for (const DType type : {DType::F32, DType::TF32, DType::BF16, DType::F16, DType::E4M3, DType::E5M2}) {
    std::vector<float> values = random_floats(seed, 1000);
    for (const float special : {0.0f, -0.0f, 0x1p-20f, -0x1p-24f, 65504.0f, std::numeric_limits<float>::infinity(),
                                -std::numeric_limits<float>::infinity()})
      values.push_back(special);
    for (float& v : values) v = round_to_storage(v, type);
    values.push_back(std::numeric_limits<float>::quiet_NaN());
    const std::vector<std::byte> stored = encode(values, type);
    std::vector<float> decoded(values.size(), 1.0f);
    decode(stored, type, decoded);
    for (std::size_t i = 0; i + 1 < values.size(); ++i)
      ASSERT_EQ(float_bits(decoded[i]), float_bits(values[i])) << to_string(type) << " element " << i << ": "
                                                               << std::hexfloat << values[i];
    EXPECT_TRUE(std::isnan(decoded.back())) << to_string(type);
    // And back: decoding and encoding again changes no stored bit.
    EXPECT_EQ(encode(decoded, type), stored) << to_string(type);
  }
}

// ---- tolerance against an emulated worst-case tensor core --------------------------------

// x rounded toward zero to float32: what an adder that truncates keeps.
float toward_zero(double x) {
  float f = static_cast<float>(x);
  if (std::fabs(static_cast<double>(f)) > std::fabs(x)) f = std::nextafter(f, 0.0f);
  return f;
}
float truncate_to_tf32(float x) { return bits_float(float_bits(x) & ~0x1FFFu); }

// C as a tensor core that truncates everything would leave it: operands through `reduce`,
// exact products, each sum rounded toward zero, then alpha and beta in float32.
template <class Reduce>
std::vector<float> emulate(const testing::HostProblem& hp, Reduce reduce) {
  const GemmProblem& p = hp.problem;
  std::vector<float> result = hp.c_before;
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      float acc = 0.0f;
      for (std::int64_t q = 0; q < p.k; ++q) {
        const float a = reduce(p.op_a == Op::T ? hp.a.at(q, i) : hp.a.at(i, q));
        const float b = reduce(p.op_b == Op::T ? hp.b.at(j, q) : hp.b.at(q, j));
        acc = toward_zero(static_cast<double>(acc) + static_cast<double>(a) * static_cast<double>(b));
      }
      float& out = result[static_cast<std::size_t>(p.c.offset(i, j))];
      const float c0 = hp.c_before[static_cast<std::size_t>(p.c.offset(i, j))];
      out = p.beta == 0.0 ? static_cast<float>(p.alpha) * acc
                          : std::fma(static_cast<float>(p.beta), c0, static_cast<float>(p.alpha) * acc);
    }
  return result;
}

testing::ProblemSpec tolerance_spec(std::uint64_t seed) {
  return {.m = 24, .n = 20, .k = 257, .op_a = Op::T, .ld_padding = 1, .alpha = 1.25, .beta = -0.5, .seed = seed};
}

// A tf32 result (operands truncated to tf32, truncating float32 sums) passes the tf32
// tolerance, and would fail float32's: the bound is wide enough for the hardware and no wider
// than the precision asks.
TEST(TensorCoreTolerance, Tf32ResultPassesTf32AndFailsF32) {
  testing::Seeds seeds;
  const std::uint64_t seed = seeds.next();
  SCOPED_TRACE(seeds.describe(seed));
  testing::HostProblem hp = testing::make_host_problem(tolerance_spec(seed));
  ReferenceResult reference;
  ASSERT_TRUE(testing::host_reference(hp, reference).is_ok());
  const std::vector<float> result = emulate(hp, truncate_to_tf32);

  hp.problem.compute = DType::TF32;
  const Verification as_tf32 = testing::verify_result(hp, result, reference);
  EXPECT_TRUE(as_tf32.passed) << as_tf32.summary();
  hp.problem.compute = DType::F32;
  const Verification as_f32 = testing::verify_result(hp, result, reference);
  EXPECT_FALSE(as_f32.passed) << "tf32 operands should not pass for float32 arithmetic";
  EXPECT_GT(as_f32.failures, 0);
}

// bf16 operands (stored rounded, so the reference sees the same values) with truncating
// float32 sums pass the bf16 tolerance; leaving out one product fails it.
TEST(TensorCoreTolerance, Bf16ResultPassesAndAMissingProductFails) {
  testing::Seeds seeds;
  const std::uint64_t seed = seeds.next();
  SCOPED_TRACE(seeds.describe(seed));
  testing::HostProblem hp = testing::make_host_problem(tolerance_spec(seed));
  // The storage rounded to bf16 in place: the reference reads exactly the rounded values.
  for (testing::HostMatrix* x : {&hp.a, &hp.b})
    for (float& v : x->storage) v = round_to_storage(v, DType::BF16);
  ReferenceResult reference;
  ASSERT_TRUE(testing::host_reference(hp, reference).is_ok());
  std::vector<float> result = emulate(hp, [](float x) { return x; });
  // What verify() sees of a bf16 problem: its types (the data above already is bf16).
  hp.problem.a.dtype = hp.problem.b.dtype = DType::BF16;
  Verification v = testing::verify_result(hp, result, reference);
  EXPECT_TRUE(v.passed) << v.summary();

  // Drop the last product from the element where it is largest.
  const GemmProblem& p = hp.problem;
  std::int64_t wi = 0, wj = 0;
  double largest = -1;
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      const double term = std::fabs(static_cast<double>(hp.a.at(p.k - 1, i)) * hp.b.at(p.k - 1, j));  // A^T, B
      if (term > largest) largest = term, wi = i, wj = j;
    }
  result[static_cast<std::size_t>(p.c.offset(wi, wj))] -=
      static_cast<float>(p.alpha * hp.a.at(p.k - 1, wi) * hp.b.at(p.k - 1, wj));
  v = testing::verify_result(hp, result, reference);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.worst_row, wi);
  EXPECT_EQ(v.worst_col, wj);
}

// The next value of `type` after x (representable in it, finite), away from zero: the first
// float that rounds to something else, rounded.
float next_stored(float x, DType type) {
  const float away = std::copysign(std::numeric_limits<float>::infinity(), x);
  float up = x;
  while (round_to_storage(up, type) == x) up = std::nextafter(up, away);
  return round_to_storage(up, type);
}

// C stored in bf16 or f16 (--out-dtype), beta's C0 read as stored: the float32 sums of a
// truncating tensor core rounded once to C's type pass that type's tolerance, and would fail
// float32's; the same result a few of C's ulps off at one element fails.
TEST(TensorCoreTolerance, HalfPrecisionCRoundedOncePassesAndAFewUlpsOffFails) {
  constexpr int kUlpsOff = 4;
  testing::Seeds seeds;
  const std::uint64_t seed = seeds.next();
  SCOPED_TRACE(seeds.describe(seed));
  for (const DType type : {DType::BF16, DType::F16}) {
    SCOPED_TRACE(to_string(type));
    testing::HostProblem hp = testing::make_host_problem(tolerance_spec(seed));
    // A, B and C0 as stored in the 2-byte type: the reference reads exactly those values.
    for (testing::HostMatrix* x : {&hp.a, &hp.b, &hp.c})
      for (float& v : x->storage) v = round_to_storage(v, type);
    hp.c_before = hp.c.storage;
    ReferenceResult reference;
    ASSERT_TRUE(testing::host_reference(hp, reference).is_ok());
    std::vector<float> result = emulate(hp, [](float x) { return x; });
    const GemmProblem& p = hp.problem;
    for (std::int64_t i = 0; i < p.m; ++i)
      for (std::int64_t j = 0; j < p.n; ++j) {
        float& c = result[static_cast<std::size_t>(p.c.offset(i, j))];
        c = round_to_storage(c, type);
      }
    // What verify() sees of such a problem: its types (the data above already is in them).
    hp.problem.a.dtype = hp.problem.b.dtype = hp.problem.c.dtype = type;
    Verification v = testing::verify_result(hp, result, reference);
    EXPECT_TRUE(v.passed) << v.summary();
    if (type == DType::BF16) {  // (f16's rounding may hide under the sums' own bound)
      hp.problem.c.dtype = DType::F32;
      EXPECT_FALSE(testing::verify_result(hp, result, reference).passed) << "a bf16 C should not pass as float32";
      hp.problem.c.dtype = type;
    }

    // A few of C's ulps off where they stand out most from the sums' own bound: at the
    // element whose reference is largest beside its magnitude.
    std::int64_t wi = 0, wj = 0;
    double best = -1;
    for (std::int64_t i = 0; i < p.m; ++i)
      for (std::int64_t j = 0; j < p.n; ++j) {
        const auto idx = static_cast<std::size_t>(i * p.n + j);
        const double share = std::fabs(reference.value[idx]) / reference.magnitude[idx];
        if (share > best) best = share, wi = i, wj = j;
      }
    float& planted = result[static_cast<std::size_t>(p.c.offset(wi, wj))];
    for (int ulp = 0; ulp < kUlpsOff; ++ulp) planted = next_stored(planted, type);
    v = testing::verify_result(hp, result, reference);
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.failures, 1);
    EXPECT_EQ(v.worst_row, wi);
    EXPECT_EQ(v.worst_col, wj);
  }
}

// x with its top `bits` significant bits only, the rest cut off (toward zero): what an adder
// that keeps `bits` bits of its sum leaves.
double keep_bits_toward_zero(double x, int bits) {
  if (x == 0.0) return 0.0;
  const int exponent = std::ilogb(x);
  return std::ldexp(std::trunc(std::ldexp(x, bits - 1 - exponent)), exponent - bits + 1);
}

// C as an FP8 tensor core leaves it, as DeepSeek-V3 describes the hardware: exact products of
// the stored elements, summed `promote_every` K-terms at a time by an adder that keeps 14
// bits, each partial sum added into a float32 register (truncating), then alpha with the
// scales folded in (rounded to float32, as a kernel receives it) and beta in float32.
std::vector<float> emulate_fp8(const testing::HostProblem& hp, std::int64_t promote_every) {
  constexpr int kAdderBits = 14;
  const GemmProblem& p = hp.problem;
  const auto alpha = static_cast<float>(effective_alpha(p));
  std::vector<float> result = hp.c_before;
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      float acc = 0.0f;
      for (std::int64_t q0 = 0; q0 < p.k; q0 += promote_every) {
        double partial = 0.0;
        for (std::int64_t q = q0; q < std::min(p.k, q0 + promote_every); ++q) {
          const double a = p.op_a == Op::T ? hp.a.at(q, i) : hp.a.at(i, q);
          const double b = p.op_b == Op::T ? hp.b.at(j, q) : hp.b.at(q, j);
          partial = keep_bits_toward_zero(partial + a * b, kAdderBits);
        }
        acc = toward_zero(static_cast<double>(acc) + partial);
      }
      float& out = result[static_cast<std::size_t>(p.c.offset(i, j))];
      const float c0 = hp.c_before[static_cast<std::size_t>(p.c.offset(i, j))];
      out = p.beta == 0.0 ? alpha * acc : std::fma(static_cast<float>(p.beta), c0, alpha * acc);
    }
  return result;
}

// FP8 inputs quantised per tensor (the scales in the problem), summed as the hardware does:
// the result passes the FP8 tolerance (partial sums promoted every 128 K-terms), and fails
// the bound of one float32 sum, which the 14-bit adder is far from. The inputs are made
// non-negative, so the truncations add up rather than cancel: near the worst case.
TEST(TensorCoreTolerance, Fp8PartialSumsPassTheFp8BoundAndNotOneFloat32Sums) {
  testing::Seeds seeds;
  const std::uint64_t seed = seeds.next();
  SCOPED_TRACE(seeds.describe(seed));
  for (const DType type : {DType::E4M3, DType::E5M2}) {
    SCOPED_TRACE(to_string(type));
    testing::ProblemSpec spec = tolerance_spec(seed);
    spec.k = 1000;  // eight partial sums, the last one short
    testing::HostProblem hp = testing::make_host_problem(spec);
    for (testing::HostMatrix* x : {&hp.a, &hp.b})
      for (float& v : x->storage) v = std::fabs(v);
    testing::Encoded stored;
    testing::store_as(hp, type, stored);
    EXPECT_NE(hp.problem.scale_a, 1.0f);
    ReferenceResult reference;
    ASSERT_TRUE(testing::host_reference(hp, reference).is_ok());
    const std::vector<float> result = emulate_fp8(hp, kFp8PromoteEvery);
    const Tolerance fp8 = tolerance_for(type, DType::F32, DType::F32);
    EXPECT_EQ(fp8.promote_every, kFp8PromoteEvery);
    Verification v = testing::verify_result(hp, result, reference);  // the problem's types: fp8
    EXPECT_TRUE(v.passed) << v.summary();
    v = verify(hp.problem, result, hp.c_before, reference, false, tolerance_for(DType::BF16, DType::F32, DType::F32));
    EXPECT_FALSE(v.passed) << "14-bit partial sums should not pass the bound of one float32 sum";
  }
}

// ---- selection by dtype -----------------------------------------------------------------------

TEST(DTypeSelection, F32SelectsTheWholeCpuLadderAndNothingElseSelectsOnTheCpu) {
  bench::Options o;
  std::vector<Variant> selected;
  ASSERT_TRUE(bench::select_variants(o, Backend::Cpu, selected).is_ok());
  EXPECT_EQ(selected.size(), variants(Backend::Cpu).size());
  for (const DType name : {DType::TF32, DType::BF16, DType::F16, DType::E4M3, DType::E5M2}) {
    o.dtype = name;
    const Status s = bench::select_variants(o, Backend::Cpu, selected);
    EXPECT_EQ(s.code(), StatusCode::InvalidValue) << to_string(name);
    EXPECT_TRUE(contains(s.message(), to_string(name)));
    EXPECT_TRUE(contains(s.message(), "cpu"));
  }
  o.dtype = DType::F64;
  EXPECT_EQ(bench::select_variants(o, Backend::Cpu, selected).code(), StatusCode::InvalidValue);
}

// --out-dtype: a pair output_allowed() refuses is a bad selection naming both flags, before
// any backend is asked; an allowed pair no CPU rung computes names the pair and the backend.
TEST(DTypeSelection, AnOutDTypeTheDTypeDoesNotTakeIsABadSelection) {
  bench::Options o;
  std::vector<Variant> selected;
  o.out_dtype = DType::BF16;
  for (const Backend backend : {Backend::Cpu, Backend::Cuda}) {
    const Status s = bench::select_variants(o, backend, selected);
    EXPECT_EQ(s.code(), StatusCode::InvalidValue);
    EXPECT_EQ(s.message(),
              "--out-dtype bf16 goes with --dtype bf16, e4m3 or e5m2 only (C is f32, the 2-byte input type, or a "
              "2-byte type beside FP8 inputs), not --dtype f32");
  }
  o.dtype = DType::F16;
  EXPECT_TRUE(contains(bench::select_variants(o, Backend::Cpu, selected).message(), "not --dtype f16"));
  o.dtype = DType::TF32;
  EXPECT_TRUE(contains(bench::select_variants(o, Backend::Cpu, selected).message(), "not --dtype tf32"));
  o.out_dtype = DType::TF32;
  EXPECT_TRUE(contains(bench::select_variants(o, Backend::Cpu, selected).message(), "--out-dtype tf32: C is stored"));
  EXPECT_TRUE(bench::check_dtypes(DType::BF16, DType::BF16).is_ok());
  EXPECT_TRUE(bench::check_dtypes(DType::TF32, DType::F32).is_ok());
  // FP8 inputs take C in f32, bf16 or f16, never in an FP8 type.
  for (const DType output : kOutDTypeNames) EXPECT_TRUE(bench::check_dtypes(DType::E4M3, output).is_ok());
  EXPECT_TRUE(bench::check_dtypes(DType::E5M2, DType::BF16).is_ok());
  for (const DType output : {DType::E4M3, DType::E5M2}) {
    const Status s = bench::check_dtypes(DType::E4M3, output);
    EXPECT_EQ(s.code(), StatusCode::InvalidValue);
    EXPECT_EQ(s.message(), fmt::format("--out-dtype {}: C in e4m3/e5m2 is not supported: store C as f32, bf16 or f16",
                                       to_string(output)));
  }
  EXPECT_EQ(bench::check_dtypes(DType::F64, DType::F32).message(),
            "--dtype f64: no rung computes in f64 (f32, tf32, bf16, f16, e4m3 or e5m2)");
  for (const DType type : {DType::BF16, DType::F16}) {
    o.dtype = o.out_dtype = type;
    const Status s = bench::select_variants(o, Backend::Cpu, selected);
    EXPECT_EQ(s.code(), StatusCode::InvalidValue);
    EXPECT_EQ(s.message(), fmt::format("--dtype {0} --out-dtype {0}: the cpu backend has no variant of {0} inputs with "
                                       "{0} C (gemmlab list shows each variant's types)",
                                       to_string(type)));
  }
}

TEST(DTypeSelection, ANamedVariantOfAnotherDTypeIsABadSelection) {
  if (!cuda_built()) GTEST_SKIP() << "SKIPPED: this build has no CUDA variants to select";
  bench::Options o;
  o.dtype = DType::F32;
  o.variants = {"pipelined", "cublas_bf16"};
  std::vector<Variant> selected;
  const Status s = bench::select_variants(o, Backend::Cuda, selected);
  EXPECT_EQ(s.code(), StatusCode::InvalidValue);
  EXPECT_TRUE(contains(s.message(), "cublas_bf16"));
  EXPECT_TRUE(contains(s.message(), "--dtype bf16"));
  o.dtype = DType::BF16;
  o.variants = {"mma_sync_bf16", "cublas_bf16"};
  ASSERT_TRUE(bench::select_variants(o, Backend::Cuda, selected).is_ok());
  EXPECT_EQ(selected.size(), 2u);
}

// The same inputs and math with C of another type: the message says how to run it.
TEST(DTypeSelection, ANamedVariantOfAnotherCIsABadSelection) {
  if (!cuda_built()) GTEST_SKIP() << "SKIPPED: this build has no CUDA variants to select";
  bench::Options o;
  o.dtype = DType::BF16;
  o.variants = {"mma_sync_bf16_bf16"};
  std::vector<Variant> selected;
  Status s = bench::select_variants(o, Backend::Cuda, selected);
  EXPECT_EQ(s.code(), StatusCode::InvalidValue);
  EXPECT_EQ(s.message(), "variant 'mma_sync_bf16_bf16' stores C in bf16 (bf16 inputs, f32 math, bf16 C), not in f32 "
                         "(run it with --dtype bf16 --out-dtype bf16)");
  o.out_dtype = DType::BF16;
  o.variants = {"mma_sync_bf16"};
  s = bench::select_variants(o, Backend::Cuda, selected);
  EXPECT_EQ(s.message(), "variant 'mma_sync_bf16' stores C in f32 (bf16 inputs, f32 math, f32 C), not in bf16 "
                         "(run it with --dtype bf16)");
  o.variants = {"mma_sync_f16_f16"};
  s = bench::select_variants(o, Backend::Cuda, selected);
  EXPECT_TRUE(contains(s.message(), "computes f16 (f16 inputs, f32 math, f16 C), not --dtype bf16 --out-dtype bf16 "
                                    "(run it with --dtype f16 --out-dtype f16)"))
      << s.message();
  o.variants = {"mma_sync_bf16_bf16", "cublas_bf16_bf16", "auto"};  // (sm_80 and later: they run on any GPU here)
  ASSERT_TRUE(bench::select_variants(o, Backend::Cuda, selected).is_ok());
  ASSERT_EQ(selected.size(), 3u);
  EXPECT_EQ(selected.back().precision(), (Precision{DType::BF16, DType::F32, DType::BF16})) << "auto's placeholder";
}

// Each dtype, and each C type it takes, runs its own rungs beside exactly one anchor of its
// own, and the f32 run is the SIMT ladder it always was. The registry is there in a CUDA
// build without a GPU: selection reads it, nothing runs.
TEST(DTypeSelection, EveryDTypeOnCudaHasItsRungsAndOneAnchor) {
  if (!cuda_built()) GTEST_SKIP() << "SKIPPED: this build has no CUDA variants to select";
  const std::set<std::string> expected_anchor = {"cublas_sgemm",       "cublas_tf32",       "cublas_bf16",
                                                 "cublas_f16",         "cublas_bf16_bf16",  "cublas_f16_f16",
                                                 "cublaslt_e4m3",      "cublaslt_e4m3_bf16", "cublaslt_e4m3_f16"};
  std::set<std::string> seen;
  std::size_t total = 0;
  for (const DType name : kDTypeNames)
    for (const DType output : kOutDTypeNames) {
      if (!output_allowed(name, output)) continue;
      SCOPED_TRACE(fmt::format("--dtype {} --out-dtype {}", to_string(name), to_string(output)));
      bench::Options o;
      o.dtype = name;
      o.out_dtype = output;
      std::vector<Variant> selected;
      ASSERT_TRUE(bench::select_variants(o, Backend::Cuda, selected).is_ok());
      int anchors = 0;
      for (const Variant& v : selected) {
        EXPECT_EQ(v.precision(), *precision_for(name, output)) << v.name;
        EXPECT_TRUE(seen.insert(v.name).second) << v.name << " selected by two precisions";
        if (v.anchor) {
          ++anchors;
          EXPECT_TRUE(expected_anchor.count(v.name)) << v.name;
        }
      }
      // cuBLASLt has no e5m2 x e5m2 product: e5m2 runs without an anchor.
      EXPECT_EQ(anchors, name == DType::E5M2 ? 0 : 1);
      total += selected.size();
    }
  EXPECT_EQ(total, variants(Backend::Cuda).size()) << "every CUDA variant answers to one --dtype and --out-dtype";
  for (const char* name : {"mma_sync_bf16", "pipelined", "mma_sync_bf16_bf16", "mma_sync_f16_f16",
                           "wgmma_ws_bf16_bf16", "wgmma_ws_f16_f16", "wgmma_ws_e4m3", "wgmma_ws_e5m2_f16"})
    EXPECT_TRUE(seen.count(name)) << name;
}

// --dtype bf16 --out-dtype bf16 selects exactly the variants of {bf16, f32, bf16}.
TEST(DTypeSelection, Bf16WithBf16CSelectsExactlyItsPrecision) {
  if (!cuda_built()) GTEST_SKIP() << "SKIPPED: this build has no CUDA variants to select";
  bench::Options o;
  o.dtype = o.out_dtype = DType::BF16;
  std::vector<Variant> selected;
  ASSERT_TRUE(bench::select_variants(o, Backend::Cuda, selected).is_ok());
  std::set<std::string> names, expected;
  for (const Variant& v : selected) names.insert(v.name);
  for (const Variant& v : variants(Backend::Cuda))
    if (v.precision() == Precision{DType::BF16, DType::F32, DType::BF16}) expected.insert(v.name);
  EXPECT_EQ(names, expected);
  EXPECT_TRUE(names.count("cublas_bf16_bf16"));
  EXPECT_FALSE(names.count("wgmma_bf16")) << "rung 12 stores f32 C only";
}

// ratio_to_anchor: against the anchor of the record's own dtype, even where anchors of
// two dtypes were timed on the same shape.
TEST(DTypeSelection, RatiosAreAgainstTheAnchorOfTheSameDType) {
  const auto record = [](const char* variant, const char* dtype, bool anchor, double ms) {
    bench::Record r;
    r.backend = "cuda";
    r.variant = variant;
    r.dtype = dtype;
    r.anchor = anchor;
    r.m = r.n = r.k = 64;
    r.trans = "NN";
    r.layout = "row";
    r.timed = true;
    r.timing.median_ms = ms;
    return r;
  };
  std::vector<bench::Record> records = {record("cublas_sgemm", "f32", true, 8.0), record("pipelined", "f32", false, 10.0),
                                        record("cublas_bf16", "bf16", true, 1.0),
                                        record("mma_sync_bf16", "bf16", false, 2.0)};
  bench::attach_anchor_ratios(records);
  EXPECT_EQ(records[1].anchor_variant, "cublas_sgemm");
  EXPECT_DOUBLE_EQ(*records[1].ratio_to_anchor, 0.8);
  EXPECT_EQ(records[3].anchor_variant, "cublas_bf16");
  EXPECT_DOUBLE_EQ(*records[3].ratio_to_anchor, 0.5);

  // Of one dtype, the anchor that stores C as the rung does.
  records.push_back(record("cublas_bf16_bf16", "bf16", true, 0.75));
  records.push_back(record("mma_sync_bf16_bf16", "bf16", false, 1.5));
  records[4].out_dtype = records[5].out_dtype = "bf16";
  bench::attach_anchor_ratios(records);
  EXPECT_EQ(records[3].anchor_variant, "cublas_bf16");
  EXPECT_EQ(records[5].anchor_variant, "cublas_bf16_bf16");
  EXPECT_DOUBLE_EQ(*records[5].ratio_to_anchor, 0.5);
}

}  // namespace
}  // namespace gemmlab
