// The CPU ladder, in order. Adding a rung: one file and one line here.
#include <vector>

#include "cpu/ladder/rungs.hpp"

namespace gemmlab::cpu {

const std::vector<Variant>& registry() {
  static const std::vector<Variant> table = {
      naive_variant(),
      loop_order_variant(),
      cache_tiled_variant(),
      register_tiled_variant(),
      packed_simd_variant(),
      threaded_variant(),
      openblas_variant(/*threads=*/1),
      openblas_variant(/*threads=*/0),
  };
  return table;
}

}  // namespace gemmlab::cpu
