// The portable micro-kernel: a 4 x 8 tile of C in plain C++, for any CPU. At -O3 the
// compiler keeps the 32 accumulators in eight SSE registers (the x86-64 baseline) and
// vectorises the column loop; 32 FMA-equivalents per 12 loads.
#include "cpu/microkernel.hpp"

namespace gemmlab::cpu {
namespace {

constexpr int kMr = 4;
constexpr int kNr = 8;

void kernel_4x8(std::int64_t kc, const float* ap, const float* bp, float* c, std::int64_t ldc,
                float alpha, float beta) {
  float acc[kMr][kNr] = {};  // (MR, NR), scalar-replaced into registers
  for (std::int64_t p = 0; p < kc; ++p) {
#pragma GCC unroll 4
    for (int r = 0; r < kMr; ++r) {
      const float a = ap[r];
#pragma GCC unroll 8
      for (int j = 0; j < kNr; ++j) acc[r][j] += a * bp[j];
    }
    ap += kMr;
    bp += kNr;
  }
  for (int r = 0; r < kMr; ++r) {
    float* row = c + r * ldc;
    if (beta == 0.0f) {
      for (int j = 0; j < kNr; ++j) row[j] = alpha * acc[r][j];  // C never read
    } else {
      for (int j = 0; j < kNr; ++j) row[j] = alpha * acc[r][j] + beta * row[j];
    }
  }
}

}  // namespace

const MicroKernel kPortableKernel{Isa::Portable, "portable_4x8", kMr, kNr, 128, kernel_4x8};

}  // namespace gemmlab::cpu
