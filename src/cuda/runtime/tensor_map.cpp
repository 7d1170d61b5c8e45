#include "cuda/runtime/tensor_map.hpp"

#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <mutex>

namespace gemmlab::cuda {
namespace {

constexpr std::uint64_t kAlignment = 16;        // base and row pitch, bytes
constexpr std::uint64_t kMaxPitch = 1ull << 40;  // globalStrides limit
constexpr std::uint64_t kMaxDim = 1ull << 32;
constexpr std::uint32_t kMaxBox = 256;
constexpr std::uint32_t kSwizzleBytes = 128;

std::uint64_t element_bytes(TmaElement e) { return e == TmaElement::F32 ? 4 : e == TmaElement::Byte ? 1 : 2; }

CUtensorMapDataType data_type(TmaElement e) {
  switch (e) {
    case TmaElement::BF16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case TmaElement::F16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case TmaElement::Byte: return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    case TmaElement::F32: break;
  }
  return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
}

// The driver's encoder, looked up once.
Status encoder(PFN_cuTensorMapEncodeTiled_v12000& out) {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
  static cudaError_t lookup = cudaSuccess;
  static std::once_flag once;
  std::call_once(once, [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    lookup = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found);
    if (lookup == cudaSuccess && found == cudaDriverEntryPointSuccess) fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  });
  if (!fn)
    return {StatusCode::NotSupported, fmt::format("cuTensorMapEncodeTiled is not available from the driver ({})",
                                                  cudaGetErrorString(lookup))};
  out = fn;
  return Status::ok();
}

}  // namespace

Status tma_requirements(const TmaMatrix& m, const char* operand) {
  const std::uint64_t bytes = element_bytes(m.element);
  if (reinterpret_cast<std::uintptr_t>(m.base) % kAlignment != 0)
    return {StatusCode::NotSupported, fmt::format("{}: base address is not {}-byte aligned (TMA)", operand, kAlignment)};
  if ((m.ld * bytes) % kAlignment != 0 || m.ld * bytes >= kMaxPitch)
    return {StatusCode::NotSupported,
            fmt::format("{}: row pitch of {} bytes (ld {}) is not a multiple of {} bytes below 2^40 (TMA)", operand,
                        m.ld * bytes, m.ld, kAlignment)};
  if (m.rows == 0 || m.cols == 0 || m.rows >= kMaxDim || m.cols >= kMaxDim)
    return {StatusCode::NotSupported, fmt::format("{}: {} x {} is outside TMA's [1, 2^32) per side", operand, m.rows, m.cols)};
  if (m.box_rows == 0 || m.box_rows > kMaxBox || m.box_cols * bytes != kSwizzleBytes)
    return {StatusCode::InvalidValue,
            fmt::format("{}: box {} x {} does not fit the 128-byte swizzle", operand, m.box_rows, m.box_cols)};
  return Status::ok();
}

Status encode_tensor_map(const TmaMatrix& m, const char* operand, CUtensorMap& out) {
  GEMMLAB_TRY(tma_requirements(m, operand));
  PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
  GEMMLAB_TRY(encoder(encode));
  const cuuint64_t dims[2] = {m.cols, m.rows};
  const cuuint64_t pitch[1] = {m.ld * element_bytes(m.element)};
  const cuuint32_t box[2] = {m.box_cols, m.box_rows};
  const cuuint32_t unit_strides[2] = {1, 1};
  const CUresult r = encode(&out, data_type(m.element), 2, const_cast<void*>(m.base), dims, pitch, box, unit_strides,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return {StatusCode::InternalError, fmt::format("{}: cuTensorMapEncodeTiled failed with CUresult {}", operand, static_cast<int>(r))};
  return Status::ok();
}

}  // namespace gemmlab::cuda
