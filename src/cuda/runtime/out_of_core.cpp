// The out-of-core schedule on one device (gemmlab/out_of_core.hpp): C in second-level tiles,
// K in blocks, three streams. The host->device stream uploads the blocks of A and B (and C's
// tile where beta != 0) into one of two buffers each; the context's stream computes each block
// product with the in-core rung; the device->host stream downloads each finished tile of C.
// Events order the buffers' reuse: a block is overwritten only after the product that read it,
// a tile of C only after its download. With K in one block, A's block stays on the device for
// its whole row of tiles (or B's for its column, when the plan says so). Everything is enqueued up front; the call ends with all three
// streams synchronised, on error too, so no copy outlives the buffers.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>

#include "core/out_of_core_plan.hpp"
#include "cuda/backend.hpp"
#include "cuda/runtime/buffer.hpp"
#include "cuda/runtime/check.hpp"

namespace gemmlab::cuda {
namespace {

// What a context keeps for its out-of-core calls: the copy streams, the events that order the
// buffers, and the buffers themselves (grown, never shrunk, freed with the context).
struct OutOfCoreResources {
  StreamOwner h2d, d2h;
  EventOwner start;
  std::array<EventOwner, kOutOfCoreBuffers> a_ready, b_ready, a_free, b_free, c_ready, c_done, c_free;
  std::array<EventOwner, kOutOfCoreRamp> piece_up, piece_done;  // the ramp's pieces
  DeviceMemory buffer;
};

Status make_sync_event(EventOwner& out) {
  cudaEvent_t e = nullptr;
  CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  out = EventOwner(e);
  return Status::ok();
}

Status set_up(OutOfCoreResources& r, std::uint64_t bytes) {
  if (!r.h2d) {
    GEMMLAB_TRY(make_stream(r.h2d));
    GEMMLAB_TRY(make_stream(r.d2h));
    GEMMLAB_TRY(make_sync_event(r.start));
    for (auto* events : {&r.a_ready, &r.b_ready, &r.a_free, &r.b_free, &r.c_ready, &r.c_done, &r.c_free})
      for (EventOwner& e : *events) GEMMLAB_TRY(make_sync_event(e));
    for (auto* events : {&r.piece_up, &r.piece_done})
      for (EventOwner& e : *events) GEMMLAB_TRY(make_sync_event(e));
  }
  if (r.buffer.bytes() < bytes) {
    r.buffer = DeviceMemory();  // the old one first: both at once may not fit
    GEMMLAB_TRY(DeviceMemory::allocate(bytes, r.buffer));
  }
  return Status::ok();
}

// A rows x cols block of a row-major host matrix (leading dimension ld) starting at (row, col),
// to or from a device block of leading dimension device_ld(cols).
struct Block {
  const std::byte* host;  // the matrix
  std::int64_t ld;
  std::size_t element;
  std::int64_t row, col, rows, cols;
  std::byte* at() const { return const_cast<std::byte*>(host) + (row * ld + col) * static_cast<std::int64_t>(element); }
};

// The blocks of op(A) (rows i0.., columns k0..) and op(B) (rows k0.., columns j0..) as the
// host stores them.
Block a_block(const RowMajorGemm& g, std::size_t element, std::int64_t i0, std::int64_t tm, std::int64_t k0,
              std::int64_t tk) {
  const auto* a = static_cast<const std::byte*>(g.a);
  return g.trans_a ? Block{a, g.lda, element, k0, i0, tk, tm} : Block{a, g.lda, element, i0, k0, tm, tk};
}
Block b_block(const RowMajorGemm& g, std::size_t element, std::int64_t j0, std::int64_t tn, std::int64_t k0,
              std::int64_t tk) {
  const auto* b = static_cast<const std::byte*>(g.b);
  return g.trans_b ? Block{b, g.ldb, element, j0, k0, tn, tk} : Block{b, g.ldb, element, k0, j0, tk, tn};
}

// Part of a block (rows row0.., columns col0.. within it) between the host and the block's
// device buffer (leading dimension device_ld of the whole block's width).
struct BlockPart {
  std::int64_t row0 = 0, col0 = 0, rows = -1, cols = -1;  // -1: the whole block
};

// One part of a block, host side and device side, as cudaMemcpy2DAsync takes them.
struct PartCopy {
  std::byte* host;
  std::byte* device;
  std::size_t host_pitch, device_pitch, width;
  std::int64_t rows;
};
PartCopy part_copy(const Block& b, const void* device, BlockPart part) {
  const std::int64_t rows = part.rows < 0 ? b.rows : part.rows, cols = part.cols < 0 ? b.cols : part.cols;
  const std::int64_t ld = device_ld(b.cols), e = static_cast<std::int64_t>(b.element);
  return {b.at() + (part.row0 * b.ld + part.col0) * e,
          static_cast<std::byte*>(const_cast<void*>(device)) + (part.row0 * ld + part.col0) * e,
          static_cast<std::size_t>(b.ld * e), static_cast<std::size_t>(ld * e), static_cast<std::size_t>(cols * e),
          rows};
}

Status upload(const Block& b, void* device, cudaStream_t stream, BlockPart part = {}) {
  const PartCopy c = part_copy(b, device, part);
  CUDA_CHECK(cudaMemcpy2DAsync(c.device, c.device_pitch, c.host, c.host_pitch, c.width, c.rows,
                               cudaMemcpyHostToDevice, stream));
  return Status::ok();
}

Status download(const Block& b, const void* device, cudaStream_t stream, BlockPart part = {}) {
  const PartCopy c = part_copy(b, device, part);
  CUDA_CHECK(cudaMemcpy2DAsync(c.host, c.host_pitch, c.device, c.device_pitch, c.width, c.rows,
                               cudaMemcpyDeviceToHost, stream));
  return Status::ok();
}

// Rows i0.. and columns j0.. of `x` (rows x cols of them).
Matrix part_of(Matrix x, std::int64_t i0, std::int64_t j0, std::int64_t rows, std::int64_t cols) {
  x.data = static_cast<std::byte*>(x.data) + x.offset(i0, j0) * static_cast<std::int64_t>(storage_bytes(x.dtype));
  x.rows = rows;
  x.cols = cols;
  return x;
}

// The K range k0.. (kq of it) of a block product: the ramp's first pieces.
GemmProblem k_piece(GemmProblem p, std::int64_t k0, std::int64_t kq, double beta) {
  p.a = p.op_a == Op::N ? part_of(p.a, 0, k0, p.a.rows, kq) : part_of(p.a, k0, 0, kq, p.a.cols);
  p.b = p.op_b == Op::N ? part_of(p.b, k0, 0, kq, p.b.cols) : part_of(p.b, 0, k0, p.b.rows, kq);
  p.k = kq;
  p.beta = beta;
  return p;
}

// Rows r0.. (rq of them) of a block product's C: the ramp's last pieces.
GemmProblem row_piece(GemmProblem p, std::int64_t r0, std::int64_t rq) {
  p.a = p.op_a == Op::N ? part_of(p.a, r0, 0, rq, p.a.cols) : part_of(p.a, 0, r0, p.a.rows, rq);
  p.c = part_of(p.c, r0, 0, rq, p.c.cols);
  p.m = rq;
  return p;
}

Status enqueue(const GemmProblem& problem, const Variant& variant, const OutOfCorePlan& plan, RunContext& context,
               OutOfCoreResources& r) {
  const RowMajorGemm g = canonicalize(problem);
  const DType in_type = problem.a.dtype, out_type = problem.c.dtype;
  const std::size_t in = storage_bytes(in_type), out = storage_bytes(out_type);
  const OutOfCoreShape shape{g.m, g.n, g.k, g.trans_a, g.trans_b, in, out, g.beta != 0.0};
  const TileElements e = tile_elements(shape, plan.tile_m, plan.tile_n, plan.tile_k);
  // Two buffers each of A's block, B's block and C's tile, laid out as tile_buffer_bytes() counts.
  std::array<std::byte*, kOutOfCoreBuffers> a_buf{}, b_buf{}, c_buf{};
  std::byte* next = static_cast<std::byte*>(r.buffer.data());
  for (int i = 0; i < kOutOfCoreBuffers; ++i) {
    a_buf[i] = next;
    next += e.a * in;
    b_buf[i] = next;
    next += e.b * in;
    c_buf[i] = next;
    next += e.c * out;
  }
  const auto compute = static_cast<cudaStream_t>(context.stream());
  // Whatever the caller enqueued on its stream before this call comes first.
  CUDA_CHECK(cudaEventRecord(r.start.get(), compute));
  CUDA_CHECK(cudaStreamWaitEvent(r.h2d.get(), r.start.get()));
  CUDA_CHECK(cudaStreamWaitEvent(r.d2h.get(), r.start.get()));

  const auto* c_host = static_cast<const std::byte*>(g.c);
  // Rows of tiles outer (A's block reused along the row) unless B is the resident operand.
  const std::int64_t outer_count = plan.b_resident ? plan.tiles_n : plan.tiles_m;
  const std::int64_t inner_count = plan.b_resident ? plan.tiles_m : plan.tiles_n;
  const std::int64_t tiles = outer_count * inner_count;
  std::int64_t step = 0, tile = 0;
  bool drained = false;  // the last tile came down in the ramp's pieces
  for (std::int64_t outer = 0; outer < outer_count; ++outer)
    for (std::int64_t inner = 0; inner < inner_count; ++inner, ++tile) {
      const std::int64_t ti = plan.b_resident ? inner : outer, tj = plan.b_resident ? outer : inner;
      const std::int64_t i0 = ti * plan.tile_m, tm = std::min(plan.tile_m, g.m - i0);
      const std::int64_t j0 = tj * plan.tile_n, tn = std::min(plan.tile_n, g.n - j0);
      const int cs = static_cast<int>(tile % kOutOfCoreBuffers);
      const Block c_block{c_host, g.ldc, out, i0, j0, tm, tn};
      // The tile's buffer is free once the tile two before it has come down.
      if (shape.reads_c) {
        CUDA_CHECK(cudaStreamWaitEvent(r.h2d.get(), r.c_free[cs].get()));
        GEMMLAB_TRY(upload(c_block, c_buf[cs], r.h2d.get()));
        CUDA_CHECK(cudaEventRecord(r.c_ready[cs].get(), r.h2d.get()));
        CUDA_CHECK(cudaStreamWaitEvent(compute, r.c_ready[cs].get()));
      } else {
        CUDA_CHECK(cudaStreamWaitEvent(compute, r.c_free[cs].get()));
      }
      for (std::int64_t kb = 0; kb < plan.blocks_k; ++kb, ++step) {
        const std::int64_t k0 = kb * plan.tile_k, tk = std::min(plan.tile_k, g.k - k0);
        // A resident operand's block goes up once per outer index, into the buffer the block
        // before last used; a streamed one's once per step.
        const auto slot = [&](bool resident) {
          return static_cast<int>((resident ? outer : step) % kOutOfCoreBuffers);
        };
        const int as = slot(plan.a_resident), bs = slot(plan.b_resident);
        const bool up_a = !plan.a_resident || inner == 0, up_b = !plan.b_resident || inner == 0;
        const Block a = a_block(g, in, i0, tm, k0, tk), b = b_block(g, in, j0, tn, k0, tk);
        // The first block of K applies the caller's beta (0: C's tile is not read); the later
        // ones add to the tile.
        const GemmProblem block = block_problem(shape, in_type, out_type, problem.compute, tm, tn, tk, a_buf[as],
                                                b_buf[bs], c_buf[cs], g.alpha, kb == 0 ? g.beta : 1.0);
        if (up_a) CUDA_CHECK(cudaStreamWaitEvent(r.h2d.get(), r.a_free[as].get()));
        if (up_b) CUDA_CHECK(cudaStreamWaitEvent(r.h2d.get(), r.b_free[bs].get()));
        const auto run = [&](const GemmProblem& piece) -> Status {
          if (variant.prepare) GEMMLAB_TRY(variant.prepare(piece, context));
          return variant.run(piece, context);
        };
        if (step == 0) {
          // The ramp up: the blocks whose K is their slow dimension go up in pieces of K, the
          // others whole before them; each piece of the product runs once its part is there.
          const bool cut_a = ramp_cuts_a(shape), cut_b = ramp_cuts_b(shape);
          const std::int64_t piece = cut_a || cut_b ? ramp_piece(tk) : tk;
          if (!cut_a) GEMMLAB_TRY(upload(a, a_buf[as], r.h2d.get()));
          if (!cut_b) GEMMLAB_TRY(upload(b, b_buf[bs], r.h2d.get()));
          for (std::int64_t k_off = 0, q = 0; k_off < tk; k_off += piece, ++q) {
            const std::int64_t kq = std::min(piece, tk - k_off);
            if (cut_a) GEMMLAB_TRY(upload(a, a_buf[as], r.h2d.get(), BlockPart{k_off, 0, kq, tm}));
            if (cut_b) GEMMLAB_TRY(upload(b, b_buf[bs], r.h2d.get(), BlockPart{k_off, 0, kq, tn}));
            CUDA_CHECK(cudaEventRecord(r.piece_up[q].get(), r.h2d.get()));
            CUDA_CHECK(cudaStreamWaitEvent(compute, r.piece_up[q].get()));
            GEMMLAB_TRY(run(k_piece(block, k_off, kq, k_off == 0 ? block.beta : 1.0)));
          }
          CUDA_CHECK(cudaEventRecord(r.a_ready[as].get(), r.h2d.get()));
          CUDA_CHECK(cudaEventRecord(r.b_ready[bs].get(), r.h2d.get()));
        } else {
          if (up_a) {
            GEMMLAB_TRY(upload(a, a_buf[as], r.h2d.get()));
            CUDA_CHECK(cudaEventRecord(r.a_ready[as].get(), r.h2d.get()));
          }
          if (up_b) {
            GEMMLAB_TRY(upload(b, b_buf[bs], r.h2d.get()));
            CUDA_CHECK(cudaEventRecord(r.b_ready[bs].get(), r.h2d.get()));
          }
          CUDA_CHECK(cudaStreamWaitEvent(compute, r.a_ready[as].get()));
          CUDA_CHECK(cudaStreamWaitEvent(compute, r.b_ready[bs].get()));
          if (tile + 1 == tiles && kb + 1 == plan.blocks_k) {
            // The ramp down: the last product in pieces of rows, each coming down once done.
            const std::int64_t piece = ramp_piece(tm);
            for (std::int64_t r0 = 0, q = 0; r0 < tm; r0 += piece, ++q) {
              const std::int64_t rq = std::min(piece, tm - r0);
              GEMMLAB_TRY(run(row_piece(block, r0, rq)));
              CUDA_CHECK(cudaEventRecord(r.piece_done[q].get(), compute));
              CUDA_CHECK(cudaStreamWaitEvent(r.d2h.get(), r.piece_done[q].get()));
              GEMMLAB_TRY(download(c_block, c_buf[cs], r.d2h.get(), BlockPart{r0, 0, rq, tn}));
            }
            drained = true;
          } else {
            GEMMLAB_TRY(run(block));
          }
        }
        CUDA_CHECK(cudaEventRecord(r.a_free[as].get(), compute));
        CUDA_CHECK(cudaEventRecord(r.b_free[bs].get(), compute));
      }
      if (!drained) {
        CUDA_CHECK(cudaEventRecord(r.c_done[cs].get(), compute));
        CUDA_CHECK(cudaStreamWaitEvent(r.d2h.get(), r.c_done[cs].get()));
        GEMMLAB_TRY(download(c_block, c_buf[cs], r.d2h.get()));
      }
      CUDA_CHECK(cudaEventRecord(r.c_free[cs].get(), r.d2h.get()));
    }
  return Status::ok();
}

}  // namespace

Status run_out_of_core(const GemmProblem& problem, const Variant& variant, const OutOfCorePlan& plan,
                       RunContext& context) {
  OutOfCoreResources& r = context.get<OutOfCoreResources>();
  GEMMLAB_TRY(set_up(r, plan.device_bytes - plan.workspace_bytes));
  const Status enqueued = enqueue(problem, variant, plan, context, r);
  // All three streams drain before the buffers may be reused or freed, whatever failed.
  const cudaError_t up = cudaStreamSynchronize(r.h2d.get());
  const cudaError_t work = cudaStreamSynchronize(static_cast<cudaStream_t>(context.stream()));
  const cudaError_t down = cudaStreamSynchronize(r.d2h.get());
  GEMMLAB_TRY(enqueued);
  CUDA_CHECK(up);
  CUDA_CHECK(work);
  CUDA_CHECK(down);
  return Status::ok();
}

std::uint64_t out_of_core_buffer_bytes(RunContext& context) {
  return context.get<OutOfCoreResources>().buffer.bytes();
}

void release_out_of_core_buffers(RunContext& context) { context.get<OutOfCoreResources>().buffer = DeviceMemory(); }

Status is_device_pointer(const void* pointer, bool& out) {
  cudaPointerAttributes attributes{};
  CUDA_CHECK(cudaPointerGetAttributes(&attributes, pointer));
  out = attributes.type == cudaMemoryTypeDevice;
  return Status::ok();
}

}  // namespace gemmlab::cuda
