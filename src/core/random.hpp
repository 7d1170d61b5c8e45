// Seeded random inputs: never zeros or constants, always replayable from the printed seed.
#pragma once

#include <cstdint>
#include <span>

namespace gemmlab {

enum class Distribution {
  Uniform,  // uniform in [-1, 1): the default for timing and verification
  Integer,  // integers in [-4, 4]: products and sums stay exact in float32 for small k
};

// Fills `out` from a generator keyed by (seed, stream), so matrices of one problem
// drawn with the same seed but different streams are independent.
void fill_random(std::span<float> out, std::uint64_t seed, std::uint64_t stream,
                 Distribution distribution = Distribution::Uniform);
void fill_random(std::span<double> out, std::uint64_t seed, std::uint64_t stream,
                 Distribution distribution = Distribution::Uniform);

// Elements first .. first + out.size() - 1 of the same sequence fill_random() draws: a large
// matrix filled in pieces, on several threads, holds exactly the values drawn whole.
void fill_random_at(std::span<float> out, std::uint64_t seed, std::uint64_t stream, std::uint64_t first,
                    Distribution distribution = Distribution::Uniform);

// A fresh seed from the clock and the address space, for runs that were not given one.
std::uint64_t fresh_seed();

}  // namespace gemmlab
