// Verification against the float64 reference, with a tolerance from error analysis.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "core/reference.hpp"
#include "gemmlab/problem.hpp"
#include "gemmlab/tolerance.hpp"

namespace gemmlab {

// gamma(n, u) = n u / (1 - n u): the classic bound on the relative error of an
// n-term dot product in arithmetic with unit roundoff u (Higham, Accuracy and Stability, 3.1).
double gamma_bound(double n, double u);


// The tolerance for a precision (types.hpp):
// - f32 (SIMT): operands exact, float32 round-to-nearest: accumulate_u = 2^-24.
// - tensor cores (tf32 math, 2-byte or FP8 inputs): their adders truncate rather than round
//   (Fasi, Higham, Mikaitis, Pranesh, "Numerical behavior of NVIDIA tensor cores", PeerJ
//   CS 2021), which loses up to a whole ulp: accumulate_u = 2 * 2^-24.
// - tf32: float32 operands are reduced to tf32 by the hardware; the PTX ISA does not say
//   how a float32 register is reduced, and truncation loses up to a whole tf32 ulp:
//   input_u = 2 * 2^-11. bf16 and f16 operands are used exactly (their products fit float32).
// - output: C stored in bf16 or f16 is the float32 sum rounded once to nearest (cvt.rn):
//   output_u = 2^-8 or 2^-11, and for f16 its smallest normal, 2^-14.
// - e4m3 and e5m2: operands used exactly (their products fit float32; the scales apply with
//   alpha), sums in two levels (tolerance.hpp): partial sums of kFp8PromoteEvery K-terms in
//   the tensor core, kFp8PartialU per addition, promoted into float32 (accumulate_u as above).
Tolerance tolerance_for(DType input, DType compute, DType output);

// How often an FP8 rung adds the tensor core's partial sum into float32 registers: every 128
// K-terms, four wgmma K-steps of 32 (DeepSeek-V3's interval, N_C = 128). An FP8 rung
// promotes at least this often.
inline constexpr std::int64_t kFp8PromoteEvery = 128;
// Each addition into such a partial sum: about 14 bits kept, truncated, one ulp of 2^-13.
inline constexpr double kFp8PartialU = 0x1p-13;

struct Verification {
  bool passed = false;
  // Every element of C compared with the reference, or a sample of them (verify_sampled).
  bool sampled = false;
  std::int64_t checked = 0;          // elements compared with the reference
  std::int64_t failures = 0;         // elements over their bound (NaN counts)
  std::int64_t unwritten = 0;        // elements still holding the poison (sampled: of all of C)
  std::int64_t padding_clobbered = 0;// elements between cols and ld that were changed
  double rel_frobenius = 0;          // ||C - C_ref||_F / ||C_ref||_F (sampled: over the samples)
  double max_abs_error = 0;
  // The worst element: the largest error relative to its own bound.
  std::int64_t worst_row = -1, worst_col = -1;
  double worst_value = 0, worst_reference = 0, worst_bound = 0;
  std::string summary() const;
};

// Compares `result` (the problem's C as the variant left it, copied to the host, as floats:
// a 2-byte C decoded) with the reference. `buffer_before` is C's buffer before the run: the elements between the
// contiguous extent and ld must be unchanged. `poisoned` says C held NaN before the run
// (beta = 0), so any NaN left is an unwritten element. `tolerance`: the rung's own bound
// (Variant::tolerance); absent, the one tolerance_for() gives the problem's types.
Verification verify(const GemmProblem& problem, std::span<const float> result,
                    std::span<const float> buffer_before, const ReferenceResult& reference,
                    bool poisoned, const std::optional<Tolerance>& tolerance = std::nullopt);

// The same check at the sampled positions only: `reference` is reference_sampled()'s for
// `positions`, and each sampled element must lie within the same bound verify() applies.
// What needs no reference is still checked everywhere: with `poisoned`, every element of C
// still holding NaN counts as unwritten (the inputs are finite, so a written element is
// never NaN), and the padding between the contiguous extent and ld must be unchanged.
Verification verify_sampled(const GemmProblem& problem, std::span<const float> result,
                            std::span<const float> buffer_before, const SamplePositions& positions,
                            const ReferenceResult& reference, bool poisoned,
                            const std::optional<Tolerance>& tolerance = std::nullopt);

}  // namespace gemmlab
