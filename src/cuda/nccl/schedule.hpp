// What the distributed GEMM's schedules share (panels.cpp: panels of K by broadcasts or
// all-gather rounds; slices.cpp: slices of C whole in K; stripe.cpp: a lead stripe, then the
// rest whole in K): views of operand blocks, each GPU's role for a moving operand, a call's
// events and its deadline. Included by src/cuda/nccl/ only.
#pragma once

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include <cstdint>
#include <vector>

#include "cuda/backend.hpp"
#include "cuda/nccl/group.hpp"
#include "cuda/nccl/nccl_check.hpp"
#include "cuda/runtime/check.hpp"
#include "gemmlab/distributed.hpp"

namespace gemmlab::cuda::distributed {

// Grows `pool` to `count` events (timing ones where `timing`).
Status grow_events(std::vector<EventOwner>& pool, std::size_t count, bool timing);

// Rows [row, row + rows) and columns [col, col + cols) of a stored matrix, as a view.
Matrix sub_matrix(const Matrix& m, std::int64_t row, std::int64_t col, std::int64_t rows, std::int64_t cols);
// The part of a stored operand block that covers K range [k0, k0 + w) in the block's own K
// coordinates: columns of an m x k (or k x n stored transposed) matrix, rows otherwise.
Matrix k_slice(const Matrix& block, bool k_along_columns, std::int64_t k0, std::int64_t w);
bool contiguous(const Matrix& m);
// A dense matrix of `like`'s shape, layout and dtype at `data`.
Matrix dense_at(const Matrix& like, void* data);
std::uint64_t bytes_of(const Matrix& m);
// Copies `from` into `to` (same shape) on `stream`, a device copy; nothing for an empty one.
Status pack(const Matrix& from, const Matrix& to, cudaStream_t stream);

// One GPU's view of one operand (A or B) of the schedule.
struct OperandRole {
  bool moves = false;            // broadcast along a communicator of more than one GPU
  int position = 0;              // this GPU's rank in that communicator (its grid column for A)
  DeviceGroupState::Communicator* comm = nullptr;
  const Matrix* block = nullptr;  // this GPU's stored block
  bool k_along_columns = false;   // K runs along the stored block's columns
  std::int64_t k_first = 0;       // the block's first K index
  std::uint64_t panel_bytes = 0;  // of the widest panel, dense; 0 where the operand stays
  void* receive[kDistributedPanelBuffers] = {};
  void* send = nullptr;
};

// The stored shape of a panel `w` wide of the operand whose block `role` holds: the block's
// other dimension (rows of C for A, columns for B) by w, laid out as the block, dense.
Matrix panel_like(const OperandRole& role, std::int64_t w);

struct Call {
  DeviceGroup& group;
  DeviceGroupState& s;
  const DistributedGemmProblem& p;
  const Variant& variant;
  const DistributedPlan& plan;
  int broadcast_ctas;
  bool copy_engines;  // panels move in all-gather rounds; no broadcast buffers
};

// Waits for every GPU's `done` event, watching NCCL's asynchronous errors; past the group's
// deadline it marks the group broken (its communicators are then aborted) and fails, naming
// the GPUs still running.
Status wait_all(Call& call, const std::vector<cudaEvent_t>& done);

// Makes (or finds) the communicators of the plan's grid and sizes every GPU's buffers (none
// where call.copy_engines: the window holds the panels).
Status prepare(Call& call, std::vector<OperandRole>& a, std::vector<OperandRole>& b);

// What the schedules that gather the one moving operand whole in K share (slices.cpp,
// stripe.cpp): every GPU's roles, which operand moves, and each GPU's part of K of it.
struct GatherRoles {
  std::vector<OperandRole> a, b;
  bool b_moves = true;        // B on a P x 1 grid, else A on a 1 x P grid
  std::vector<Range> part;    // GPU g's part of K of the moving operand
  std::int64_t longest = 0;   // the longest part: the all-gather's slots are this long
  std::size_t element = 0;    // bytes of an element of the moving operand
  const std::vector<OperandRole>& moving() const { return b_moves ? b : a; }
  const std::vector<OperandRole>& staying() const { return b_moves ? a : b; }
};
// prepare() for such a schedule (call.copy_engines), and the parts of K.
Status prepare_gather(Call& call, GatherRoles& out);

// One all-gather on every GPU of the moving operand's communicator, in one NCCL group: GPU g
// sends `count` bytes from its slot at base(g) + g * count and receives every other slot. A
// failure marks the group broken.
template <class Base>
Status all_gather(DeviceGroupState& s, const std::vector<OperandRole>& moving, Base base, std::uint64_t count,
                  const char* what) {
#if GEMMLAB_NCCL_COPY_ENGINES
  NCCL_CHECK(ncclGroupStart());
  Status issued = Status::ok();
  for (std::size_t g = 0; g < moving.size() && issued; ++g)
    issued = nccl_status(ncclAllGather(base(static_cast<int>(g)) + g * count, base(static_cast<int>(g)), count,
                                       ncclUint8, moving[g].comm->comms[g], s.ranks[g].comm.get()),
                         what, __FILE__, __LINE__);
  const Status ended = nccl_status(ncclGroupEnd(), what, __FILE__, __LINE__);
  if (!issued || !ended) {
    s.broken = (!issued ? issued : ended).message();
    return !issued ? issued : ended;
  }
  return Status::ok();
#else
  (void)s, (void)moving, (void)base, (void)count, (void)what;
  return {StatusCode::NotSupported, "NCCL's copy-engine collectives need NCCL 2.28 or later"};
#endif
}

// A call's events on every GPU: per step (a panel or a slice) an "arrived" and a "buffer free"
// (sync), a start and an end, and a pair around each wait for a step's operand (timing).
class CallEvents {
 public:
  CallEvents(DeviceGroup& group, std::size_t steps) : group_(group), s_(group.state()), steps_(steps) {}

  // Grows the pools, then starts every GPU's comm stream after the work already on its
  // context's stream (which may have written A and B).
  Status begin() {
    for (int g = 0; g < group_.size(); ++g) {
      GEMMLAB_TRY(make_current(group_.device(g)));
      GEMMLAB_TRY(grow_events(rank(g).sync, 2 * steps_ + 1, false));
      GEMMLAB_TRY(grow_events(rank(g).timing, 2 * steps_ + 2, true));
      CUDA_CHECK(cudaEventRecord(start(g), stream(g)));
      CUDA_CHECK(cudaStreamWaitEvent(rank(g).comm.get(), start(g), 0));
    }
    return Status::ok();
  }
  cudaEvent_t arrived(int g, std::size_t t) { return rank(g).sync[t].get(); }
  cudaEvent_t freed(int g, std::size_t t) { return rank(g).sync[steps_ + t].get(); }
  cudaStream_t stream(int g) { return static_cast<cudaStream_t>(group_.context(g).stream()); }

  // GPU g's products wait for step t's operand, timed.
  Status wait_for(int g, std::size_t t) {
    CUDA_CHECK(cudaEventRecord(rank(g).timing[2 + 2 * t].get(), stream(g)));
    CUDA_CHECK(cudaStreamWaitEvent(stream(g), arrived(g, t), 0));
    CUDA_CHECK(cudaEventRecord(rank(g).timing[3 + 2 * t].get(), stream(g)));
    return Status::ok();
  }

  // Ends the call when every GPU's two streams are done (the next call reuses the buffers),
  // waits for it with the group's deadline, and fills run's times: each GPU's, and its waits
  // for the steps `waited` names.
  template <class Waited>
  Status end(Call& call, DistributedRun& run, Waited waited) {
    const int gpus = group_.size();
    std::vector<cudaEvent_t> done;
    for (int g = 0; g < gpus; ++g) {
      GEMMLAB_TRY(make_current(group_.device(g)));
      CUDA_CHECK(cudaEventRecord(rank(g).sync[2 * steps_].get(), rank(g).comm.get()));
      CUDA_CHECK(cudaStreamWaitEvent(stream(g), rank(g).sync[2 * steps_].get(), 0));
      CUDA_CHECK(cudaEventRecord(finish(g), stream(g)));
      done.push_back(finish(g));
    }
    GEMMLAB_TRY(wait_all(call, done));
    run.seconds.assign(static_cast<std::size_t>(gpus), 0.0);
    run.wait_seconds.assign(static_cast<std::size_t>(gpus), 0.0);
    for (int g = 0; g < gpus; ++g) {
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, start(g), finish(g)));
      run.seconds[static_cast<std::size_t>(g)] = ms * 1e-3;
      for (std::size_t t = 0; t < steps_; ++t)
        if (waited(g, t)) {
          CUDA_CHECK(cudaEventElapsedTime(&ms, rank(g).timing[2 + 2 * t].get(), rank(g).timing[3 + 2 * t].get()));
          run.wait_seconds[static_cast<std::size_t>(g)] += ms * 1e-3;
        }
    }
    return Status::ok();
  }

 private:
  DeviceGroupState::Rank& rank(int g) { return s_.ranks[static_cast<std::size_t>(g)]; }
  cudaEvent_t start(int g) { return rank(g).timing[0].get(); }
  cudaEvent_t finish(int g) { return rank(g).timing[1].get(); }
  DeviceGroup& group_;
  DeviceGroupState& s_;
  std::size_t steps_;
};

// The slice schedule (slices.cpp).
Status run_slices(DeviceGroup& group, const DistributedGemmProblem& problem, const Variant& variant,
                  const DistributedPlan& plan, DistributedRun& run);
// The stripe schedule (stripe.cpp).
Status run_stripe(DeviceGroup& group, const DistributedGemmProblem& problem, const Variant& variant,
                  const DistributedPlan& plan, DistributedRun& run);

}  // namespace gemmlab::cuda::distributed
