// Seeded random inputs: a matrix filled in pieces (on several threads, as the out-of-core job
// fills its page-locked operands) holds exactly the values filled whole; streams and seeds
// give different values; uniform values lie in [-1, 1).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "core/random.hpp"
#include "support/seeds.hpp"

namespace gemmlab {
namespace {

TEST(Random, PiecesEqualTheWhole) {
  testing::Seeds seeds;
  const std::uint64_t seed = seeds.next();
  SCOPED_TRACE(seeds.describe(seed));
  std::vector<float> whole(10007);
  fill_random(whole, seed, 3);
  std::vector<float> pieces(whole.size());
  // Uneven pieces, filled out of order.
  const std::size_t cuts[] = {0, 1, 64, 4099, 4100, 9000, whole.size()};
  for (int p = 5; p >= 0; --p) {
    const std::span<float> piece(pieces.data() + cuts[p], cuts[p + 1] - cuts[p]);
    fill_random_at(piece, seed, 3, cuts[p]);
  }
  EXPECT_EQ(std::memcmp(whole.data(), pieces.data(), whole.size() * sizeof(float)), 0);
}

TEST(Random, StreamsAndSeedsDifferAndValuesAreInRange) {
  testing::Seeds seeds;
  const std::uint64_t seed = seeds.next();
  SCOPED_TRACE(seeds.describe(seed));
  std::vector<float> a(4096), b(4096), c(4096);
  fill_random(a, seed, 1);
  fill_random(b, seed, 2);
  fill_random(c, seed + 1, 1);
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  EXPECT_TRUE(std::all_of(a.begin(), a.end(), [](float x) { return x >= -1.0f && x < 1.0f; }));
  // Not a constant: the spread of 4096 uniform values is far above zero.
  const auto [lo, hi] = std::minmax_element(a.begin(), a.end());
  EXPECT_GT(*hi - *lo, 1.5f);
}

}  // namespace
}  // namespace gemmlab
