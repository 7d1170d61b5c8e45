// What the Hopper kernels read and write in global memory, host side: the tensor-map views
// of A, B and C, the copies of operands TMA cannot read as they are (the plan, the rung's
// workspace, the copies themselves), and how explain names them.
//
// An operand TMA can address in the layout the kernel reads goes straight in. Otherwise it
// is copied into a workspace whose rows start every 16 bytes (seed 001's memory padding):
//  - padded: rows as they are (about 2 x its bytes of traffic), for a base or row pitch
//    that is not a multiple of 16 bytes;
//  - K-major: a tf32 or FP8 operand whose K is not contiguous and that cannot go into
//    registers, transposed on the way (operand_staging.cuh; the tf32 and FP8 tensor cores
//    read shared memory K-major only);
//  - split (3xTF32): every operand, K-major, as [big | small] tf32 parts.
// tf32 wgmma takes A from registers in any layout: a tf32 A stored k x m that TMA can address
// goes into registers (load_a_fragments), and where only B's K is strided (row-major NN) the
// kernel computes C^T = B^T A^T (kernel_problem). Measured on an H100 (tf32 NN, same run):
// 0.99x cuBLAS at 4096^3 and 8192^3, against 0.89x / 0.93x with B copied K-major first.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>

#include "cuda/hopper/config.cuh"
#include "cuda/hopper/fixup.cuh"
#include "cuda/runtime/buffer.hpp"
#include "cuda/runtime/check.hpp"
#include "cuda/runtime/tensor_map.hpp"
#include "cuda/tiles/operand_staging.cuh"
#include "gemmlab/problem.hpp"

namespace gemmlab::cuda::hopper {

// The Hopper kernels index rows and columns of C, and TMA addresses the operands, in 32-bit
// coordinates, and they do not split a problem into sub-grids as the SIMT rungs do: m, n or k
// within two tiles of 2^31 would wrap. Refused by name instead (a C that large does not fit a
// GPU's memory anyway unless the other side is tiny).
inline Status require_32bit_extents(const GemmProblem& p, const char* rung) {
  constexpr std::int64_t kLimit = 2147483647LL - 2 * 256;
  const RowMajorGemm g = canonicalize(p);
  if (g.m <= kLimit && g.n <= kLimit && g.k <= kLimit) return Status::ok();
  return {StatusCode::NotSupported, std::string(rung) + ": m, n and k must be at most " + std::to_string(kLimit) +
                                        " (32-bit TMA coordinates; the problem is " + std::to_string(g.m) + " x " +
                                        std::to_string(g.n) + " x " + std::to_string(g.k) + ")"};
}

// ---- tensor-map views ---------------------------------------------------------------------
// A and B for the canonical (row-major C) problem: A m x k or stored k x m, B stored n x k
// (K contiguous) or k x n.
template <class E>
TmaMatrix tma_a(const RowMajorGemm& g) {
  const auto u = [](std::int64_t x) { return static_cast<std::uint64_t>(x); };
  // Stored k x m: 64-wide chunks for wgmma's MN-major read (16-bit types), 32-wide blocks
  // for the register fragments (tf32).
  if (g.trans_a)
    return {g.a, u(g.k), u(g.m), u(g.lda), E::kTma, static_cast<std::uint32_t>(kBK<E>),
            static_cast<std::uint32_t>(E::kMnMajor ? kChunk : kMnBlock)};
  return {g.a, u(g.m), u(g.k), u(g.lda), E::kTma, static_cast<std::uint32_t>(kBM), static_cast<std::uint32_t>(kBK<E>)};
}
// B's box: a block of a cluster of `cluster_m` loads 1/cluster_m of the K-major rows.
template <class E>
TmaMatrix tma_b(const RowMajorGemm& g, int cluster_m = 1) {
  const auto u = [](std::int64_t x) { return static_cast<std::uint64_t>(x); };
  if (g.trans_b)
    return {g.b, u(g.n), u(g.k), u(g.ldb), E::kTma, static_cast<std::uint32_t>(kBN / cluster_m),
            static_cast<std::uint32_t>(kBK<E>)};
  return {g.b, u(g.k), u(g.n), u(g.ldb), E::kTma, static_cast<std::uint32_t>(kBK<E>), kChunk};
}
// C (stored as Out: float, bf16 or f16) as the TMA-store epilogue writes it: 64-row by
// 128-byte boxes.
template <class Out>
TmaMatrix tma_c(const RowMajorGemm& g) {
  const auto u = [](std::int64_t x) { return static_cast<std::uint64_t>(x); };
  constexpr TmaElement kElement = std::is_same_v<Out, float>           ? TmaElement::F32
                                  : std::is_same_v<Out, __nv_bfloat16> ? TmaElement::BF16
                                                                       : TmaElement::F16;
  return {g.c, u(g.m), u(g.n), u(g.ldc), kElement, kEpilogueRows, kEpilogueCols<Out>};
}
// C for a kernel that computes C^T (g is C^T's problem): C's own rows (g.n of them) in
// 32 x 32 boxes (store_tile_tma_transposed).
inline TmaMatrix tma_c_transposed(const RowMajorGemm& g) {
  const auto u = [](std::int64_t x) { return static_cast<std::uint64_t>(x); };
  return {g.c, u(g.n), u(g.m), u(g.ldc), TmaElement::F32, kEpilogueCols<float>, kEpilogueCols<float>};
}

// ---- the copy plan ------------------------------------------------------------------------
enum class Copy : std::uint8_t { None, Padded, KMajor, Split };

template <class E>
std::int64_t tma_pitch(std::int64_t cols) {
  constexpr std::int64_t kPerRow = 16 / E::kBytes;
  return (cols + kPerRow - 1) / kPerRow * kPerRow;
}
constexpr std::size_t kWorkspaceAlignment = 256;
inline std::size_t aligned(std::size_t bytes) {
  return (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
}

struct OperandPlan {
  Copy copy = Copy::None;
  staging::StagedLayout layout{};  // of a K-major or split copy
  std::size_t bytes = 0;           // of its workspace, a multiple of kWorkspaceAlignment
  bool k_major() const { return copy == Copy::KMajor || copy == Copy::Split; }
};

struct Plan {
  OperandPlan a, b;
  bool split = false;
  std::size_t bytes() const { return a.bytes + b.bytes; }
  // The layouts the kernel reads once the copies ran (a K-major copy of B is stored n x k).
  bool trans_a(const RowMajorGemm& g) const { return a.k_major() ? false : g.trans_a; }
  bool trans_b(const RowMajorGemm& g) const { return b.k_major() ? true : g.trans_b; }
};

// `k_major`: op(X)'s K is contiguous; `rows`: m for A, n for B.
template <class E>
OperandPlan plan_operand(const TmaMatrix& view, bool k_major, std::int64_t rows, std::int64_t k, bool split) {
  OperandPlan o;
  if (split) {
    o.copy = Copy::Split;
    o.layout = {static_cast<int>((k + kBK<E> - 1) / kBK<E> * kBK<E>), 2};
  } else if (!E::kMnMajor && !k_major) {
    o.copy = Copy::KMajor;
    o.layout = {static_cast<int>(tma_pitch<E>(k)), 1, E::kBytes};
  } else if (!tma_requirements(view, "").is_ok()) {
    o.copy = Copy::Padded;
    o.bytes = aligned(static_cast<std::size_t>(view.rows) * tma_pitch<E>(static_cast<std::int64_t>(view.cols)) *
                      E::kBytes);
    return o;
  } else {
    return o;
  }
  o.bytes = aligned(o.layout.bytes(static_cast<int>(rows)));
  return o;
}

// tf32 A stored k x m goes into registers (no copy) unless 3xTF32 splits it or TMA cannot
// address it (an unaligned base or row pitch: then it is copied K-major). FP8 A: copied.
template <class E>
bool a_in_registers(const RowMajorGemm& g, bool split) {
  return E::kRegisterA && !split && g.trans_a && tma_requirements(tma_a<E>(g), "A").is_ok();
}

// The problem the kernel runs for the canonical problem `g`: C^T = B^T A^T (`c_transposed`)
// where a tf32 B's K is strided and A's is not (row-major NN), so that B^T goes into
// registers as the kernel's A and no operand is copied.
template <class E>
RowMajorGemm kernel_problem(const RowMajorGemm& g, bool split, bool& c_transposed) {
  c_transposed = false;
  if (g.trans_a || g.trans_b) return g;  // A goes into registers as it is, or B is K-major
  const RowMajorGemm t{g.n, g.m, g.k, true, true, g.b, g.ldb, g.a, g.lda, g.c, g.ldc, g.alpha, g.beta};
  if (!a_in_registers<E>(t, split)) return g;
  c_transposed = true;
  return t;
}

template <class E>
Plan make_plan(const RowMajorGemm& g, bool split) {
  Plan plan;
  plan.split = split;
  if (!a_in_registers<E>(g, split)) plan.a = plan_operand<E>(tma_a<E>(g), !g.trans_a, g.m, g.k, split);
  plan.b = plan_operand<E>(tma_b<E>(g), g.trans_b, g.n, g.k, split);
  return plan;
}

// ---- the workspace and the copies -----------------------------------------------------------
// The stream-K tail's global memory (sized by prepare()): two partial tiles per block and a
// counter per tail unit and rank, zero between runs (the last piece resets its own).
struct StreamKWorkspace {
  DeviceMemory partials, arrived;
};

// The workspace of one rung: grown by prepare(), only read by run().
struct Workspace {
  DeviceMemory memory;     // the operand copies
  StreamKWorkspace tail;   // the stream-K tail's partials and counters
  DeviceMemory lockstep;   // the counters that keep whole rounds in step (lockstep.cuh)
  // Room for the stream-K tail of a grid of up to `blocks`; new counters start at zero.
  Status reserve_tail(int blocks);
  Status reserve_lockstep();  // zero when new
  Status reserve(std::size_t bytes);
};

inline constexpr std::size_t kLockstepBytes = 2 * sizeof(int);

inline Status Workspace::reserve_lockstep() {
  if (lockstep.bytes() >= kLockstepBytes) return Status::ok();
  GEMMLAB_TRY(DeviceMemory::allocate(kLockstepBytes, lockstep));
  CUDA_CHECK(cudaMemset(lockstep.data(), 0, kLockstepBytes));
  CUDA_CHECK(cudaDeviceSynchronize());  // before a kernel on any stream reads them
  return Status::ok();
}

inline Status Workspace::reserve_tail(int blocks) {
  const std::size_t partial_bytes = kPartialsPerBlock * static_cast<std::size_t>(blocks) * kTileFloats * sizeof(float);
  if (tail.partials.bytes() < partial_bytes) {
    tail.partials = DeviceMemory{};
    GEMMLAB_TRY(DeviceMemory::allocate(partial_bytes, tail.partials));
  }
  const std::size_t counter_bytes = static_cast<std::size_t>(blocks) * sizeof(int);
  if (tail.arrived.bytes() < counter_bytes) {
    tail.arrived = DeviceMemory{};
    GEMMLAB_TRY(DeviceMemory::allocate(counter_bytes, tail.arrived));
    CUDA_CHECK(cudaMemset(tail.arrived.data(), 0, counter_bytes));
    CUDA_CHECK(cudaDeviceSynchronize());  // before a kernel on any stream reads them
  }
  return Status::ok();
}

inline Status Workspace::reserve(std::size_t bytes) {
  if (bytes <= memory.bytes()) return Status::ok();
  memory = DeviceMemory{};  // free the old block before taking the larger one
  const Status s = DeviceMemory::allocate(bytes, memory);
  if (s.is_ok()) return s;
  char size[64];
  std::snprintf(size, sizeof size, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return {s.code(), std::string("wgmma: the workspace for the operand copies (") + size + ") could not be allocated: " +
                        s.message()};
}

// The storage type of a copy: 16-bit and 8-bit elements move as raw bits.
template <class E>
using StorageOf =
    std::conditional_t<E::kBytes == 1, std::uint8_t, std::conditional_t<E::kBytes == 2, std::uint16_t, float>>;

// A padded copy of one operand into `dst` (launched by stage_operands, with the other
// operand's in the same grid), and the problem pointed at it.
template <class E>
staging::RepitchJob<StorageOf<E>> padded_copy(const TmaMatrix& view, const void*& data, std::int64_t& ld,
                                               unsigned char* dst) {
  using T = StorageOf<E>;
  const std::int64_t pitch = tma_pitch<E>(static_cast<std::int64_t>(view.cols));
  const staging::RepitchJob<T> job{static_cast<const T*>(data), ld, reinterpret_cast<T*>(dst), pitch,
                                   static_cast<int>(view.rows), static_cast<int>(view.cols)};
  data = dst;
  ld = pitch;
  return job;
}

// Enqueues the K-major (or split) copy of one operand into `dst` and points the problem at it.
template <class E>
Status k_major_copy(const OperandPlan& o, bool k_major, std::int64_t rows, std::int64_t k, const void*& data,
                    std::int64_t& ld, bool& trans, bool k_major_trans, unsigned char* dst, Stream stream) {
  if constexpr (E::kMnMajor) {
    return {StatusCode::InternalError, "wgmma: K-major staging is for tf32 and FP8 operands"};
  } else {
    using T = StorageOf<E>;
    GEMMLAB_TRY(staging::stage_k_major(static_cast<const T*>(data), ld, k_major, static_cast<int>(rows),
                                       static_cast<int>(k), o.copy == Copy::Split, o.layout, reinterpret_cast<T*>(dst),
                                       stream));
    data = dst;
    ld = o.layout.pitch();
    trans = k_major_trans;  // the copy is K-major
    return Status::ok();
  }
}

// Enqueues the plan's copies into the workspace (sized by prepare()) and points `g` at them.
template <class E>
Status stage_operands(RowMajorGemm& g, const Plan& plan, const Workspace& w, Stream stream) {
  if (plan.bytes() > w.memory.bytes())
    return {StatusCode::InternalError, "wgmma: run() before prepare() sized the workspace for this problem"};
  auto* base = static_cast<unsigned char*>(w.memory.data());
  const std::int64_t k = g.k;
  if (plan.a.k_major())
    GEMMLAB_TRY(k_major_copy<E>(plan.a, !g.trans_a, g.m, k, g.a, g.lda, g.trans_a, false, base, stream));
  if (plan.b.k_major())
    GEMMLAB_TRY(k_major_copy<E>(plan.b, g.trans_b, g.n, k, g.b, g.ldb, g.trans_b, true, base + plan.a.bytes, stream));
  // Padded copies: both operands in one grid (repitch_kernel).
  staging::RepitchJob<StorageOf<E>> jobs[2] = {};
  int n = 0;
  if (plan.a.copy == Copy::Padded) jobs[n++] = padded_copy<E>(tma_a<E>(g), g.a, g.lda, base);
  if (plan.b.copy == Copy::Padded) jobs[n++] = padded_copy<E>(tma_b<E>(g), g.b, g.ldb, base + plan.a.bytes);
  if (n > 0) GEMMLAB_TRY(staging::repitch_rows(jobs[0], jobs[1], stream));
  return Status::ok();
}

// " after a padded copy of A (67.1 MB moved)", ...: what explain appends to the kernel's
// name: which copies run before it and their traffic (each copy reads its source and writes
// the workspace; a split reads half what it writes).
inline std::string describe_copies(const Plan& plan) {
  const auto what = [](Copy c) -> std::string {
    switch (c) {
      case Copy::Padded: return "a padded copy";
      case Copy::KMajor: return "a K-major (transposed) copy";
      case Copy::Split: return "a split into tf32 big and small parts";
      case Copy::None: break;
    }
    return "";
  };
  const auto copied = [](const OperandPlan& o) { return o.copy != Copy::None; };
  const auto moved = [&](const OperandPlan& o) {
    if (!copied(o)) return 0.0;
    return static_cast<double>(o.bytes) * (o.copy == Copy::Split ? 1.5 : 2.0);
  };
  const double bytes = moved(plan.a) + moved(plan.b);
  std::string copies;
  if (copied(plan.a) && plan.a.copy == plan.b.copy)
    copies = " after " + what(plan.a.copy) + " of A and B";
  else if (copied(plan.a) || copied(plan.b)) {
    copies = " after ";
    if (copied(plan.a)) copies += what(plan.a.copy) + " of A";
    if (copied(plan.a) && copied(plan.b)) copies += " and ";
    if (copied(plan.b)) copies += what(plan.b.copy) + " of B";
  }
  if (bytes > 0) {
    char text[48];
    std::snprintf(text, sizeof text, " (%.1f MB moved)", bytes / 1e6);
    copies += text;
  }
  return copies;
}

}  // namespace gemmlab::cuda::hopper
