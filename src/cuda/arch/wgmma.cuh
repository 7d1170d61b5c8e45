// Warpgroup-level matrix multiply-accumulate (sm_90a), one wrapper per instruction.
// PTX ISA 8.x, section 9.7.15 "Asynchronous Warpgroup Level Matrix Multiply-Accumulate
// Instructions": wgmma.fence, wgmma.mma_async, wgmma.commit_group, wgmma.wait_group, the
// shared-memory matrix descriptor (9.7.15.5.1.2.2) and setmaxnreg (9.7.17.1).
// sm_90a code: only kernel bodies compiled under GEMMLAB_CODE_SM90A (target.cuh) use these,
// so no other architecture's pass ever emits them.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/arch/cp_async.cuh"

// The 128 f32 accumulators of an m64n256 wgmma: the register list in the instruction text
// and the matching read-write operands (d is a float[128]).
#define GEMMLAB_WGMMA_ACC128_TEXT \
  "{" \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127" \
  "}"
#define GEMMLAB_WGMMA_ACC128_OPERANDS(d) \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
  "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
  "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
  "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
  "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
  "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
  "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
  "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
  "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
  "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

// The same for the 64 accumulators of an m64n128 wgmma.
#define GEMMLAB_WGMMA_ACC64_TEXT \
  "{" \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63" \
  "}"
#define GEMMLAB_WGMMA_ACC64_OPERANDS(d) \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
  "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])

// The same for the 32 accumulators of an m64n64 wgmma.
#define GEMMLAB_WGMMA_ACC32_TEXT \
  "{" \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31" \
  "}"
#define GEMMLAB_WGMMA_ACC32_OPERANDS(d) \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])

namespace gemmlab::cuda::arch {

// Shared-memory matrix descriptor for a tile stored with the 128-byte swizzle the tensor
// memory accelerator writes (CU_TENSOR_MAP_SWIZZLE_128B): start address, leading and
// stride byte offsets (each encoded >> 4 in 14 bits), swizzle mode 1 (128B) in bits 62-63.
// K-major operand: rows of 128 bytes, 8-row groups `stride_bytes` apart, leading offset
// unused. MN-major operand: 8-row (k) groups `stride_bytes` apart, 64-element (MN) chunks
// `leading_bytes` apart. Atoms (8 rows x 128 bytes) must start 1024-byte aligned.
__device__ __forceinline__ std::uint64_t smem_descriptor_sw128(const void* tile, std::uint32_t leading_bytes,
                                                               std::uint32_t stride_bytes) {
  const std::uint64_t address = smem_address(tile);
  return ((address & 0x3FFFFu) >> 4) | (static_cast<std::uint64_t>((leading_bytes >> 4) & 0x3FFFu) << 16) |
         (static_cast<std::uint64_t>((stride_bytes >> 4) & 0x3FFFu) << 32) | (std::uint64_t{1} << 62);
}

// wgmma.fence.sync.aligned: orders this warpgroup's register accesses (the accumulators)
// before the wgmma.mma_async that follow.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

// wgmma.commit_group.sync.aligned: closes the group of wgmma.mma_async issued so far.
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }

// wgmma.wait_group.sync.aligned N: waits until at most N committed groups are pending.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// Keeps the compiler from moving accumulator reads or writes across the asynchronous MMAs
// (the registers are the tensor cores' while a group is in flight).
__device__ __forceinline__ void fence_accumulator(float& r) { asm volatile("" : "+f"(r)::"memory"); }

// setmaxnreg.{inc,dec}.sync.aligned.u32 N: moves registers between the warpgroups of a
// block (a producer that only issues copies gives its registers to the consumers).
template <int N>
__device__ __forceinline__ void setmaxnreg_increase() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void setmaxnreg_decrease() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

// wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16: d (64 x 256, f32, 128 registers per
// thread) += A (64 x 16, shared memory) * B (16 x 256, shared memory); scale_d = 0 overwrites d.
// MnMajorA / MnMajorB = 1: the operand is MN-major in shared memory (imm-trans-a/-b = 1);
// 0: K-major.
template <int MnMajorA, int MnMajorB>
__device__ __forceinline__ void wgmma_m64n256k16_bf16(float (&d)[128], std::uint64_t desc_a, std::uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
      GEMMLAB_WGMMA_ACC128_TEXT ", %128, %129, p, 1, 1, %131, %132;\n}\n"
      : GEMMLAB_WGMMA_ACC128_OPERANDS(d)
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(MnMajorA), "n"(MnMajorB));
}

// The same with f16 A and B (m64n256k16.f32.f16.f16).
template <int MnMajorA, int MnMajorB>
__device__ __forceinline__ void wgmma_m64n256k16_f16(float (&d)[128], std::uint64_t desc_a, std::uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 "
      GEMMLAB_WGMMA_ACC128_TEXT ", %128, %129, p, 1, 1, %131, %132;\n}\n"
      : GEMMLAB_WGMMA_ACC128_OPERANDS(d)
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(MnMajorA), "n"(MnMajorB));
}

// wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32: d (64 x 256, f32, 128 registers per
// thread) += A (64 x 8, shared memory) * B (8 x 256, shared memory); scale_d = 0 overwrites d.
// Both operands K-major (tf32 has no transposed form).
__device__ __forceinline__ void wgmma_m64n256k8_tf32(float (&d)[128], std::uint64_t desc_a, std::uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 "
      GEMMLAB_WGMMA_ACC128_TEXT ", %128, %129, p, 1, 1;\n}\n"
      : GEMMLAB_WGMMA_ACC128_OPERANDS(d)
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// The same with A from registers: a[0..3] are this thread's elements of the 64 x 8 A,
// rows 16 * (warp in the warpgroup) + lane / 4 (a[0], a[2]) and 8 rows further (a[1], a[3]),
// columns lane % 4 (a[0], a[1]) and lane % 4 + 4 (a[2], a[3]), as in mma.m16n8k8. The
// registers belong to the tensor cores until the group is waited for, like d.
__device__ __forceinline__ void wgmma_m64n256k8_tf32_rs(float (&d)[128], const std::uint32_t (&a)[4],
                                                        std::uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 "
      GEMMLAB_WGMMA_ACC128_TEXT ", {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
      : GEMMLAB_WGMMA_ACC128_OPERANDS(d)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}

// Keeps the compiler from giving an A fragment's registers to other values while a wgmma
// that reads them may still be in flight: a use (and redefinition) after the wait.
__device__ __forceinline__ void fence_fragment(std::uint32_t& r) { asm volatile("" : "+r"(r)::"memory"); }

// wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32: d (64 x 128, f32, 64 registers per
// thread) += A (64 x 8) * B (8 x 128), both K-major in shared memory.
__device__ __forceinline__ void wgmma_m64n128k8_tf32(float (&d)[64], std::uint64_t desc_a, std::uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
      GEMMLAB_WGMMA_ACC64_TEXT ", %64, %65, p, 1, 1;\n}\n"
      : GEMMLAB_WGMMA_ACC64_OPERANDS(d)
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32: d (64 x 64, f32, 32 registers per
// thread) += A (64 x 8) * B (8 x 64), both K-major in shared memory.
__device__ __forceinline__ void wgmma_m64n64k8_tf32(float (&d)[32], std::uint64_t desc_a, std::uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 "
      GEMMLAB_WGMMA_ACC32_TEXT ", %32, %33, p, 1, 1;\n}\n"
      : GEMMLAB_WGMMA_ACC32_OPERANDS(d)
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// FP8 operands: wgmma's e4m3 and e5m2 input formats (PTX .e4m3, .e5m2).
enum class Fp8 { E4M3, E5M2 };

// wgmma.mma_async.sync.aligned.m64n256k32.f32.{e4m3,e5m2}: d (64 x 256, f32, 128 registers
// per thread) += A (64 x 32) * B (32 x 256), both K-major in shared memory (8-bit types have
// no transposed form); scale_d = 0 overwrites d.
template <Fp8 Format>
__device__ __forceinline__ void wgmma_m64n256k32_fp8(float (&d)[128], std::uint64_t desc_a, std::uint64_t desc_b, int scale_d) {
  if constexpr (Format == Fp8::E4M3)
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 "
        GEMMLAB_WGMMA_ACC128_TEXT ", %128, %129, p, 1, 1;\n}\n"
        : GEMMLAB_WGMMA_ACC128_OPERANDS(d)
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
  else
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k32.f32.e5m2.e5m2 "
        GEMMLAB_WGMMA_ACC128_TEXT ", %128, %129, p, 1, 1;\n}\n"
        : GEMMLAB_WGMMA_ACC128_OPERANDS(d)
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// The same as m64n128k32: d is 64 x 128 (64 registers per thread).
template <Fp8 Format>
__device__ __forceinline__ void wgmma_m64n128k32_fp8(float (&d)[64], std::uint64_t desc_a, std::uint64_t desc_b, int scale_d) {
  if constexpr (Format == Fp8::E4M3)
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "
        GEMMLAB_WGMMA_ACC64_TEXT ", %64, %65, p, 1, 1;\n}\n"
        : GEMMLAB_WGMMA_ACC64_OPERANDS(d)
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
  else
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e5m2 "
        GEMMLAB_WGMMA_ACC64_TEXT ", %64, %65, p, 1, 1;\n}\n"
        : GEMMLAB_WGMMA_ACC64_OPERANDS(d)
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

}  // namespace gemmlab::cuda::arch

#undef GEMMLAB_WGMMA_ACC128_TEXT
#undef GEMMLAB_WGMMA_ACC128_OPERANDS
#undef GEMMLAB_WGMMA_ACC64_TEXT
#undef GEMMLAB_WGMMA_ACC64_OPERANDS
#undef GEMMLAB_WGMMA_ACC32_TEXT
#undef GEMMLAB_WGMMA_ACC32_OPERANDS
