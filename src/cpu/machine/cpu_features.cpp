#include "cpu/machine/cpu_features.hpp"

#include <cstdlib>
#include <string>

namespace gemmlab {
namespace {

CpuFeatures detect() {
  CpuFeatures f;
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.avx512dq = __builtin_cpu_supports("avx512dq");
  f.avx512bf16 = __builtin_cpu_supports("avx512bf16");
  f.amd = __builtin_cpu_is("amd");
  f.intel = __builtin_cpu_is("intel");
#endif
  if (f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq) f.widest = Isa::Avx512;
  else if (f.avx2 && f.fma) f.widest = Isa::Avx2;
  if (const char* env = std::getenv("GEMMLAB_CPU_ISA")) {
    const std::string v(env);
    if (v == "portable") f.limit = Isa::Portable;
    else if (v == "avx2") f.limit = Isa::Avx2;
  }
  return f;
}

CpuFeatures& mutable_features() {
  static CpuFeatures features = detect();
  return features;
}

}  // namespace

std::string_view to_string(Isa isa) {
  switch (isa) {
    case Isa::Portable: return "portable";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
  }
  return "?";
}

const CpuFeatures& cpu_features() { return mutable_features(); }
void set_isa_limit(Isa limit) { mutable_features().limit = limit; }

std::string_view openblas_coretype_for(const CpuFeatures& f) {
  // OpenBLAS 0.3.21 does not know recent Xeons and falls back to a generic kernel;
  // the kernel families below are the ones it ships for these feature sets.
  if (f.widest == Isa::Avx512) return f.avx512bf16 ? "Cooperlake" : "SkylakeX";
  if (f.widest == Isa::Avx2) return f.amd ? "Zen" : "Haswell";
  return {};
}

}  // namespace gemmlab
