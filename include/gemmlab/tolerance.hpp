// The error bound a result is verified against (core/verify.hpp derives it from a
// precision; a rung whose arithmetic its types do not describe carries its own: variant.hpp).
#pragma once

#include <cstdint>

namespace gemmlab {

// The error bound of one element of C, from the standard analysis of a dot product
// (Higham, 3.1) extended to reduced-precision operands. Each term a*b is formed from
// operands the hardware may first reduce to the compute type (relative error input_u each:
// a factor (1 + theta_2), |theta_2| <= gamma(2, input_u)), then k products, their sums and
// the alpha/beta scaling are rounded in the accumulator (a factor (1 + theta_{k+2}),
// |theta_{k+2}| <= gamma(k + 2, accumulate_u)): an error E = [(1 + g2)(1 + gk) - 1] * magnitude
// with g2 = gamma(2, input_u), gk = gamma(k + 2, accumulate_u) and magnitude
// |alpha| |A||B| + |beta| |C0| from the reference (C0 as stored: in C's own type). Storing
// the sum in C's type rounds it once more, by output_u of the value stored, |C_ref| + E at
// most; below output_min_normal stored values are evenly spaced and the rounding errs by up
// to output_u * output_min_normal (an f16 C's subnormals: 2^-25). Together:
//   |C - C_ref| <= E + output_u * max(|C_ref| + E, output_min_normal) + floor
// A rung that sums more than k terms (3xTF32: three products per term) says so with
// terms_per_k: gk = gamma(terms_per_k * k + 2, accumulate_u).
//
// Sums in two levels (FP8 on Hopper): the tensor core's adder keeps only about 14 bits of its
// running sum (DeepSeek-V3's report, on H800: "limited to retaining around 14 bits"), so a
// kernel lets it sum promote_every K-terms at a time and adds each such partial sum into a
// float32 register. A partial sum of P = min(k, promote_every) K-terms is P * terms_per_k
// additions whose relative error is at most partial_u each (truncation: 2^-13 for 14 bits), a
// factor (1 + theta), |theta| <= g_p = gamma(P * terms_per_k, partial_u), on the magnitude of
// its own terms. The ceil(k / promote_every) partial sums, added in float32, and the alpha/beta
// scaling give another factor, |theta| <= g_f = gamma(ceil(k / promote_every) + 2,
// accumulate_u) (the first partial sum enters the register exactly, which leaves a rounding
// for alpha: the scales folded in, rounded to float32). So, with promote_every > 0, gk above
// becomes (1 + g_p)(1 + g_f) - 1: the first level's error grows with promote_every, not k.
struct Tolerance {
  double input_u;       // operands reduced to the compute type (0: used exactly)
  double accumulate_u;  // products, sums and scaling (fp32 for every tensor-core type)
  double output_u;      // unit roundoff of the stored result
  double terms_per_k = 1;
  double output_min_normal = 0x1p-126;  // smallest normal of the stored result's type (f32, bf16)
  std::int64_t promote_every = 0;  // 0: one accumulator
  double partial_u = 0;            // each addition into a partial sum (promote_every > 0)
  double bound(std::int64_t k, double magnitude, double reference) const;
};

}  // namespace gemmlab
