// The shared pieces of the distributed schedules (schedule.hpp).
#include "cuda/nccl/schedule.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

namespace gemmlab::cuda::distributed {

Status grow_events(std::vector<EventOwner>& pool, std::size_t count, bool timing) {
  while (pool.size() < count) {
    cudaEvent_t e = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
    pool.emplace_back(e);
  }
  return Status::ok();
}

// Rows [row, row + rows) and columns [col, col + cols) of a stored matrix, as a view.
Matrix sub_matrix(const Matrix& m, std::int64_t row, std::int64_t col, std::int64_t rows, std::int64_t cols) {
  Matrix out = m;
  out.data = static_cast<std::byte*>(m.data) + m.offset(row, col) * static_cast<std::int64_t>(storage_bytes(m.dtype));
  out.rows = rows;
  out.cols = cols;
  return out;
}

// The part of a stored operand block that covers K range [k0, k0 + w) in the block's own K
// coordinates: columns of an m x k (or k x n stored transposed) matrix, rows otherwise.
Matrix k_slice(const Matrix& block, bool k_along_columns, std::int64_t k0, std::int64_t w) {
  return k_along_columns ? sub_matrix(block, 0, k0, block.rows, w) : sub_matrix(block, k0, 0, w, block.cols);
}

bool contiguous(const Matrix& m) { return m.lines() <= 1 || m.ld == m.contiguous_extent(); }

// A dense matrix of `like`'s shape, layout and dtype at `data`.
Matrix dense_at(const Matrix& like, void* data) {
  Matrix out = like;
  out.data = data;
  out.ld = std::max<std::int64_t>(like.contiguous_extent(), 1);
  return out;
}

std::uint64_t bytes_of(const Matrix& m) {
  return static_cast<std::uint64_t>(m.rows) * static_cast<std::uint64_t>(m.cols) * storage_bytes(m.dtype);
}

Status pack(const Matrix& from, const Matrix& to, cudaStream_t stream) {
  if (from.rows == 0 || from.cols == 0) return Status::ok();  // a GPU with no part of K
  const std::size_t e = storage_bytes(from.dtype);
  CUDA_CHECK(cudaMemcpy2DAsync(to.data, static_cast<std::size_t>(to.ld) * e, from.data,
                               static_cast<std::size_t>(from.ld) * e,
                               static_cast<std::size_t>(from.contiguous_extent()) * e,
                               static_cast<std::size_t>(from.lines()), cudaMemcpyDeviceToDevice, stream));
  return Status::ok();
}

Matrix panel_like(const OperandRole& role, std::int64_t w) {
  Matrix m = *role.block;
  (role.k_along_columns ? m.cols : m.rows) = w;
  return dense_at(m, nullptr);
}

// The share of the model's time wait_all sleeps through between polls.
constexpr double kPollSleepShare = 0.8;

Status wait_all(Call& call, const std::vector<cudaEvent_t>& done) {
  using Clock = std::chrono::steady_clock;
  const auto entered = Clock::now();
  const auto deadline = entered + std::chrono::duration<double>(call.s.timeout_seconds);
  // Sleeping between polls costs the caller up to a sleep's length after the GPUs are done
  // (at 8192^3 bf16 on two GPUs the call lasts about 1 ms): sleep only through most of the
  // model's time, then poll without sleeping.
  const auto sleep_until = entered + std::chrono::duration<double>(kPollSleepShare * call.plan.model.model_seconds);
  std::vector<bool> finished(done.size(), false);
  for (;;) {
    bool all = true;
    for (std::size_t g = 0; g < done.size(); ++g) {
      if (finished[g]) continue;
      const cudaError_t e = cudaEventQuery(done[g]);
      if (e == cudaSuccess) finished[g] = true;
      else if (e == cudaErrorNotReady) all = false;
      else CUDA_CHECK(e);
    }
    if (all) return Status::ok();
    for (DeviceGroupState::Communicator& c : call.s.communicators)
      for (ncclComm_t comm : c.comms) {
        ncclResult_t async = ncclSuccess;
        NCCL_CHECK(ncclCommGetAsyncError(comm, &async));
        if (async != ncclSuccess && async != ncclInProgress) {
          call.s.broken = fmt::format("an NCCL collective failed: {}", ncclGetErrorString(async));
          return {StatusCode::ExecutionFailed, call.s.broken};
        }
      }
    if (Clock::now() > deadline) {
      std::string waiting;
      for (std::size_t g = 0; g < done.size(); ++g)
        if (!finished[g]) waiting += fmt::format("{}{}", waiting.empty() ? "" : ", ", call.s.devices[g]);
      call.s.broken = fmt::format("the distributed GEMM did not complete within {} s (GPUs still running: {}); its "
                                  "communicators were aborted",
                                  call.s.timeout_seconds, waiting);
      return {StatusCode::ExecutionFailed, call.s.broken};
    }
    if (Clock::now() < sleep_until) std::this_thread::sleep_for(std::chrono::microseconds(50));
    else std::this_thread::yield();
  }
}

Status prepare(Call& call, std::vector<OperandRole>& a, std::vector<OperandRole>& b) {
  const ProcessGrid& grid = call.plan.grid;
  const int gpus = grid.size();
  std::int64_t widest = 0;
  for (const Panel& panel : call.plan.panels) widest = std::max(widest, panel.k.count);
  a.assign(static_cast<std::size_t>(gpus), {});
  b.assign(static_cast<std::size_t>(gpus), {});
  for (int g = 0; g < gpus; ++g) {
    const int row = g / grid.cols, col = g % grid.cols;
    const LocalBlocks local = local_blocks(call.p.m, call.p.n, call.p.k, grid, g);
    OperandRole& ra = a[static_cast<std::size_t>(g)];
    OperandRole& rb = b[static_cast<std::size_t>(g)];
    ra.block = &call.p.a[static_cast<std::size_t>(g)];
    rb.block = &call.p.b[static_cast<std::size_t>(g)];
    ra.k_along_columns = call.p.op_a == Op::N;  // A stored m x k: K along its columns
    rb.k_along_columns = call.p.op_b == Op::T;  // B stored n x k: K along its columns
    ra.k_first = local.a_k.first;
    rb.k_first = local.b_k.first;
    ra.moves = grid.cols > 1;
    rb.moves = grid.rows > 1;
    ra.position = col;
    rb.position = row;
    const int ctas = call.copy_engines ? kZeroCtas : call.broadcast_ctas;
    if (ra.moves) {
      std::vector<int> members;
      for (int c = 0; c < grid.cols; ++c) members.push_back(row * grid.cols + c);
      GEMMLAB_TRY(make_communicator(call.s, members, ctas, ra.comm));
    }
    if (rb.moves) {
      std::vector<int> members;
      for (int r = 0; r < grid.rows; ++r) members.push_back(r * grid.cols + col);
      GEMMLAB_TRY(make_communicator(call.s, members, ctas, rb.comm));
    }
    ra.panel_bytes = ra.moves ? bytes_of(panel_like(ra, widest)) : 0;
    rb.panel_bytes = rb.moves ? bytes_of(panel_like(rb, widest)) : 0;
  }
  // Buffers: the receive buffers and a send buffer of each moving operand, 256-byte aligned.
  const auto round_up = [](std::uint64_t x) { return (x + 255) / 256 * 256; };
  call.s.ranks.resize(static_cast<std::size_t>(gpus));
  for (int g = 0; g < gpus; ++g) {
    DeviceGroupState::Rank& rank = call.s.ranks[static_cast<std::size_t>(g)];
    OperandRole& ra = a[static_cast<std::size_t>(g)];
    OperandRole& rb = b[static_cast<std::size_t>(g)];
    const std::uint64_t a_part = round_up(ra.panel_bytes), b_part = round_up(rb.panel_bytes);
    const std::uint64_t need = (kDistributedPanelBuffers + 1) * (a_part + b_part);
    GEMMLAB_TRY(make_current(call.s.devices[static_cast<std::size_t>(g)]));
    if (!rank.comm) GEMMLAB_TRY(make_stream(rank.comm));
    if (call.copy_engines) continue;  // the window holds the panels
    if (rank.buffer.bytes() < need) {
      rank.buffer = DeviceMemory();
      if (const Status st = DeviceMemory::allocate(need, rank.buffer); !st)
        return {StatusCode::AllocFailed,
                fmt::format("panel buffers of {} bytes on GPU {}: {}", need, call.s.devices[static_cast<std::size_t>(g)],
                            st.message())};
    }
    auto* base = static_cast<std::byte*>(rank.buffer.data());
    for (int i = 0; i < kDistributedPanelBuffers; ++i) {
      ra.receive[i] = base + i * a_part;
      rb.receive[i] = base + kDistributedPanelBuffers * a_part + i * b_part;
    }
    ra.send = base + kDistributedPanelBuffers * (a_part + b_part);
    rb.send = base + kDistributedPanelBuffers * (a_part + b_part) + a_part;
  }
  return Status::ok();
}

Status prepare_gather(Call& call, GatherRoles& out) {
  GEMMLAB_TRY(prepare(call, out.a, out.b));
  const ProcessGrid& grid = call.plan.grid;
  out.b_moves = grid.cols == 1;
  out.element = storage_bytes(out.moving().front().block->dtype);
  out.part.assign(static_cast<std::size_t>(grid.size()), Range{});
  out.longest = 0;
  for (int g = 0; g < grid.size(); ++g) {
    const LocalBlocks local = local_blocks(call.p.m, call.p.n, call.p.k, grid, g);
    out.part[static_cast<std::size_t>(g)] = out.b_moves ? local.b_k : local.a_k;
    out.longest = std::max(out.longest, out.part[static_cast<std::size_t>(g)].count);
  }
  return Status::ok();
}

}  // namespace gemmlab::cuda::distributed
