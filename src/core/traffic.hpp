// The parts of the traffic model every rung shares: the work itself and the least data
// any implementation must move (each input read once, C written once and read if beta != 0).
#pragma once

#include "gemmlab/problem.hpp"
#include "gemmlab/variant.hpp"

namespace gemmlab {

inline Traffic minimum_traffic(const GemmProblem& p) {
  Traffic t;
  const double m = static_cast<double>(p.m), n = static_cast<double>(p.n),
               k = static_cast<double>(p.k);
  const double in_bytes = static_cast<double>(storage_bytes(p.a.dtype));
  const double out_bytes = static_cast<double>(storage_bytes(p.c.dtype));
  t.flops = 2.0 * m * n * k;
  t.global_store_bytes = m * n * out_bytes;
  t.min_dram_bytes = (m * k + k * n) * in_bytes + m * n * out_bytes * (p.beta != 0.0 ? 2.0 : 1.0);
  return t;
}

// Loads issued when every thread reads `loads_per_fma` words per multiply-add (seed 003:
// the naive kernel's two loads per two flops give a CGMA of 1).
inline void set_loads_per_fma(Traffic& t, const GemmProblem& p, double words_per_fma) {
  const double fmas = static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
  t.global_load_bytes = fmas * words_per_fma * static_cast<double>(storage_bytes(p.a.dtype));
  t.cgma = 2.0 / words_per_fma;
}

}  // namespace gemmlab
