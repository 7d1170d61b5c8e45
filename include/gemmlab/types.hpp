// Element types, layouts, operations and backends: the vocabulary of a GEMM problem.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gemmlab {

// Storage order of a matrix: row-major (the seeds' convention) or column-major (BLAS's).
enum class Layout : std::uint8_t { RowMajor, ColMajor };

// op(X) in C <- alpha * op(A) * op(B) + beta * C.
enum class Op : std::uint8_t { N, T };

// Element and compute types. TF32 is stored as float32 and rounded by the tensor cores.
// E4M3 and E5M2 are the 1-byte OCP FP8 formats (E4M3 the "fn" variant: no infinities, max
// 448; E5M2 IEEE-like, max 57344), read through a per-tensor scale (GemmProblem::scale_a).
enum class DType : std::uint8_t { F32, TF32, BF16, F16, F64, E4M3, E5M2 };

enum class Backend : std::uint8_t { Cpu, Cuda };

std::string_view to_string(Layout layout);
std::string_view to_string(Op op);
std::string_view to_string(DType type);
std::string_view to_string(Backend backend);

std::optional<Layout> parse_layout(std::string_view text);   // "row" | "col"
std::optional<Op> parse_op(char letter);                     // 'N' | 'T'
// "f32" | "tf32" | "bf16" | "f16" | "f64" | "e4m3" | "e5m2"
std::optional<DType> parse_dtype(std::string_view text);
std::optional<Backend> parse_backend(std::string_view text); // "cpu" | "cuda"

// Bytes of one stored element.
std::size_t storage_bytes(DType type);

// Unit roundoff u of arithmetic in this type (half an ulp of 1): 2^-24 for f32,
// 2^-11 for tf32 (10 stored mantissa bits), 2^-8 for bf16, 2^-11 for f16, 2^-53 for f64,
// 2^-4 for e4m3 (3 stored mantissa bits), 2^-3 for e5m2 (2).
double unit_roundoff(DType type);

// The 1-byte FP8 types (e4m3, e5m2).
inline constexpr bool is_fp8(DType type) { return type == DType::E4M3 || type == DType::E5M2; }

// What `--dtype NAME` asks for: how A and B are stored and the arithmetic that multiplies
// them; `--out-dtype` says how C is stored (float32 by default):
//   f32         float32 storage and arithmetic (the SIMT ladder, cuBLAS SGEMM)
//   tf32        float32 storage; the tensor cores reduce each operand to tf32, sums in float32
//   bf16, f16   2-byte storage; the tensor cores multiply exactly and sum in float32; C in
//               float32 or, as frameworks keep it, in the input type (the sums rounded once,
//               when stored)
//   e4m3, e5m2  1-byte storage with a per-tensor scale; the tensor cores multiply exactly and
//               sum in float32 (promoted from their narrower adder: tolerance.hpp); C in
//               float32, bf16 or f16 (no FP8 C)
// A variant declares the same three types (Variant::input, compute, output); a run selects
// the variants whose three match.
struct Precision {
  DType input = DType::F32;
  DType compute = DType::F32;
  DType output = DType::F32;
  bool operator==(const Precision&) const = default;
};

// The precision of `--dtype name --out-dtype output`; nullopt for f64 (no rung computes in
// it) and for an output output_allowed() refuses.
std::optional<Precision> precision_for(DType name, DType output = DType::F32);
// The `--dtype` name of a precision (its output aside: output_allowed says which); nullopt
// when no name stands for it.
std::optional<DType> dtype_name(const Precision& precision);
// The names `--dtype` takes, in the order help texts list them.
inline constexpr DType kDTypeNames[] = {DType::F32, DType::TF32, DType::BF16, DType::F16, DType::E4M3, DType::E5M2};
// Those names for a message: "f32, tf32, bf16, f16, e4m3 or e5m2".
std::string dtype_names_text();
// Whether `--out-dtype output` goes with `--dtype name`: f32 always, bf16 and f16 with
// themselves and with either FP8 type (never an FP8 C: kFp8OutputRefusal).
bool output_allowed(DType name, DType output);
// Why C is never stored in an FP8 type, in the words every refusal of one uses.
inline constexpr std::string_view kFp8OutputRefusal = "C in e4m3/e5m2 is not supported: store C as f32, bf16 or f16";
// The types `--out-dtype` takes, in the order help texts list them.
inline constexpr DType kOutDTypeNames[] = {DType::F32, DType::BF16, DType::F16};

}  // namespace gemmlab
