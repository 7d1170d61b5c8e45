// A host problem's A and B stored in a 2-byte type: their float storage rounded to it (the
// float64 reference reads those rounded values) and encoded, the problem pointing at the
// encoded copies. For device suites that test bf16 and f16 inputs.
#pragma once

#include <cstddef>
#include <vector>

#include "core/element.hpp"
#include "support/host_problem.hpp"

namespace gemmlab::testing {

struct Encoded {
  std::vector<std::byte> a, b;
};

inline void store_as(HostProblem& hp, DType dtype, Encoded& out) {
  if (dtype == DType::F32) return;
  for (HostMatrix* x : {&hp.a, &hp.b})
    for (float& v : x->storage) v = round_to_storage(v, dtype);
  out.a = encode(hp.a.storage, dtype);
  out.b = encode(hp.b.storage, dtype);
  hp.problem.a.dtype = hp.problem.b.dtype = dtype;
  hp.problem.a.data = out.a.data();
  hp.problem.b.data = out.b.data();
}

}  // namespace gemmlab::testing
