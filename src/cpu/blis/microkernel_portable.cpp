// The portable micro-kernel: a 4 x (2W) tile of C in eight SIMD values of the build's
// baseline width W (simd.hpp: 4 x 8 with SSE on x86-64), plain C++ without intrinsics.
// Per step: 2 vector loads of B and 4 broadcasts of A for 8 vector multiply-adds (no FMA
// in baseline x86-64: a multiply and an add each).
#include "cpu/blis/microkernel.hpp"
#include "cpu/blis/simd.hpp"

namespace gemmlab::cpu {
namespace {

constexpr int kMr = 4;
constexpr int kNv = 2;
constexpr int kNr = kNv * kVecWidth;
static_assert(kMr <= kMaxMr && kNr <= kMaxNr, "raise kMaxMr/kMaxNr in microkernel.hpp");

void kernel_portable(std::int64_t kc, const float* ap, const float* bp, float* c,
                     std::int64_t ldc, float alpha, float beta) {
  Vec acc[kMr][kNv] = {};  // (MR, NR) in registers
  for (std::int64_t p = 0; p < kc; ++p) {
    Vec b[kNv];  // (1, NR) of B
    for (int v = 0; v < kNv; ++v) b[v].copy_from(bp + v * kVecWidth, kVecAligned);
    for (int r = 0; r < kMr; ++r) {
      const Vec a(ap[r]);  // A(r, p) in every lane
      for (int v = 0; v < kNv; ++v) acc[r][v] += a * b[v];
    }
    ap += kMr;
    bp += kNr;
  }
  for (int r = 0; r < kMr; ++r) {
    float tile_row[kNr];
    for (int v = 0; v < kNv; ++v) acc[r][v].copy_to(tile_row + v * kVecWidth, kVecAligned);
    float* row = c + r * ldc;
    if (beta == 0.0f) {
      for (int j = 0; j < kNr; ++j) row[j] = alpha * tile_row[j];  // C never read
    } else {
      for (int j = 0; j < kNr; ++j) row[j] = alpha * tile_row[j] + beta * row[j];
    }
  }
}

}  // namespace

const MicroKernel kPortableKernel{Isa::Portable, kNr == 8 ? "portable_4x8" : "portable_4xN", kMr,
                                  kNr, 32 * kVecWidth, L1Panel::B, kernel_portable};

}  // namespace gemmlab::cpu
