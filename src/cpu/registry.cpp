// The CPU ladder, in order. Adding a rung: one file and one line here.
#include <vector>

#include "cpu/rungs.hpp"

namespace gemmlab::cpu {

const std::vector<Variant>& registry() {
  static const std::vector<Variant> table = {
      naive_variant(),
      openblas_variant(/*threads=*/1),
      openblas_variant(/*threads=*/0),
  };
  return table;
}

}  // namespace gemmlab::cpu
