// What the CPU rungs share with each other and with the tests and the model: their common
// requirement and the tilings they derive. The rungs themselves are declared and listed
// by registry.cpp; a new rung needs nothing here.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "cpu/machine/cache_info.hpp"
#include "gemmlab/variant.hpp"

namespace gemmlab::cpu {

struct MicroKernel;
struct Blocking;

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

// 05_packed_simd.cpp, shared with 06_threaded.cpp: binds a packed rung (named, its technique
// and threads set) to a block-size configuration: "auto" (from the caches) or a spec such
// as "KC=256,MC=480,NC=3072" that configure() has checked. Sets config, config_name,
// configs, configure (through `factory`, which builds the rung for another configuration),
// can_implement, run (`run` on the kernel of the current ISA cap and its block sizes, in the
// caller's context) and model.
using PackedRun = Status (*)(const RowMajorGemm& problem, const MicroKernel& kernel, const Blocking& blocking,
                             RunContext& context);
using PackedFactory = Variant (*)(const std::string& config);
void bind_packed(Variant& v, const std::string& config, PackedRun run, PackedFactory factory);

}  // namespace gemmlab::cpu
