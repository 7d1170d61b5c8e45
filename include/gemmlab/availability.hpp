// Where a variant runs: what it declares it needs (Variant::min_compute_capability,
// arch_specific) against the GPU and against the code this build carries. A kernel compiled
// for an architecture without its instructions compiles to nothing (src/cuda/arch/target.cuh),
// so the library never launches one without this check.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gemmlab/variant.hpp"

namespace gemmlab {

// One entry of a CUDA architecture list as CMake writes it: "86" (machine code and PTX),
// "80-real" (machine code only), "90-virtual" (PTX only), "90a-real" (arch-specific).
struct ArchTarget {
  int arch = 0;                // 10 * major + minor: 86
  bool arch_specific = false;  // "90a": its code runs on compute capability 9.0 only
  bool sass = true;            // machine code for `arch`: runs on the same major version, minor >= arch's
  bool ptx = true;             // PTX: the driver compiles it for `arch` and every newer GPU
  std::string text;            // as written: "90a-real"
};

// "75-real;80-real;90a-real;90-virtual" (semicolons or commas) -> its entries. An entry that
// is not an architecture is an InvalidValue naming it.
Status parse_architectures(std::string_view list, std::vector<ArchTarget>& out);

// The entry of `build` whose code the driver loads on a GPU of compute capability `cc`: the
// newest machine code of the same major version and no newer minor, else the newest PTX of
// no newer architecture, arch-specific entries only for their own compute capability.
// nullopt: the build has no code this GPU can run.
std::optional<ArchTarget> loaded_target(std::span<const ArchTarget> build, int cc);

// Empty when `variant` runs on a GPU of compute capability `cc` with code built for `build`
// (the list its kernels were compiled for); otherwise why not, for people:
// "needs sm_90a: TMA and wgmma (this GPU is sm_86)". Anchors (vendor libraries) bring their
// own code: only min_compute_capability applies to them.
std::string unavailable_reason(const Variant& variant, int cc, std::span<const ArchTarget> build);

// The same for the current CUDA device and this build: empty for a CPU variant, and for a
// CUDA variant that runs here; "no CUDA device" without one.
std::string unavailable_here(const Variant& variant);
// unavailable_here() as a Status: ArchMismatch with the reason.
Status check_runs_here(const Variant& variant);

// The CUDA architectures this build's kernels were compiled for (CMAKE_CUDA_ARCHITECTURES),
// and those of the Hopper rungs' (its 90a entries; empty when it has none). Both empty in a
// build without CUDA.
std::string_view cuda_architectures();
std::string_view hopper_architectures();

}  // namespace gemmlab
