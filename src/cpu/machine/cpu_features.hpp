// What the host CPU can execute, read once at run time (the binary runs on other machines
// than the one that built it), with an override so tests can force a narrower path.
#pragma once

#include <string_view>

namespace gemmlab {

enum class Isa { Portable, Avx2, Avx512 };
std::string_view to_string(Isa isa);

struct CpuFeatures {
  bool avx2 = false, fma = false, avx512f = false, avx512bw = false, avx512vl = false,
       avx512dq = false, avx512bf16 = false;
  bool amd = false, intel = false;
  Isa widest = Isa::Portable;  // what the hardware supports
  Isa limit = Isa::Avx512;     // a cap: GEMMLAB_CPU_ISA=portable|avx2|avx512 or set_isa_limit()
  Isa best_isa() const { return widest < limit ? widest : limit; }
};

const CpuFeatures& cpu_features();
// Caps the ISA the CPU rungs use (tests run each path on one machine).
void set_isa_limit(Isa limit);

// The OPENBLAS_CORETYPE that matches this CPU ("SkylakeX", "Haswell", "Zen"), or empty
// when OpenBLAS's own detection is trusted.
std::string_view openblas_coretype_for(const CpuFeatures& features);

}  // namespace gemmlab
