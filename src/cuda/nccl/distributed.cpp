// The distributed GEMM's NCCL driver (gemmlab/distributed.hpp): one thread enqueues every
// GPU's work, then waits for all of it with a deadline.
//
// Per GPU there are two streams: the context's, which runs the panel products, and a comm
// stream of the group's, which runs every panel's broadcasts in the plan's order (NCCL needs
// the same order of collectives on every member). A GPU first multiplies the panels it needs
// nothing for (it roots them, or the operand never moves on this grid), while the others
// arrive; then the received panels in order, each after an event its broadcast recorded.
// Received panels land in two buffers per operand: a broadcast into a buffer waits for the
// product that read the buffer's previous panel. A root whose part of a panel is not one
// contiguous run packs it into a send buffer first (NCCL moves contiguous bytes); one that
// is contiguous (B's rows of a dense row-major block) is broadcast where it lies.
//
// With copy engines (PanelTransport::CopyEngines, where one operand moves) the panels move in
// rounds instead: round s is one all-gather in which every GPU sends the s-th panel it holds
// (packed into its slot of a receive buffer in NCCL's symmetric window) and receives the
// others'. NCCL runs it on the copy engines, so no broadcast waits for SMs a product holds.
// Two receive buffers, used in turn: the gather of round s waits for the products of round
// s - 2's panels.
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <thread>

#include "cuda/backend.hpp"
#include "cuda/distributed.hpp"
#include "cuda/nccl/nccl_check.hpp"
#include "cuda/runtime/buffer.hpp"
#include "cuda/runtime/check.hpp"

// NCCL's copy-engine collectives: its zero-CTA policy with buffers in symmetric windows.
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
#define GEMMLAB_NCCL_COPY_ENGINES 1
#else
#define GEMMLAB_NCCL_COPY_ENGINES 0
#endif

namespace gemmlab {

// A communicator's `ctas` for NCCL's zero-CTA policy (the copy-engine transport).
inline constexpr int kZeroCtas = -1;

// What a group keeps between calls.
struct DeviceGroupState {
  std::vector<int> devices;
  double timeout_seconds = 0;
  // After a call that timed out or failed inside NCCL the communicators were aborted: every
  // later call refuses, naming why (a new group starts afresh).
  std::string broken;

  // The GPUs `members` (ranks of the group) share, one ncclComm_t per member, in order,
  // made for broadcasts of at most `ctas` blocks (0: NCCL's choice).
  struct Communicator {
    std::vector<int> members;
    int ctas = 0;
    std::vector<ncclComm_t> comms;
  };
  std::vector<Communicator> communicators;

  struct Rank {
    cuda::StreamOwner comm;
    cuda::DeviceMemory buffer;  // receive buffers, then send buffers (layout in Buffers below)
    std::vector<cuda::EventOwner> sync, timing;  // pools, grown as a call needs
  };
  std::vector<Rank> ranks;

  // The copy-engine transport's receive buffers: one ncclMemAlloc buffer per GPU (rank order),
  // registered as a symmetric window of the zero-CTA communicator `comms` of every GPU.
  struct Window {
    std::vector<void*> buffers;
#if GEMMLAB_NCCL_COPY_ENGINES
    std::vector<ncclWindow_t> windows;
#endif
    std::vector<ncclComm_t> comms;
    std::uint64_t bytes = 0;
  };
  Window window;

  void release_window() {
#if GEMMLAB_NCCL_COPY_ENGINES
    if (broken.empty() && !window.windows.empty()) {
      ncclGroupStart();
      for (std::size_t r = 0; r < window.windows.size(); ++r)
        if (window.windows[r]) {
          cudaSetDevice(devices[r]);
          ncclCommWindowDeregister(window.comms[r], window.windows[r]);
        }
      ncclGroupEnd();
    }
    for (std::size_t r = 0; r < window.buffers.size(); ++r)
      if (window.buffers[r]) {
        cudaSetDevice(devices[r]);
        ncclMemFree(window.buffers[r]);
      }
#endif
    window = Window{};
  }

  // Windows are deregistered before their communicators go; after a failure the communicators
  // are aborted first (nothing waits on them) and the buffers freed after.
  ~DeviceGroupState() {
    if (broken.empty()) release_window();
    for (Communicator& c : communicators)
      for (ncclComm_t comm : c.comms)
        if (comm) {
          if (broken.empty()) ncclCommDestroy(comm);
          else ncclCommAbort(comm);
        }
    release_window();
  }
};

namespace cuda {
namespace {

Status make_communicator(DeviceGroupState& s, const std::vector<int>& members, int ctas,
                         DeviceGroupState::Communicator*& out) {
  for (DeviceGroupState::Communicator& c : s.communicators)
    if (c.members == members && c.ctas == ctas) {
      out = &c;
      return Status::ok();
    }
  disable_nvls();
  ncclUniqueId id;
  NCCL_CHECK(ncclGetUniqueId(&id));
  DeviceGroupState::Communicator c;
  c.members = members;
  c.ctas = ctas;
  c.comms.assign(members.size(), nullptr);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  if (ctas > 0) {
    config.minCTAs = 1;
    config.maxCTAs = ctas;
  }
#if GEMMLAB_NCCL_COPY_ENGINES
  if (ctas == kZeroCtas) config.CTAPolicy = NCCL_CTA_POLICY_ZERO;
#endif
  config.commName = "gemmlab";
  NCCL_CHECK(ncclGroupStart());
  Status failed = Status::ok();
  for (std::size_t r = 0; r < members.size() && failed; ++r) {
    failed = make_current(s.devices[static_cast<std::size_t>(members[r])]);
    if (failed)
      failed = nccl_status(ncclCommInitRankConfig(&c.comms[r], static_cast<int>(members.size()), id, static_cast<int>(r),
                                                  &config),
                           "ncclCommInitRankConfig", __FILE__, __LINE__);
  }
  const Status ended = nccl_status(ncclGroupEnd(), "ncclGroupEnd (communicator creation)", __FILE__, __LINE__);
  if (!failed || !ended) {
    for (ncclComm_t comm : c.comms)
      if (comm) ncclCommAbort(comm);
    const Status& why = !failed ? failed : ended;
    std::string gpus;
    for (int m : members) gpus += fmt::format("{}{}", gpus.empty() ? "" : ",", s.devices[static_cast<std::size_t>(m)]);
    return {why.code(), fmt::format("making the NCCL communicator of GPUs {}: {}", gpus, why.message())};
  }
  s.communicators.push_back(std::move(c));
  out = &s.communicators.back();
  return Status::ok();
}

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
Matrix panel_like(const OperandRole& role, std::int64_t w) {
  Matrix m = *role.block;
  (role.k_along_columns ? m.cols : m.rows) = w;
  return dense_at(m, nullptr);
}

struct Call {
  DeviceGroup& group;
  DeviceGroupState& s;
  const DistributedGemmProblem& p;
  const Variant& variant;
  const DistributedPlan& plan;
  int broadcast_ctas;
  bool copy_engines;  // panels move in all-gather rounds; no broadcast buffers
};

Status wait_all(Call& call, const std::vector<cudaEvent_t>& done) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(call.s.timeout_seconds);
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
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// Makes (or finds) the communicators of the plan's grid and sizes every GPU's buffers.
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

// Each context's SM count target lowered by `ctas` SMs for one call, and set back after it.
class SmTargets {
 public:
  explicit SmTargets(DeviceGroup& group) : group_(group) {}
  ~SmTargets() {
    for (std::size_t g = 0; g < before_.size(); ++g) group_.context(static_cast<int>(g)).set_sm_count_target(before_[g]);
  }
  SmTargets(const SmTargets&) = delete;
  SmTargets& operator=(const SmTargets&) = delete;
  Status leave(int ctas) {
    for (int g = 0; g < group_.size(); ++g) {
      Context& context = group_.context(g);
      GEMMLAB_TRY(make_current(group_.device(g)));
      const int sms = context.sm_count_target() > 0 ? context.sm_count_target() : device_sm_count();
      before_.push_back(context.sm_count_target());
      context.set_sm_count_target(std::max(1, sms - ctas));
    }
    return Status::ok();
  }

 private:
  DeviceGroup& group_;
  std::vector<int> before_;
};

// What GPU g multiplies for one panel, where each operand's panel comes from.
struct Step {
  std::size_t panel = 0;
  bool receives_a = false, receives_b = false;
  int a_buffer = 0, b_buffer = 0;  // which receive buffer, where received
  void* received = nullptr;        // copy engines: where the moving operand's panel lands
};

// One all-gather of the copy-engine transport: the panel each member roots (by its position
// in the communicator), every member's part `bytes` long (the widest of them, packed).
struct Round {
  std::vector<std::size_t> panels;
  std::uint64_t bytes = 0;
};

// The rounds of `plan` where the moving operand's panels (B's on a P x 1 grid, else A's) are
// rooted `members` ways: round s holds each root's s-th panel. False where the roots hold
// different numbers of panels (an all-gather moves as much from every member).
bool make_rounds(const DistributedPlan& plan, bool b_moves, int members, std::vector<Round>& out) {
  std::vector<std::vector<std::size_t>> by_root(static_cast<std::size_t>(members));
  for (std::size_t t = 0; t < plan.panels.size(); ++t) {
    const int root = b_moves ? plan.panels[t].b_root : plan.panels[t].a_root;
    if (root < 0 || root >= members) return false;
    by_root[static_cast<std::size_t>(root)].push_back(t);
  }
  out.assign(by_root.front().size(), Round{});
  for (std::size_t s = 0; s < out.size(); ++s)
    for (const std::vector<std::size_t>& panels : by_root) {
      if (panels.size() != out.size()) return false;
      out[s].panels.push_back(panels[s]);
    }
  return true;
}

// The window's receive buffers for `rounds` on the zero-CTA communicator `comm` (every GPU,
// rank order): two sets of one slot per member, each slot the widest round's part.
Status make_window(DeviceGroupState& s, const DeviceGroupState::Communicator& comm, std::uint64_t bytes) {
#if GEMMLAB_NCCL_COPY_ENGINES
  if (s.window.bytes >= bytes && s.window.comms == comm.comms) return Status::ok();
  s.release_window();
  const std::size_t gpus = comm.comms.size();
  s.window.buffers.assign(gpus, nullptr);
  s.window.windows.assign(gpus, nullptr);
  s.window.comms = comm.comms;
  for (std::size_t g = 0; g < gpus; ++g) {
    GEMMLAB_TRY(make_current(s.devices[g]));
    if (const Status st = nccl_status(ncclMemAlloc(&s.window.buffers[g], bytes), "ncclMemAlloc", __FILE__, __LINE__);
        !st) {
      s.release_window();
      return {StatusCode::AllocFailed,
              fmt::format("panel buffers of {} bytes on GPU {}: {}", bytes, s.devices[g], st.message())};
    }
  }
  NCCL_CHECK(ncclGroupStart());
  Status registered = Status::ok();
  for (std::size_t g = 0; g < gpus && registered; ++g) {
    registered = make_current(s.devices[g]);
    if (registered)
      registered = nccl_status(ncclCommWindowRegister(comm.comms[g], s.window.buffers[g], bytes, &s.window.windows[g],
                                                      NCCL_WIN_COLL_SYMMETRIC),
                               "ncclCommWindowRegister", __FILE__, __LINE__);
  }
  const Status ended = nccl_status(ncclGroupEnd(), "ncclGroupEnd (window registration)", __FILE__, __LINE__);
  if (!registered || !ended) {
    s.window.windows.assign(gpus, nullptr);  // none to deregister
    s.release_window();
    return !registered ? registered : ended;
  }
  s.window.bytes = bytes;
  return Status::ok();
#else
  (void)s, (void)comm, (void)bytes;
  return {StatusCode::NotSupported, "NCCL's copy-engine collectives need NCCL 2.28 or later"};
#endif
}

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

// The slice schedule (DistributedCut::Slices): where only one operand moves, each round
// all-gathers one slice of it whole in K (every GPU packs its part of K of the slice into its
// slot, and the slots stack into one dense matrix), and every GPU multiplies its block of the
// other operand by it into that slice of its block of C: each product whole in K, C written
// once. Two receive buffers, used in turn, as for the rounds of panels.
Status run_slices(DeviceGroup& group, const DistributedGemmProblem& problem, const Variant& variant,
                  const DistributedPlan& plan, DistributedRun& run) {
  DeviceGroupState& s = group.state();
  const ProcessGrid& grid = plan.grid;
  const int gpus = grid.size();
  const auto G = [](int g) { return static_cast<std::size_t>(g); };
  const bool b_moves = grid.cols == 1;  // else A moves, on a 1 x P grid
  Call call{group, s, problem, variant, plan, 0, true};
  std::vector<OperandRole> a, b;
  GEMMLAB_TRY(prepare(call, a, b));
  run.transport = PanelTransport::CopyEngines;
  const std::vector<OperandRole>& moving = b_moves ? b : a;
  const std::size_t element = storage_bytes(moving.front().block->dtype);
  // GPU g's part of K of the moving operand, and the longest part (the all-gather's stride).
  std::vector<Range> part(G(gpus));
  std::int64_t longest = 0;
  for (int g = 0; g < gpus; ++g) {
    const LocalBlocks local = local_blocks(problem.m, problem.n, problem.k, grid, g);
    part[G(g)] = b_moves ? local.b_k : local.a_k;
    longest = std::max(longest, part[G(g)].count);
  }
  std::int64_t widest = 0;
  for (const Range& slice : plan.slices) widest = std::max(widest, slice.count);
  const std::uint64_t slot = (static_cast<std::uint64_t>(longest) * static_cast<std::uint64_t>(widest) * element + 255) /
                             256 * 256;
  GEMMLAB_TRY(make_window(s, *moving.front().comm, kDistributedPanelBuffers * G(gpus) * slot));

  // A slice of the moving operand, rows (or columns) `x0..` of op(B) (or op(A)), `k` of K,
  // stored as the operand's blocks are; dense at `data`, or a view of `block` at K offset 0.
  const auto slice_of = [&](const Matrix& block, std::int64_t x0, std::int64_t w, std::int64_t k) {
    // B moves: op(B) is K x n, stored k x n (N) or n x k (T); A moves: op(A) is m x K, stored
    // m x k (N) or k x m (T). K is the stored rows where op is N for B, T for A.
    const bool k_rows = b_moves ? problem.op_b == Op::N : problem.op_a == Op::T;
    return k_rows ? sub_matrix(block, 0, x0, k, w) : sub_matrix(block, x0, 0, w, k);
  };
  const auto base = [&](int g, std::size_t r) {
    return static_cast<std::byte*>(s.window.buffers[G(g)]) + (r % kDistributedPanelBuffers) * G(gpus) * slot;
  };

  const std::size_t slices = plan.slices.size();
  CallEvents events(group, slices);
  GEMMLAB_TRY(events.begin());

  run.bytes_received.assign(G(gpus), 0.0);
  for (std::size_t r = 0; r < slices; ++r) {
    const Range& slice = plan.slices[r];
    const std::uint64_t count = static_cast<std::uint64_t>(longest) * static_cast<std::uint64_t>(slice.count) * element;
    // The gather: each GPU packs its part after the products that read this buffer last.
    for (int g = 0; g < gpus; ++g) {
      GEMMLAB_TRY(make_current(s.devices[G(g)]));
      cudaStream_t comm = s.ranks[G(g)].comm.get();
      if (r >= kDistributedPanelBuffers)
        CUDA_CHECK(cudaStreamWaitEvent(comm, events.freed(g, r - kDistributedPanelBuffers), 0));
      const Matrix mine = slice_of(*moving[G(g)].block, slice.first, slice.count, part[G(g)].count);
      GEMMLAB_TRY(pack(mine, dense_at(mine, base(g, r) + G(g) * count), comm));
    }
    GEMMLAB_TRY(all_gather(s, moving, [&](int g) { return base(g, r); }, count, "ncclAllGather (a slice)"));
    // The products: every GPU's block of the other operand times the whole-K slice.
    for (int g = 0; g < gpus; ++g) {
      GEMMLAB_TRY(make_current(s.devices[G(g)]));
      CUDA_CHECK(cudaEventRecord(events.arrived(g, r), s.ranks[G(g)].comm.get()));
      GEMMLAB_TRY(events.wait_for(g, r));
      const Matrix whole = dense_at(slice_of(*moving[G(g)].block, slice.first, slice.count, problem.k), base(g, r));
      run.bytes_received[G(g)] += static_cast<double>((problem.k - part[G(g)].count) * slice.count) *
                                  static_cast<double>(element);
      const Matrix& c = problem.c[G(g)];
      GemmProblem product;
      product.op_a = problem.op_a;
      product.op_b = problem.op_b;
      product.alpha = problem.alpha;
      product.beta = problem.beta;
      product.compute = problem.compute;
      product.k = problem.k;
      if (b_moves) {
        product.m = c.rows;
        product.n = slice.count;
        product.a = problem.a[G(g)];
        product.b = whole;
        product.c = sub_matrix(c, 0, slice.first, c.rows, slice.count);
      } else {
        product.m = slice.count;
        product.n = c.cols;
        product.a = whole;
        product.b = problem.b[G(g)];
        product.c = sub_matrix(c, slice.first, 0, slice.count, c.cols);
      }
      RunContext& resources = group.context(g).resources();
      Status st = variant.prepare ? variant.prepare(product, resources) : Status::ok();
      if (st) st = variant.run(product, resources);
      if (!st)
        return {st.code(), fmt::format("GPU {}'s product of slice {} ({}): {}", s.devices[G(g)], r, product.describe(),
                                       st.message())};
      CUDA_CHECK(cudaEventRecord(events.freed(g, r), events.stream(g)));
    }
  }
  return events.end(call, run, [](int, std::size_t) { return true; });
}

}  // namespace

bool nccl_copy_engines() { return GEMMLAB_NCCL_COPY_ENGINES != 0; }

Status make_group_state(const std::vector<int>& devices, double timeout_seconds, DeviceGroupState*& out) {
  auto* s = new DeviceGroupState;
  s->devices = devices;
  s->timeout_seconds = timeout_seconds;
  out = s;
  return Status::ok();
}

void destroy_group_state(DeviceGroupState* state) { delete state; }

Status run_distributed(DeviceGroup& group, const DistributedGemmProblem& problem, const Variant& variant,
                       const DistributedPlan& plan, const DistributedOptions& options, DistributedRun& run) {
  DeviceGroupState& s = group.state();
  if (!s.broken.empty())
    return {StatusCode::ExecutionFailed, fmt::format("this device group is unusable: {}; make a new one", s.broken)};
  if (plan.cut == DistributedCut::Slices) return run_slices(group, problem, variant, plan, run);
  const ProcessGrid& grid = plan.grid;
  const int gpus = grid.size();
  const auto G = [](int g) { return static_cast<std::size_t>(g); };
  // Copy engines where one operand moves (a grid of one column moves B, of one row A) and its
  // roots hold as many panels each.
  const bool b_moves = grid.rows > 1 && grid.cols == 1, a_moves = grid.cols > 1 && grid.rows == 1;
  std::vector<Round> rounds;
  const bool copy_engines = GEMMLAB_NCCL_COPY_ENGINES && options.transport == PanelTransport::CopyEngines &&
                            (a_moves || b_moves) && make_rounds(plan, b_moves, gpus, rounds);
  Call call{group, s, problem, variant, plan, options.broadcast_ctas, copy_engines};
  std::vector<OperandRole> a, b;
  GEMMLAB_TRY(prepare(call, a, b));
  run.transport = copy_engines ? PanelTransport::CopyEngines : PanelTransport::Broadcasts;
  // Where anything is broadcast by NCCL's kernels, the products leave their SMs free, for this
  // call.
  SmTargets targets(group);
  if (gpus > 1 && !copy_engines && options.broadcast_ctas > 0) GEMMLAB_TRY(targets.leave(options.broadcast_ctas));
  // The copy engines' rounds: each member's part, and a receive slot per member in each of two
  // sets.
  std::uint64_t slot = 0;
  const std::vector<OperandRole>& moving = b_moves ? b : a;
  if (copy_engines) {
    for (Round& round : rounds) {
      for (std::size_t i = 0; i < round.panels.size(); ++i)
        round.bytes = std::max(round.bytes, bytes_of(panel_like(moving[i], plan.panels[round.panels[i]].k.count)));
      slot = std::max(slot, (round.bytes + 255) / 256 * 256);
    }
    GEMMLAB_TRY(make_window(s, *moving.front().comm, kDistributedPanelBuffers * G(gpus) * slot));
  }
  const auto round_base = [&](int g, std::size_t r) {
    return static_cast<std::byte*>(s.window.buffers[G(g)]) + (r % kDistributedPanelBuffers) * G(gpus) * slot;
  };

  // Each GPU's steps: what it needs nothing for first, then what it receives, in plan order
  // (with copy engines, in round order).
  std::vector<std::vector<Step>> steps(G(gpus));
  std::vector<std::vector<Step>> received_by_panel(G(gpus), std::vector<Step>(plan.panels.size()));
  std::vector<std::size_t> round_of(plan.panels.size(), 0);
  for (std::size_t r = 0; r < rounds.size(); ++r)
    for (std::size_t t : rounds[r].panels) round_of[t] = r;
  for (int g = 0; g < gpus && copy_engines; ++g) {
    for (std::size_t t = 0; t < plan.panels.size(); ++t)
      if ((b_moves ? plan.panels[t].b_root : plan.panels[t].a_root) == g) steps[G(g)].push_back(Step{t});
    for (std::size_t r = 0; r < rounds.size(); ++r)
      for (int i = 0; i < gpus; ++i) {
        if (i == g) continue;
        Step step{rounds[r].panels[G(i)]};
        (b_moves ? step.receives_b : step.receives_a) = true;
        step.received = round_base(g, r) + G(i) * rounds[r].bytes;
        steps[G(g)].push_back(step);
      }
  }
  for (int g = 0; g < gpus && !copy_engines; ++g) {
    std::vector<Step> local, remote;
    int ra = 0, rb = 0;
    for (std::size_t t = 0; t < plan.panels.size(); ++t) {
      const Panel& panel = plan.panels[t];
      Step step;
      step.panel = t;
      step.receives_a = a[G(g)].moves && panel.a_root != a[G(g)].position;
      step.receives_b = b[G(g)].moves && panel.b_root != b[G(g)].position;
      if (step.receives_a) step.a_buffer = ra++ % kDistributedPanelBuffers;
      if (step.receives_b) step.b_buffer = rb++ % kDistributedPanelBuffers;
      received_by_panel[G(g)][t] = step;
      (step.receives_a || step.receives_b ? remote : local).push_back(step);
    }
    steps[G(g)] = local;
    steps[G(g)].insert(steps[G(g)].end(), remote.begin(), remote.end());
  }

  const std::size_t panels = plan.panels.size();
  CallEvents events(group, panels);
  GEMMLAB_TRY(events.begin());
  const auto arrived = [&](int g, std::size_t t) { return events.arrived(g, t); };
  const auto freed = [&](int g, std::size_t t) { return events.freed(g, t); };
  const auto stream = [&](int g) { return events.stream(g); };

  // The panel whose product last read each receive buffer (per GPU, operand and buffer): the
  // next broadcast into that buffer waits for that product. Products of received panels run
  // in plan order (steps list them so), as the broadcasts do.
  constexpr std::size_t kNone = ~std::size_t{0};
  std::vector<std::array<std::array<std::size_t, kDistributedPanelBuffers>, 2>> last_reader(G(gpus));
  for (auto& x : last_reader)
    for (auto& y : x) y.fill(kNone);

  // One panel's broadcasts, every GPU's calls in one NCCL group. A GPU receiving into a buffer
  // first waits for the product that last read it (already enqueued: see the order below);
  // roots pack what is not contiguous.
  const auto enqueue_broadcasts = [&](std::size_t t) -> Status {
    const Panel& panel = plan.panels[t];
    struct Part {
      void* data = nullptr;
      std::uint64_t bytes = 0;
    };
    std::vector<std::array<Part, 2>> parts(G(gpus));
    for (int g = 0; g < gpus; ++g) {
      GEMMLAB_TRY(make_current(s.devices[G(g)]));
      const Step& step = received_by_panel[G(g)][t];
      cudaStream_t comm = s.ranks[G(g)].comm.get();
      for (int which = 0; which < 2; ++which) {
        OperandRole& role = which == 0 ? a[G(g)] : b[G(g)];
        if (!role.moves) continue;
        Part& part = parts[G(g)][G(which)];
        part.bytes = bytes_of(panel_like(role, panel.k.count));
        if (which == 0 ? step.receives_a : step.receives_b) {
          const int buffer = which == 0 ? step.a_buffer : step.b_buffer;
          std::size_t& reader = last_reader[G(g)][G(which)][G(buffer)];
          if (reader != kNone) CUDA_CHECK(cudaStreamWaitEvent(comm, freed(g, reader), 0));
          reader = t;
          part.data = role.receive[buffer];
        } else {
          const Matrix mine = k_slice(*role.block, role.k_along_columns, panel.k.first - role.k_first, panel.k.count);
          if (contiguous(mine)) {
            part.data = mine.data;
          } else {
            GEMMLAB_TRY(pack(mine, dense_at(mine, role.send), comm));
            part.data = role.send;
          }
        }
      }
    }
    NCCL_CHECK(ncclGroupStart());
    Status issued = Status::ok();
    for (int g = 0; g < gpus && issued; ++g)
      for (int which = 0; which < 2 && issued; ++which) {
        const OperandRole& role = which == 0 ? a[G(g)] : b[G(g)];
        const Part& part = parts[G(g)][G(which)];
        if (!role.moves || part.bytes == 0) continue;
        issued = nccl_status(ncclBroadcast(part.data, part.data, part.bytes, ncclUint8,
                                           which == 0 ? panel.a_root : panel.b_root,
                                           role.comm->comms[G(role.position)], s.ranks[G(g)].comm.get()),
                             which == 0 ? "ncclBroadcast (a panel of A)" : "ncclBroadcast (a panel of B)", __FILE__,
                             __LINE__);
      }
    const Status ended = nccl_status(ncclGroupEnd(), "ncclGroupEnd (a panel's broadcasts)", __FILE__, __LINE__);
    if (!issued || !ended) {
      s.broken = (!issued ? issued : ended).message();
      return !issued ? issued : ended;
    }
    for (int g = 0; g < gpus; ++g) {
      GEMMLAB_TRY(make_current(s.devices[G(g)]));
      CUDA_CHECK(cudaEventRecord(arrived(g, t), s.ranks[G(g)].comm.get()));
    }
    return Status::ok();
  };

  // One product on GPU g: after its panel's arrival where it receives anything (timed: the
  // wait), C's block scaled by beta in the GPU's first product and accumulated after.
  run.bytes_received.assign(G(gpus), 0.0);
  std::vector<bool> first(G(gpus), true);
  const auto enqueue_product = [&](int g, const Step& step) -> Status {
    GEMMLAB_TRY(make_current(s.devices[G(g)]));
    const Panel& panel = plan.panels[step.panel];
    const bool receives = step.receives_a || step.receives_b;
    if (receives) GEMMLAB_TRY(events.wait_for(g, step.panel));
    const auto view = [&](const OperandRole& role, bool received, int buffer) {
      if (!received) return k_slice(*role.block, role.k_along_columns, panel.k.first - role.k_first, panel.k.count);
      const Matrix panel_matrix =
          dense_at(panel_like(role, panel.k.count), step.received ? step.received : role.receive[buffer]);
      run.bytes_received[G(g)] += static_cast<double>(bytes_of(panel_matrix));
      return panel_matrix;
    };
    const LocalBlocks local = local_blocks(problem.m, problem.n, problem.k, grid, g);
    GemmProblem product;
    product.m = local.rows.count;
    product.n = local.cols.count;
    product.k = panel.k.count;
    product.op_a = problem.op_a;
    product.op_b = problem.op_b;
    product.alpha = problem.alpha;
    product.beta = first[G(g)] ? problem.beta : 1.0;
    product.compute = problem.compute;
    product.a = view(a[G(g)], step.receives_a, step.a_buffer);
    product.b = view(b[G(g)], step.receives_b, step.b_buffer);
    product.c = problem.c[G(g)];
    // The library checked every product shape the plan has against the rung and that the rung
    // runs here; the GPU is current.
    RunContext& resources = group.context(g).resources();
    Status st = variant.prepare ? variant.prepare(product, resources) : Status::ok();
    if (st) st = variant.run(product, resources);
    if (!st)
      return {st.code(), fmt::format("GPU {}'s product of panel {} ({}): {}", s.devices[G(g)], step.panel,
                                     product.describe(), st.message())};
    if (receives) CUDA_CHECK(cudaEventRecord(freed(g, step.panel), stream(g)));
    first[G(g)] = false;
    return Status::ok();
  };

  // One round of the copy engines: every GPU packs the panel it roots into its slot of the
  // round's receive set (after the products of the round that last used the set), then one
  // all-gather per GPU in one NCCL group.
  const auto enqueue_gather = [&](std::size_t r) -> Status {
    const Round& round = rounds[r];
    for (int g = 0; g < gpus; ++g) {
      GEMMLAB_TRY(make_current(s.devices[G(g)]));
      cudaStream_t comm = s.ranks[G(g)].comm.get();
      if (r >= kDistributedPanelBuffers)
        for (int i = 0; i < gpus; ++i)
          if (i != g) CUDA_CHECK(cudaStreamWaitEvent(comm, freed(g, rounds[r - kDistributedPanelBuffers].panels[G(i)]), 0));
      const OperandRole& role = moving[G(g)];
      const Panel& panel = plan.panels[round.panels[G(g)]];
      const Matrix mine = k_slice(*role.block, role.k_along_columns, panel.k.first - role.k_first, panel.k.count);
      GEMMLAB_TRY(pack(mine, dense_at(mine, round_base(g, r) + G(g) * round.bytes), comm));
    }
    GEMMLAB_TRY(all_gather(s, moving, [&](int g) { return round_base(g, r); }, round.bytes,
                           "ncclAllGather (a round of panels)"));
    for (int g = 0; g < gpus; ++g) {
      GEMMLAB_TRY(make_current(s.devices[G(g)]));
      for (std::size_t t : round.panels) CUDA_CHECK(cudaEventRecord(arrived(g, t), s.ranks[G(g)].comm.get()));
    }
    return Status::ok();
  };

  // Enqueued in an order where every wait follows the record it waits for: the first
  // panel's transfer (so that it starts at once), each GPU's local products, then panel by
  // panel (round by round) the transfers and the products of those who received them.
  std::vector<std::size_t> next(G(gpus), 0);  // each GPU's next step
  const auto enqueue_local = [&]() -> Status {
    for (int g = 0; g < gpus; ++g)
      for (; next[G(g)] < steps[G(g)].size(); ++next[G(g)]) {
        const Step& step = steps[G(g)][next[G(g)]];
        if (step.receives_a || step.receives_b) break;
        GEMMLAB_TRY(enqueue_product(g, step));
      }
    return Status::ok();
  };
  for (std::size_t r = 0; r < rounds.size() && copy_engines; ++r) {
    GEMMLAB_TRY(enqueue_gather(r));
    if (r == 0) GEMMLAB_TRY(enqueue_local());
    for (int g = 0; g < gpus; ++g)
      while (next[G(g)] < steps[G(g)].size() && round_of[steps[G(g)][next[G(g)]].panel] == r)
        GEMMLAB_TRY(enqueue_product(g, steps[G(g)][next[G(g)]++]));
  }
  for (std::size_t t = 0; t < panels && !copy_engines; ++t) {
    GEMMLAB_TRY(enqueue_broadcasts(t));
    if (t == 0) GEMMLAB_TRY(enqueue_local());
    for (int g = 0; g < gpus; ++g)
      if (next[G(g)] < steps[G(g)].size() && steps[G(g)][next[G(g)]].panel == t)
        GEMMLAB_TRY(enqueue_product(g, steps[G(g)][next[G(g)]++]));
  }
  return events.end(call, run, [&](int g, std::size_t t) {
    const Step& step = received_by_panel[G(g)][t];
    return copy_engines ? (b_moves ? plan.panels[t].b_root : plan.panels[t].a_root) != g
                        : step.receives_a || step.receives_b;
  });
}

}  // namespace cuda
}  // namespace gemmlab
