// A host problem's A and B stored in a narrower type: their float storage rounded to it (the
// float64 reference reads those rounded values) and encoded, the problem pointing at the
// encoded copies. For suites that test bf16, f16 and FP8 inputs; FP8 operands are quantised
// per tensor as the harness quantises them (core/quantise.hpp), their scales in the problem.
#pragma once

#include <cstddef>
#include <vector>

#include "core/element.hpp"
#include "core/quantise.hpp"
#include "support/host_problem.hpp"

namespace gemmlab::testing {

struct Encoded {
  std::vector<std::byte> a, b;
};

// How FP8 operands are stored: quantised per tensor, or rounded as they are with scales of 1
// (small integers, exact in e4m3 and e5m2, for suites that need exact products).
enum class Fp8Storage { Quantised, AsTheyAre };

// After it, hp.a.storage and hp.b.storage hold the stored elements (FP8: the values over
// their scales), as floats.
inline void store_as(HostProblem& hp, DType dtype, Encoded& out, Fp8Storage fp8 = Fp8Storage::Quantised) {
  if (dtype == DType::F32) return;
  if (is_fp8(dtype) && fp8 == Fp8Storage::Quantised) {
    hp.problem.scale_a = quantise_per_tensor(hp.a.desc, dtype, hp.a.storage);
    hp.problem.scale_b = quantise_per_tensor(hp.b.desc, dtype, hp.b.storage);
  } else {
    for (HostMatrix* x : {&hp.a, &hp.b})
      for (float& v : x->storage) v = round_to_storage(v, dtype);
  }
  out.a = encode(hp.a.storage, dtype);
  out.b = encode(hp.b.storage, dtype);
  hp.problem.a.dtype = hp.problem.b.dtype = dtype;
  hp.problem.a.data = out.a.data();
  hp.problem.b.data = out.b.data();
}

}  // namespace gemmlab::testing
