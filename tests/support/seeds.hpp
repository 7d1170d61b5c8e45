// Seeds for test inputs: fresh on every run, different for every check, and printed with
// each check so that a failure replays. Header-only and free of the library, so every test
// binary (unit, cli, gpu) can use it.
//
//   gemmlab::testing::Seeds seeds;
//   const std::uint64_t seed = seeds.next();
//   SCOPED_TRACE(seeds.describe(seed));
//
// Replay: GEMMLAB_TEST_SEED=<base> <test binary> --gtest_filter=<test> draws the same seeds.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>

namespace gemmlab::testing {

inline constexpr const char* kSeedEnvironment = "GEMMLAB_TEST_SEED";

// The run's base seed: $GEMMLAB_TEST_SEED when set (to replay), otherwise fresh.
inline std::uint64_t base_seed() {
  static const std::uint64_t base = []() -> std::uint64_t {
    if (const char* text = std::getenv(kSeedEnvironment)) return std::strtoull(text, nullptr, 10);
    std::random_device device;
    return static_cast<std::uint64_t>(device());
  }();
  return base;
}

// FNV-1a: a stable hash of the test's name, so two tests never draw the same inputs.
inline std::uint64_t stable_hash(std::string_view text) {
  constexpr std::uint64_t kOffsetBasis = 0xCBF29CE484222325ull;
  constexpr std::uint64_t kPrime = 0x100000001B3ull;
  std::uint64_t hash = kOffsetBasis;
  for (const char ch : text) {
    hash ^= static_cast<unsigned char>(ch);
    hash *= kPrime;
  }
  return hash;
}

// One per test: next() gives every check of the test its own seed.
class Seeds {
 public:
  Seeds() {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    test_name_ = info ? std::string(info->test_suite_name()) + "." + info->name() : "(no test)";
    key_ = stable_hash(test_name_);
  }

  // Seeds lie in [1, 2^32): they read well in logs and on command lines, and are never 0
  // (which `gemmlab --seed` reads as "draw a fresh one").
  std::uint64_t next() {
    constexpr std::uint64_t kSeedRange = (std::uint64_t{1} << 32) - 1;
    return (base_seed() + key_ + count_++) % kSeedRange + 1;
  }

  // For SCOPED_TRACE and failure messages: the seed and how to replay it.
  std::string describe(std::uint64_t seed) const {
    return "seed " + std::to_string(seed) + " (replay: " + kSeedEnvironment + "=" +
           std::to_string(base_seed()) + " --gtest_filter=" + test_name_ + ")";
  }

 private:
  std::string test_name_;
  std::uint64_t key_ = 0;
  std::uint64_t count_ = 0;
};

}  // namespace gemmlab::testing
