// What the backend-neutral library needs from the CUDA backend. Defined in src/cuda/
// (or src/cuda/no_cuda.cpp in a build without CUDA), so nothing above includes CUDA headers.
#pragma once

#include <array>
#include <functional>
#include <vector>

#include "gemmlab/out_of_core.hpp"
#include "gemmlab/variant.hpp"

namespace gemmlab::cuda {

const std::vector<Variant>& registry();
bool device_present();
// Makes CUDA device `ordinal` the calling thread's current one (nothing when it already is).
// An ordinal out of range is InvalidValue naming how many devices there are; NotSupported
// without a device or in a build without CUDA.
Status make_current(int ordinal);
// The current device's SM count (1 if unreadable or without CUDA), for wave-aware choices.
int device_sm_count();
// C <- beta * C on the device, on `stream`, without reading A or B (k = 0 or alpha = 0).
Status scale_c(const GemmProblem& problem, Stream stream);
// The out-of-core schedule `plan` (host operands, gemmlab/out_of_core.hpp), its block products
// by `variant` on the context's stream; returns once C is in host memory.
Status run_out_of_core(const GemmProblem& problem, const Variant& variant, const OutOfCorePlan& plan,
                       RunContext& context);
// Bytes of the out-of-core buffers `context` holds from earlier calls (reused by the next).
std::uint64_t out_of_core_buffer_bytes(RunContext& context);
void release_out_of_core_buffers(RunContext& context);
// cublasXtSgemm on host operands over `devices` with blockDim `block_dim` (0: its default),
// blocking until C is in host memory; NotSupported for other types (cublasXt has no bf16).
Status cublasxt_sgemm(const GemmProblem& problem, const std::vector<int>& devices, int block_dim,
                      RunContext& context);
// The blockDim a fresh cublasXt handle has.
Status cublasxt_default_block_dim(RunContext& context, const std::vector<int>& devices, int& out);
// The host link's bandwidth in bytes per second, pinned memory, medians of `reps` copies of
// `bytes`: each direction alone, each while the other runs, and host to device in short rows.
struct HostLinkRates {
  std::size_t bytes = 0;
  double h2d = 0, d2h = 0;
  double h2d_both = 0, d2h_both = 0;
  double h2d_strided = 0;  // alone, in rows of 16 KiB out of rows twice as long
};
Status measure_host_link(std::size_t bytes, int reps, HostLinkRates& out);
// Strided copies each way in rows of OutOfCoreRates::kStridedRowBytes[i] bytes out of host
// rows `pitch_bytes` apart (a row as long as the pitch or longer: one contiguous run), each
// timed while `product` (a block product, synchronous) runs again and again until it is done:
// the out-of-core schedule's conditions, in bytes per second.
Status measure_strided_beside(const std::function<Status()>& product, std::size_t pitch_bytes,
                              OutOfCoreRates::StridedCurve& out);
// Runs `work` while copies go both ways over the host link for about `seconds` (the
// out-of-core schedule's conditions: kernels measured alone run faster than beside them).
Status under_link_traffic(double seconds, const std::function<Status()>& work);
// Whether `pointer` is device memory (cudaPointerGetAttributes).
Status is_device_pointer(const void* pointer, bool& out);

}  // namespace gemmlab::cuda
