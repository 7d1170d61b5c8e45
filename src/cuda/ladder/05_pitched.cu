// Rung 5 (cuda): seed 001's memory padding. A and B are copied with cudaMemcpy2D into
// cudaMallocPitch buffers whose rows start on the driver's pitch alignment, then the padded tiled kernel runs on the copies. For odd sizes this buys
// aligned row starts; the copies cost one extra read and write of A and B, which is
// timed with the kernel because it is the price of the technique.
//
// The pitched buffers are this rung's workspace in the context: allocated by the first call
// for a problem size (the harness's untimed verification run) and reused afterwards.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "cuda/tiles/common.cuh"
#include "cuda/ladder/rungs.hpp"
#include "cuda/tiles/smem_tiled.hpp"
#include "cuda/runtime/buffer.hpp"
#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda {
namespace {

constexpr int kTileWidth = 32;
constexpr int kPadding = 1;

// A pitched copy of one operand, grown when a larger one arrives.
struct PitchedBuffer {
  Owner<DeviceMemoryTraits> memory;
  std::size_t pitch = 0, width_bytes = 0, lines = 0;

  Status reserve(std::size_t want_width_bytes, std::size_t want_lines) {
    if (memory && want_width_bytes <= width_bytes && want_lines <= lines) return Status::ok();
    memory.reset();
    void* p = nullptr;
    CUDA_CHECK(cudaMallocPitch(&p, &pitch, want_width_bytes > 0 ? want_width_bytes : 1,
                               want_lines > 0 ? want_lines : 1));
    memory = Owner<DeviceMemoryTraits>(p);
    width_bytes = want_width_bytes;
    lines = want_lines;
    return Status::ok();
  }
};

// Kept in the context (RunContext::get), which serves one thread at a time.
struct Workspace {
  PitchedBuffer a, b;
};

// Copies a row-major operand of `lines` x `width` (leading dimension ld) into `dst`.
Status copy_pitched(PitchedBuffer& dst, const float* src, long long ld, long long lines, long long width,
                    cudaStream_t stream) {
  const std::size_t width_bytes = static_cast<std::size_t>(width) * sizeof(float);
  GEMMLAB_TRY(dst.reserve(width_bytes, static_cast<std::size_t>(lines)));
  CUDA_CHECK(cudaMemcpy2DAsync(dst.memory.get(), dst.pitch, src, static_cast<std::size_t>(ld) * sizeof(float),
                               width_bytes, static_cast<std::size_t>(lines), cudaMemcpyDeviceToDevice,
                               stream));
  return Status::ok();
}

// cudaMemcpy2D refuses a pitch above the device's maximum (cudaDevAttrMaxPitch): rows of A
// or B further apart than that cannot be copied this way, so the rung says so first.
Status require_copyable_pitch(const GemmProblem& p) {
  int device = 0, max_pitch = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&max_pitch, cudaDevAttrMaxPitch, device) != cudaSuccess || max_pitch <= 0)
    return Status::ok();  // no device to ask: the copy says why, if it must
  const RowMajorGemm rm = canonicalize(p);
  const std::int64_t widest = std::max(rm.lda, rm.ldb) * static_cast<std::int64_t>(sizeof(float));
  if (widest <= max_pitch) return Status::ok();
  return {StatusCode::NotSupported, "pitched: cudaMemcpy2D copies rows at most " + std::to_string(max_pitch) +
                                        " bytes apart; A's or B's are " + std::to_string(widest)};
}

Status run(const GemmProblem& p, RunContext& context) {
  const RowMajorGemm rm = canonicalize(p);
  GemmArgs g = make_args(rm);
  const auto s = static_cast<cudaStream_t>(context.stream());
  Workspace& w = context.get<Workspace>();
  // Stored (canonical, row-major) shapes: op(A) is m x k, so A is m x k or k x m.
  GEMMLAB_TRY(copy_pitched(w.a, g.a, g.lda, rm.trans_a ? g.k : g.m, rm.trans_a ? g.m : g.k, s));
  GEMMLAB_TRY(copy_pitched(w.b, g.b, g.ldb, rm.trans_b ? g.n : g.k, rm.trans_b ? g.k : g.n, s));
  g.a = static_cast<const float*>(w.a.memory.get());
  g.lda = static_cast<long long>(w.a.pitch / sizeof(float));
  g.b = static_cast<const float*>(w.b.memory.get());
  g.ldb = static_cast<long long>(w.b.pitch / sizeof(float));
  return run_smem_tiled<kTileWidth, kPadding>(g, rm.trans_a, rm.trans_b, s);
}

}  // namespace

Variant pitched_variant() {
  Variant v;
  v.rung = 5;
  v.name = "pitched";
  v.backend = Backend::Cuda;
  v.technique = "A and B copied to cudaMallocPitch rows (cudaMemcpy2D), then smem_padded";
  v.config = {{{"TILE_WIDTH", kTileWidth}, {"padding", kPadding}}};
  v.can_implement = [](const GemmProblem& p) {
    GEMMLAB_TRY(require_f32_simt(p, "pitched"));
    return require_copyable_pitch(p);
  };
  v.run = run;
  v.kernel_info = smem_tiled_kernel_info<kTileWidth, kPadding>;  // the copies are cudaMemcpy2D
  v.model = [](const GemmProblem& p) {
    Traffic t = smem_tiled_model(p, kTileWidth, kPadding);
    // The copies read and write A and B once more.
    const double ab_bytes = static_cast<double>(p.m * p.k + p.k * p.n) * sizeof(float);
    t.global_load_bytes += ab_bytes;
    t.min_dram_bytes += 2 * ab_bytes;
    return t;
  };
  return v;
}

}  // namespace gemmlab::cuda
