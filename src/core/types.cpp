#include "gemmlab/types.hpp"

#include <iterator>
#include <string>

#include "gemmlab/status.hpp"

namespace gemmlab {

std::string_view to_string(Layout layout) { return layout == Layout::RowMajor ? "row" : "col"; }
std::string_view to_string(Op op) { return op == Op::N ? "N" : "T"; }
std::string_view to_string(Backend backend) { return backend == Backend::Cpu ? "cpu" : "cuda"; }

std::string_view to_string(DType type) {
  switch (type) {
    case DType::F32: return "f32";
    case DType::TF32: return "tf32";
    case DType::BF16: return "bf16";
    case DType::F16: return "f16";
    case DType::F64: return "f64";
    case DType::E4M3: return "e4m3";
    case DType::E5M2: return "e5m2";
  }
  return "?";
}

std::optional<Layout> parse_layout(std::string_view text) {
  if (text == "row") return Layout::RowMajor;
  if (text == "col") return Layout::ColMajor;
  return std::nullopt;
}

std::optional<Op> parse_op(char letter) {
  if (letter == 'N' || letter == 'n') return Op::N;
  if (letter == 'T' || letter == 't') return Op::T;
  return std::nullopt;
}

std::optional<DType> parse_dtype(std::string_view text) {
  for (DType t : {DType::F32, DType::TF32, DType::BF16, DType::F16, DType::F64, DType::E4M3, DType::E5M2})
    if (text == to_string(t)) return t;
  return std::nullopt;
}

std::optional<Backend> parse_backend(std::string_view text) {
  if (text == "cpu") return Backend::Cpu;
  if (text == "cuda") return Backend::Cuda;
  return std::nullopt;
}

std::size_t storage_bytes(DType type) {
  switch (type) {
    case DType::F32:
    case DType::TF32: return 4;
    case DType::BF16:
    case DType::F16: return 2;
    case DType::F64: return 8;
    case DType::E4M3:
    case DType::E5M2: return 1;
  }
  return 0;
}

double unit_roundoff(DType type) {
  switch (type) {
    case DType::F32: return 0x1p-24;
    case DType::TF32: return 0x1p-11;
    case DType::BF16: return 0x1p-8;
    case DType::F16: return 0x1p-11;
    case DType::F64: return 0x1p-53;
    case DType::E4M3: return 0x1p-4;
    case DType::E5M2: return 0x1p-3;
  }
  return 1.0;
}

bool output_allowed(DType name, DType output) {
  if (output == DType::F32) return true;
  if (output != DType::BF16 && output != DType::F16) return false;
  return output == name || is_fp8(name);
}

std::optional<Precision> precision_for(DType name, DType output) {
  if (!output_allowed(name, output)) return std::nullopt;
  switch (name) {
    case DType::F32: return Precision{DType::F32, DType::F32, output};
    case DType::TF32: return Precision{DType::F32, DType::TF32, output};
    case DType::BF16: return Precision{DType::BF16, DType::F32, output};
    case DType::F16: return Precision{DType::F16, DType::F32, output};
    case DType::E4M3: return Precision{DType::E4M3, DType::F32, output};
    case DType::E5M2: return Precision{DType::E5M2, DType::F32, output};
    case DType::F64: return std::nullopt;
  }
  return std::nullopt;
}

std::string dtype_names_text() {
  std::string text;
  for (std::size_t i = 0; i < std::size(kDTypeNames); ++i) {
    if (i > 0) text += i + 1 == std::size(kDTypeNames) ? " or " : ", ";
    text += to_string(kDTypeNames[i]);
  }
  return text;
}

std::optional<DType> dtype_name(const Precision& precision) {
  for (DType name : kDTypeNames)
    if (precision_for(name, precision.output) == precision) return name;
  return std::nullopt;
}

}  // namespace gemmlab
