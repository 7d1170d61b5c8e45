// The CPU rungs, one function per file, collected by registry.cpp in ladder order.
#pragma once

#include <array>
#include <cstdint>

#include "cpu/machine/cache_info.hpp"
#include "gemmlab/variant.hpp"

namespace gemmlab::cpu {

struct MicroKernel;
struct Blocking;

Variant naive_variant();            // 01_naive.cpp
Variant loop_order_variant();       // 02_loop_order.cpp
Variant cache_tiled_variant();      // 03_cache_tiled.cpp
Variant register_tiled_variant();   // 04_register_tiled.cpp
Variant packed_simd_variant();      // 05_packed_simd.cpp
Variant threaded_variant();         // 06_threaded.cpp
Variant openblas_variant(int threads);  // openblas.cpp: the anchor (0 = all cores)

// What every f32 CPU rung requires of a problem.
Status require_f32_host(const GemmProblem& problem, std::string_view rung);

// 02_loop_order.cpp: seed 002's innermost memory cost of each loop (0 = i, 1 = j, 2 = p)
// for a canonical problem, in cache lines per execution of that innermost loop, and the
// loop order it implies (loops[0] outermost ... loops[2] innermost, dearest outermost).
struct LoopOrder {
  std::array<int, 3> loops{0, 2, 1};
  std::array<double, 3> cost{};
};
LoopOrder choose_loop_order(const RowMajorGemm& problem);

// 03_cache_tiled.cpp: the strips of the tiled nest, from the cache sizes.
struct CacheTiles {
  std::int64_t bk = 0, bn = 0;
};
CacheTiles cache_tiles(const CacheSizes& caches);

// 04_register_tiled.cpp: the register block and the strips around it.
struct RegisterTiles {
  std::int64_t tm = 0, tn = 0, bk = 0, bn = 0;
};
RegisterTiles register_tiles(const CacheSizes& caches);

// 05_packed_simd.cpp, shared with 06_threaded.cpp: the printable block sizes and the
// traffic model of the five-loop driver.
Config packed_config(const MicroKernel& kernel, const Blocking& blocking);
Traffic packed_model(const GemmProblem& problem, const Blocking& blocking);

}  // namespace gemmlab::cpu
