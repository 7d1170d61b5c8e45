// The Hopper engine's fixed shape: element types, the block tile and its stages, the register
// split between producer and consumers, the K schedule, wgmma's shared-memory descriptors,
// the rows a thread's registers hold, and what the epilogue needs to know about C. Shared by
// the plain TMA + wgmma rung (12_wgmma_bf16.cu) and the warp-specialised kernel (kernel.cuh).
//
// One block owns a 128 x 256 tile of C (CGMA 2·128·256/(128+256) = 171 flops per element
// loaded). Each stage of the shared-memory ring holds a 128-row A tile and a 256-row B tile,
// 128 bytes of K deep, 128-byte swizzled (the layout wgmma reads without bank conflicts).
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/arch/smem.cuh"
#include "cuda/arch/wgmma.cuh"
#include "cuda/runtime/tensor_map.hpp"

namespace gemmlab::cuda::hopper {

// The element types: storage bytes, the k of one wgmma, the tensor-map element, whether
// wgmma can read the operand MN-major (16-bit types only), whether an A stored k x m goes
// into registers (tf32 only: kRegisterA), whether every K step's sums are promoted into f32
// registers (FP8: kPromoted, consumer.cuh), the MMA itself (and mma_half, its m64n128 half,
// for promoted sums), and how C is stored (Output: float, or a 16-bit type, into which the
// epilogue rounds alpha * acc + beta * C once).
template <TmaElement Tma, class Out = float>
struct SixteenBitOperand {
  static constexpr int kBytes = 2, kMmaK = 16;
  static constexpr TmaElement kTma = Tma;
  static constexpr bool kMnMajor = true, kRegisterA = false, kPromoted = false;
  using Output = Out;
  template <int MnMajorA, int MnMajorB>
  __device__ static void mma(float (&d)[128], std::uint64_t a, std::uint64_t b, int scale_d) {
    if constexpr (Tma == TmaElement::BF16) arch::wgmma_m64n256k16_bf16<MnMajorA, MnMajorB>(d, a, b, scale_d);
    else arch::wgmma_m64n256k16_f16<MnMajorA, MnMajorB>(d, a, b, scale_d);
  }
};
using Bf16Operand = SixteenBitOperand<TmaElement::BF16>;
using F16Operand = SixteenBitOperand<TmaElement::F16>;
using Bf16OperandBf16C = SixteenBitOperand<TmaElement::BF16, __nv_bfloat16>;
using F16OperandF16C = SixteenBitOperand<TmaElement::F16, __half>;
struct Tf32Operand {  // float32 in memory; the tensor cores use its top 19 bits
  static constexpr int kBytes = 4, kMmaK = 8;
  static constexpr TmaElement kTma = TmaElement::F32;
  static constexpr bool kMnMajor = false, kRegisterA = true, kPromoted = false;
  using Output = float;
  template <int MnMajorA, int MnMajorB>
  __device__ static void mma(float (&d)[128], std::uint64_t a, std::uint64_t b, int scale_d) {
    static_assert(MnMajorA == 0 && MnMajorB == 0, "tf32 wgmma reads K-major operands only");
    arch::wgmma_m64n256k8_tf32(d, a, b, scale_d);
  }
  __device__ static void mma_half(float (&d)[64], std::uint64_t a, std::uint64_t b, int scale_d) {
    arch::wgmma_m64n128k8_tf32(d, a, b, scale_d);
  }
};
// FP8 (e4m3 or e5m2) A and B, K-major only. The tensor cores add FP8 products into a sum that
// keeps about 14 bits (DeepSeek-V3's report, measured on H800), so every stage's 128-deep
// partial sum is promoted into f32 registers (kPromoted: consumer.cuh, promoted_stages).
template <arch::Fp8 Format, class Out = float>
struct Fp8Operand {
  static constexpr int kBytes = 1, kMmaK = 32;
  static constexpr TmaElement kTma = TmaElement::Byte;
  static constexpr bool kMnMajor = false, kRegisterA = false, kPromoted = true;
  using Output = Out;
  template <int MnMajorA, int MnMajorB>
  __device__ static void mma(float (&d)[128], std::uint64_t a, std::uint64_t b, int scale_d) {
    static_assert(MnMajorA == 0 && MnMajorB == 0, "FP8 wgmma reads K-major operands only");
    arch::wgmma_m64n256k32_fp8<Format>(d, a, b, scale_d);
  }
  __device__ static void mma_half(float (&d)[64], std::uint64_t a, std::uint64_t b, int scale_d) {
    arch::wgmma_m64n128k32_fp8<Format>(d, a, b, scale_d);
  }
};

constexpr int kBM = 128, kBN = 256;  // block tile
constexpr int kRowBytes = 128;       // one swizzled row of a tile: 128 bytes of K (or of MN)
constexpr int kStages = 4;
constexpr int kConsumers = 2;        // warpgroups of 64 rows each
constexpr int kWarpgroup = 128;
constexpr int kWarpgroupWarps = kWarpgroup / 32;
constexpr int kThreads = kWarpgroup * (kConsumers + 1);
constexpr int kABytes = kBM * kRowBytes;  // 16 KiB
constexpr int kBBytes = kBN * kRowBytes;  // 32 KiB
constexpr int kStageBytes = kABytes + kBBytes;
constexpr int kAtomBytes = 1024;          // 8 rows x 128 bytes: the swizzle atom
// The epilogue through shared memory: each consumer warpgroup stages its 64 rows of C 128
// bytes at a time (32 float columns, 64 of a 2-byte C), in two swizzled buffers it
// alternates between.
template <class Out>
constexpr int kEpilogueCols = kRowBytes / static_cast<int>(sizeof(Out));
constexpr int kEpilogueRows = kBM / kConsumers;
constexpr int kEpilogueBufferBytes = kEpilogueRows * kRowBytes;  // 8 KiB
constexpr int kEpilogueBuffers = 2;
constexpr int kEpilogueBytes = kConsumers * kEpilogueBuffers * kEpilogueBufferBytes;
constexpr int kSmemBytes = kStages * kStageBytes + kEpilogueBytes + kAtomBytes;  // + slack to align the ring
static_assert(kSmemBytes <= 227 * 1024, "shared memory of one sm_90 block (opt-in)");
constexpr int kGroupM = 16;
// setmaxnreg moves registers within the block's allocation (168 per thread at 384 threads):
// what the producer gives up, the consumers can take.
constexpr int kLaunchRegisters = 168;
constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;
static_assert((kLaunchRegisters - kProducerRegisters) * kWarpgroup >=
                  (kConsumerRegisters - kLaunchRegisters) * kWarpgroup * kConsumers,
              "the consumers would wait for registers the producer does not free");

// Whether a consumer warpgroup whose 64 rows all lie below C skips its MMAs (kernel.cuh's
// consume; form_of counts a unit's K step at half the cost there): the 16-bit types. The
// tf32 kernels spilled 12 bytes with it.
template <class E>
constexpr bool kSkipsIdleWarpgroups = E::kMnMajor;

template <class E>
constexpr int kBK = kRowBytes / E::kBytes;  // K per stage: 64 bf16, 32 tf32, 128 FP8
template <class E>
constexpr int kKSteps = kBK<E> / E::kMmaK;  // wgmma per stage and warpgroup: 4
// An MN-major operand (16-bit types) arrives as chunks of kBK rows of k by 64 MN elements.
constexpr int kChunk = 64;
constexpr int kChunkBytes = kChunk * kRowBytes;  // 8 KiB
constexpr int kKStepBytes = 32;                  // one wgmma's K in a K-major row (16 bf16, 8 tf32)
// A tf32 A stored k x m (M-major) is read into registers (wgmma takes tf32 A from registers,
// in any layout, and has no MN-major form from shared memory). It arrives as it is stored,
// in blocks of 32 rows of A (128 bytes) by the stage's 32 k, 128-byte swizzled (load_stage,
// permuted_row, load_a_fragments).
constexpr int kMnBlock = kRowBytes / 4;                      // rows of A per block: 32
constexpr int kMnBlockBytes = kBK<Tf32Operand> * kRowBytes;  // 4 KiB
static_assert(kBM / kMnBlock * kMnBlockBytes == kABytes, "the blocks fill the A tile");
constexpr int kFragmentRegs = 4 * kKSteps<Tf32Operand>;  // a stage's A fragments: 4 per wgmma step

// C as the epilogue writes it (in the element type's Output), and which of the kept store
// paths it takes (form_of).
struct Epilogue {
  void* c;
  long long ldc;
  int m, n;
  float alpha, beta;
  bool tma_store;     // C through shared memory and TMA (needs a TMA-addressable C)
  bool c_transposed;  // the kernel computes C^T: its (row, col) is C's (col, row)
  bool warp_store;    // C through shared memory and stores by the consumers' warps (any C)
  // (neither: C from registers)
};

// The K loop: `segments` passes of `k_tiles` tiles each. One pass is the plain product.
// Three are 3xTF32 (operand_staging.cuh): A and B rows hold [big | small] with the small
// part `split` columns in, and the passes multiply big·small, small·big, big·big (the
// small terms first, while the sum is small).
struct KSchedule {
  int k_tiles, segments, split;
  __device__ int a_column(int segment, int tile) const { return (segment == 1 ? split : 0) + tile; }
  __device__ int b_column(int segment, int tile) const { return (segment == 0 && segments > 1 ? split : 0) + tile; }
};

// Shared-memory descriptor of the A rows this warpgroup multiplies, wgmma step `kk`.
template <bool TransA>
__device__ __forceinline__ std::uint64_t a_descriptor(const unsigned char* a_stage, int warpgroup, int kk) {
  if constexpr (!TransA)  // K-major: rows of 128 bytes, 8-row groups one atom apart
    return arch::smem_descriptor_sw128(a_stage + warpgroup * 64 * kRowBytes + kk * kKStepBytes, 16, kAtomBytes);
  else  // M-major: chunk `warpgroup` holds these 64 rows; 8 k-rows per atom, 2 per wgmma
    return arch::smem_descriptor_sw128(a_stage + warpgroup * kChunkBytes + kk * 2 * kAtomBytes, kChunkBytes,
                                       kAtomBytes);
}

template <bool TransB>
__device__ __forceinline__ std::uint64_t b_descriptor(const unsigned char* b_stage, int kk) {
  if constexpr (TransB)  // B stored n x k: K-major, 256 rows
    return arch::smem_descriptor_sw128(b_stage + kk * kKStepBytes, 16, kAtomBytes);
  else  // B stored k x n: N-major, four 64-wide chunks
    return arch::smem_descriptor_sw128(b_stage + kk * 2 * kAtomBytes, kChunkBytes, kAtomBytes);
}

// Which rows of its warpgroup's 64 the registers of this thread hold, for A fragments and
// accumulators alike: row(h) for a_0 / a_2 (h = 0) and a_1 / a_3 (h = 1), and for
// accumulator registers 4j + 2h + {0, 1}. wgmma's own order is 16 warp + lane/4 + 8h. With A
// read from a 128-byte swizzled block (load_a_fragments) that order would put lanes 4 k
// apart on the same banks (the swizzle XORs a row's 16-byte chunk with k % 8, and
// neighbouring chunks pair up under XOR 1). So the rows are permuted: warp w takes the
// chunks {2(w%2) + h, 2(w%2) + h + 4} of block w/2, lane/16 picks one of the two and
// (lane/4)%4 the word in it; XOR with k%8 in 0..3 (or 4..7) then maps the four k of a warp's
// load to four disjoint chunk pairs: 32 banks, one wavefront. The MMA does not care which
// row is which; the epilogue stores each accumulator row where this says it belongs.
__device__ __forceinline__ int permuted_row(int warp, int lane, int h) {
  return (warp / 2) * kMnBlock + 4 * (2 * (warp % 2) + h + 4 * ((lane % 32) / 16)) + (lane / 4) % 4;
}

// The row of its warpgroup's 64 that this thread's accumulator registers 4j + 2h + {0, 1}
// hold: wgmma's order, or permuted_row's where A came from registers.
template <bool PermutedRows>
__device__ __forceinline__ int accumulator_row(int warp, int lane, int h) {
  if constexpr (PermutedRows) return permuted_row(warp, lane, h);
  return warp * 16 + lane / 4 + 8 * h;
}

}  // namespace gemmlab::cuda::hopper
