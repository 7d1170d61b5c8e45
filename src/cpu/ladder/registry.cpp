// The CPU ladder, in rung order: each rung's factory is declared here, beside its line in
// the table, and defined in its numbered file. Adding a rung: its file and its line here.
#include <vector>

#include "gemmlab/variant.hpp"

namespace gemmlab::cpu {

Variant naive_variant();                // 01_naive.cpp
Variant loop_order_variant();           // 02_loop_order.cpp
Variant cache_tiled_variant();          // 03_cache_tiled.cpp
Variant register_tiled_variant();       // 04_register_tiled.cpp
Variant packed_simd_variant();          // 05_packed_simd.cpp
Variant threaded_variant();             // 06_threaded.cpp
Variant openblas_variant(int threads);  // openblas.cpp: the anchor (0 = all cores)

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
