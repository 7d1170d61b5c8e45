// Argument checks with cuBLAS's semantics; every message names the argument at fault.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>

#include "gemmlab/problem.hpp"

namespace gemmlab {
namespace {

Status check_matrix(const Matrix& x, char name, std::int64_t rows, std::int64_t cols,
                    DType expected_type) {
  if (x.rows != rows || x.cols != cols)
    return {StatusCode::InvalidValue,
            fmt::format("{} is {}x{} but the problem needs it {}x{}", name, x.rows, x.cols, rows,
                        cols)};
  if (x.dtype != expected_type)
    return {StatusCode::InvalidValue, fmt::format("{} holds {} but the problem expects {}", name,
                                                  to_string(x.dtype), to_string(expected_type))};
  const std::int64_t extent = x.contiguous_extent();
  const std::int64_t min_ld = extent > 1 ? extent : 1;  // cuBLAS: ld >= max(1, extent)
  if (x.ld < min_ld)
    return {StatusCode::InvalidValue,
            fmt::format("ld{} ({}) must be >= {} ({} of a {} {}x{} matrix)",
                        static_cast<char>(name - 'A' + 'a'), x.ld, min_ld,
                        x.layout == Layout::RowMajor ? "columns" : "rows",
                        x.layout == Layout::RowMajor ? "row-major" : "column-major", rows, cols)};
  if (x.empty()) return Status::ok();
  if (x.data == nullptr)
    return {StatusCode::InvalidValue,
            fmt::format("{} is {}x{} but its data pointer is null", name, rows, cols)};
  // The last element's offset and the byte span must fit in 64-bit arithmetic.
  std::int64_t last_line_offset = 0, span = 0, span_bytes = 0;
  if (__builtin_mul_overflow(x.lines() - 1, x.ld, &last_line_offset) ||
      __builtin_add_overflow(last_line_offset, extent, &span) ||
      __builtin_mul_overflow(span, static_cast<std::int64_t>(storage_bytes(x.dtype)), &span_bytes))
    return {StatusCode::InvalidValue,
            fmt::format("{}: {} lines of leading dimension {} overflow 64-bit offsets", name,
                        x.lines(), x.ld)};
  return Status::ok();
}

}  // namespace

Status validate(const GemmProblem& p) {
  if (p.m < 0) return {StatusCode::InvalidValue, fmt::format("m ({}) must be >= 0", p.m)};
  if (p.n < 0) return {StatusCode::InvalidValue, fmt::format("n ({}) must be >= 0", p.n)};
  if (p.k < 0) return {StatusCode::InvalidValue, fmt::format("k ({}) must be >= 0", p.k)};
  const bool a_trans = p.op_a == Op::T, b_trans = p.op_b == Op::T;
  // A and B are only read when the product contributes (cuBLAS: k = 0 or alpha = 0 skips them).
  GEMMLAB_TRY(check_matrix(p.c, 'C', p.m, p.n, p.c.dtype));
  GEMMLAB_TRY(check_matrix(p.a, 'A', a_trans ? p.k : p.m, a_trans ? p.m : p.k, p.a.dtype));
  GEMMLAB_TRY(check_matrix(p.b, 'B', b_trans ? p.n : p.k, b_trans ? p.k : p.n, p.b.dtype));
  if (p.a.dtype != p.b.dtype)
    return {StatusCode::InvalidValue, fmt::format("A holds {} but B holds {}", to_string(p.a.dtype),
                                                  to_string(p.b.dtype))};
  if (is_fp8(p.c.dtype)) return {StatusCode::InvalidValue, std::string(kFp8OutputRefusal)};
  for (const auto& [name, scale, operand] :
       {std::tuple{"scale_a", p.scale_a, &p.a}, std::tuple{"scale_b", p.scale_b, &p.b}}) {
    if (!std::isfinite(scale))
      return {StatusCode::InvalidValue, fmt::format("{} ({}) must be finite", name, scale)};
    // Only an FP8 operand is stored in units of a scale; elsewhere a scale is a misplaced alpha.
    if (scale != 1.0 && !is_fp8(operand->dtype))
      return {StatusCode::InvalidValue,
              fmt::format("{} = {}: a scale applies to e4m3 and e5m2 operands only, not to {} (fold it into alpha)",
                          name, scale, to_string(operand->dtype))};
  }
  return Status::ok();
}

}  // namespace gemmlab
