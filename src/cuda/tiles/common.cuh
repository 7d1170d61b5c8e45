// What every SIMT rung shares: the kernel arguments, guarded element access, the
// epilogue, and dispatch over the four transposition cases.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/traffic.hpp"
#include "cuda/runtime/device.hpp"
#include "gemmlab/problem.hpp"
#include "gemmlab/variant.hpp"

namespace gemmlab::cuda {

// A row-major problem (see canonicalize()) as kernels take it: A and B of `Element` (float
// for the SIMT rungs, the 16-bit storage of bf16 or f16 for the tensor-core ones), C float.
// Dimensions fit in int (can_implement checks); offsets are 64-bit because m * ld can pass 2^31.
template <class Element>
struct RowMajorArgs {
  int m, n, k;
  const Element* __restrict__ a;
  long long lda;
  const Element* __restrict__ b;
  long long ldb;
  float* __restrict__ c;
  long long ldc;
  float alpha, beta;
};
using GemmArgs = RowMajorArgs<float>;

template <class Element = float>
RowMajorArgs<Element> make_args(const RowMajorGemm& g) {
  return {static_cast<int>(g.m), static_cast<int>(g.n), static_cast<int>(g.k),
          static_cast<const Element*>(g.a), g.lda, static_cast<const Element*>(g.b), g.ldb,
          static_cast<float*>(g.c), g.ldc, static_cast<float>(g.alpha), static_cast<float>(g.beta)};
}

// The row-major problem a kernel's arguments describe (make_args' inverse; float alpha and
// beta come back exactly).
template <class Element>
RowMajorGemm row_major_of(const RowMajorArgs<Element>& g, bool trans_a, bool trans_b) {
  return {g.m, g.n, g.k, trans_a, trans_b, g.a, g.lda, g.b, g.ldb, g.c, g.ldc, g.alpha, g.beta};
}

// op(A)(row, kk) and op(B)(kk, col), zero outside the matrix so partial tiles add nothing.
template <bool TransA>
__device__ __forceinline__ float load_a(const GemmArgs& g, int row, int kk) {
  if (row >= g.m || kk >= g.k) return 0.0f;
  return TransA ? g.a[static_cast<long long>(kk) * g.lda + row] : g.a[static_cast<long long>(row) * g.lda + kk];
}
template <bool TransB>
__device__ __forceinline__ float load_b(const GemmArgs& g, int kk, int col) {
  if (kk >= g.k || col >= g.n) return 0.0f;
  return TransB ? g.b[static_cast<long long>(col) * g.ldb + kk] : g.b[static_cast<long long>(kk) * g.ldb + col];
}

// C(row, col) <- alpha * acc + beta * C(row, col); beta = 0 never reads C.
__device__ __forceinline__ void store_c(const GemmArgs& g, int row, int col, float acc) {
  if (row >= g.m || col >= g.n) return;
  float* out = g.c + static_cast<long long>(row) * g.ldc + col;
  *out = g.beta == 0.0f ? g.alpha * acc : fmaf(g.beta, *out, g.alpha * acc);
}

// Four consecutive elements of a row of C; one 16-byte access when `vector_ok` (C's rows
// are 16-byte aligned) and all four lie inside C, element by element otherwise.
__device__ __forceinline__ void store_c4(const GemmArgs& g, int row, int col, float4 acc, bool vector_ok) {
  if (row >= g.m) return;
  if (vector_ok && col + 3 < g.n) {
    float4* out = reinterpret_cast<float4*>(g.c + static_cast<long long>(row) * g.ldc + col);
    float4 r = make_float4(g.alpha * acc.x, g.alpha * acc.y, g.alpha * acc.z, g.alpha * acc.w);
    if (g.beta != 0.0f) {
      const float4 old = *out;
      r.x = fmaf(g.beta, old.x, r.x);
      r.y = fmaf(g.beta, old.y, r.y);
      r.z = fmaf(g.beta, old.z, r.z);
      r.w = fmaf(g.beta, old.w, r.w);
    }
    *out = r;
    return;
  }
  store_c(g, row, col + 0, acc.x);
  store_c(g, row, col + 1, acc.y);
  store_c(g, row, col + 2, acc.z);
  store_c(g, row, col + 3, acc.w);
}

__host__ __device__ constexpr int ceil_div(long long x, int y) { return static_cast<int>((x + y - 1) / y); }

// Calls launch(std::bool_constant<TransA>, std::bool_constant<TransB>) for the runtime flags.
template <class Launch>
decltype(auto) dispatch_trans(bool trans_a, bool trans_b, Launch&& launch) {
  if (trans_a) {
    if (trans_b) return launch(std::true_type{}, std::true_type{});
    return launch(std::true_type{}, std::false_type{});
  }
  if (trans_b) return launch(std::false_type{}, std::true_type{});
  return launch(std::false_type{}, std::false_type{});
}

// What every rung requires: A, B, C and math of the types it declares (Variant::precision),
// dimensions within int. The message names the rung and both sets of types.
Status require_precision(const GemmProblem& problem, const Precision& want, const char* rung);
// The same for the f32 SIMT rungs: f32 data and math.
Status require_f32_simt(const GemmProblem& problem, const char* rung);

}  // namespace gemmlab::cuda
