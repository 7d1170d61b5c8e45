// Distributed GEMM on the GPUs of one host: the level of the memory hierarchy past one GPU's
// DRAM. C = alpha op(A) op(B) + beta C with the matrices cut in blocks over P GPUs
// (gemmlab/distribution.hpp says how), panels of K broadcast over NCCL on streams of their
// own while the GPUs multiply the panel before (SUMMA; on a P x 1 grid only B moves). Each
// GPU's products run on the best in-core rung for the dtype.
//
// One process drives every GPU of the group from the calling thread. Communicators are NCCL's,
// made once per group (and per grid) and destroyed with it; gemmlab sets NCCL_NVLS_ENABLE=0
// before it makes any (NVLink SHARP multicast stays off). A build without NCCL has no
// distributed GEMM over device operands (gemm_distributed() says so, as distributed_available()
// does); the host-operand form needs CUDA only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gemmlab/context.hpp"
#include "gemmlab/distribution.hpp"
#include "gemmlab/gemm.hpp"
#include "gemmlab/out_of_core.hpp"
#include "gemmlab/problem.hpp"
#include "gemmlab/status.hpp"

namespace gemmlab {

// Whether this build has the distributed GEMM on device operands (CUDA and NCCL); `why` says
// what is missing.
bool distributed_available(std::string* why = nullptr);
// "2.28.9": the NCCL this build runs on (empty without NCCL).
std::string nccl_version();

struct DeviceGroupOptions {
  // CUDA ordinals, distinct, each visible; empty: every visible device.
  std::vector<int> devices;
  // A collective that has not completed after this long aborts every communicator of the
  // group and the call fails with Timeout naming the GPUs still waiting (no hang).
  double collective_timeout_seconds = 300;
  // Refuse a group with a pair of GPUs that cannot reach each other's memory (NCCL would fall
  // back to copies through the host). The host-operand form moves nothing between GPUs.
  bool require_peer_access = true;
};

struct DeviceGroupState;  // communicators, streams and panel buffers (src/cuda/nccl/)

// The GPUs a distributed GEMM runs on: a Context per GPU (its device and stream, on which that
// GPU's products run) and what the schedule keeps between calls. Creating one checks every
// GPU exists and every pair has peer access. One thread uses a group at a time.
class DeviceGroup {
 public:
  // InvalidValue for an ordinal out of range or repeated (naming it and what is visible);
  // NotSupported without CUDA, or for a pair of GPUs without peer access (naming both).
  // Communicators are made by the first gemm_distributed() that needs them.
  static Status create(const DeviceGroupOptions& options, std::unique_ptr<DeviceGroup>& out);
  ~DeviceGroup();  // destroys every communicator (aborts those a failed call left unfinished)
  DeviceGroup(const DeviceGroup&) = delete;
  DeviceGroup& operator=(const DeviceGroup&) = delete;

  int size() const { return static_cast<int>(contexts_.size()); }
  int device(int rank) const { return devices_[static_cast<std::size_t>(rank)]; }
  const std::vector<int>& devices() const { return devices_; }
  Context& context(int rank) { return *contexts_[static_cast<std::size_t>(rank)]; }
  double collective_timeout_seconds() const { return timeout_; }
  DeviceGroupState& state() { return *state_; }

 private:
  DeviceGroup() = default;
  std::vector<int> devices_;
  std::vector<std::unique_ptr<Context>> contexts_;
  std::unique_ptr<DeviceGroupState, void (*)(DeviceGroupState*)> state_{nullptr, nullptr};
  double timeout_ = 0;
};

// The problem with its operands already on the GPUs, cut as the plan's grid cuts them
// (decomposition_grid() and local_blocks()): GPU g holds
//   a[g]  op(A)'s rows x a_k block  (stored a_k x rows for Op::T),
//   b[g]  op(B)'s b_k x cols block  (stored cols x b_k for Op::T),
//   c[g]  C's rows x cols block,
// each a Matrix in that GPU's memory with any layout and leading dimension (an empty block's
// data may be null). All a[g] share one dtype, all b[g] another, all c[g] a third.
struct DistributedGemmProblem {
  std::int64_t m = 0, n = 0, k = 0;
  Op op_a = Op::N, op_b = Op::N;
  double alpha = 1.0, beta = 0.0;
  DType compute = DType::F32;
  Decomposition decomposition = Decomposition::Summa;
  std::vector<Matrix> a, b, c;
  std::string describe() const;  // "16384x16384x16384 NN over 2 GPUs (rows)"
};

enum class Operand : std::uint8_t { A, B, C };

// A few blocks move a panel faster than the products consume it (NVLink's bandwidth per block
// is high) while the products lose few SMs.
inline constexpr int kDefaultBroadcastCtas = 4;

// How panels move between the GPUs.
enum class PanelTransport : std::uint8_t {
  // NCCL's all-gather on the GPUs' copy engines (its zero-CTA policy, panels in symmetric
  // windows from ncclMemAlloc): each round every GPU sends the next panel it holds and
  // receives the others', and the products keep every SM. Where one operand moves (a grid of
  // one row or one column) and NCCL has it (2.28 and later); elsewhere Broadcasts.
  CopyEngines,
  // ncclBroadcast from each panel's root, NCCL's kernels on broadcast_ctas blocks.
  Broadcasts,
};
std::string_view to_string(PanelTransport transport);                      // "copy-engines" | "broadcasts"
std::optional<PanelTransport> parse_panel_transport(std::string_view text);  // as to_string writes

// Device memory for a distributed problem's blocks, owned: each GPU's block of A, B and C as
// the problem's grid places them, dense, with the layout and dtype of the whole host matrices
// it is made for; and copies of those whole matrices to and from the blocks. For tests, the
// bench and callers whose data starts on the host.
class DistributedBuffers {
 public:
  DistributedBuffers() = default;
  ~DistributedBuffers();
  DistributedBuffers(DistributedBuffers&&) noexcept;
  DistributedBuffers& operator=(DistributedBuffers&&) noexcept;

  // Allocates every GPU's blocks for `problem`'s m, n, k, ops and decomposition, shaped like
  // host_a (op(A)'s storage, m x k or k x m), host_b and host_c (m x n), whose data is not
  // read; sets problem.a, b and c to the blocks. OutOfMemory names the GPU and the bytes.
  static Status allocate(DeviceGroup& group, DistributedGemmProblem& problem, const Matrix& host_a,
                         const Matrix& host_b, const Matrix& host_c, DistributedBuffers& out);
  // Copies the whole host matrix `whole` (shaped as given to allocate) into the blocks of
  // `which`, or the blocks back into it; blocking.
  Status upload(DeviceGroup& group, const DistributedGemmProblem& problem, Operand which, const Matrix& whole) const;
  Status download(DeviceGroup& group, const DistributedGemmProblem& problem, Operand which,
                  const Matrix& whole) const;
  std::uint64_t bytes(int rank) const;  // the three blocks on GPU `rank`

 private:
  struct Block {
    int device = -1;
    void* data = nullptr;
    std::uint64_t bytes = 0;
  };
  void release();
  std::vector<Block> blocks_;  // rank-major: A, B, C of rank 0, then of rank 1, ...
};

struct DistributedOptions {
  GemmOptions local{};  // the rung of every GPU's panel products ("auto": the fastest for the dtype)
  // The widest panel of K (0: the model's choice under device_memory_limit).
  std::int64_t panel_width = 0;
  // How the work is cut: the Stripe (default) or Slices of C where one operand moves with K the
  // slow dimension of its storage on the copy engines, else KPanels; a panel_width asks for
  // panels, a slice count for slices. The stripe's lead and the slice count are the model's
  // choice. Measured on two H200s (bf16, device operands, one call), the stripe took 16384^3
  // from 0.86 of perfect strong scaling (panels) to 0.91, and weak scaling from 0.88 to 0.94;
  // slices lost 3-8 % to panels at 8192-32768 cubed. A stripe whose buffer (the moving
  // operand whole) does not fit falls back to panels.
  DistributedCut cut = DistributedCut::Stripe;
  // Slices with this many slices of C; InvalidValue where they cannot run. Not with
  // panel_width, nor with cut = Slices and a panel_width.
  std::int64_t slices = 0;
  // The stripe cut with a lead stripe this long (0: none); InvalidValue where it cannot run or
  // leaves no rest. Unset: the model's choice. Not with panel_width or slices.
  std::optional<std::int64_t> stripe_lead;
  // The most each GPU may use for panel buffers and the rung's workspace; 0: what it has free,
  // less a margin for the libraries.
  std::uint64_t device_memory_limit = 0;
  // What the model assumes (0 fields: nominal figures; the bench passes what it measured).
  DistributedRates rates{};
  // Thread blocks NCCL's broadcasts may use (its maxCTAs), and as many SMs the products leave
  // free for them (Context::set_sm_count_target) so that the two run side by side: a
  // persistent product on every SM would hold a broadcast back until it ends. 0: NCCL's own
  // choice and no SMs left free.
  int broadcast_ctas = kDefaultBroadcastCtas;
  PanelTransport transport = PanelTransport::CopyEngines;
};

// What one distributed call ran and how long it waited. Per GPU, in rank order.
struct DistributedRun {
  DistributedPlan plan;
  std::string variant, config;  // the rung of the panel products
  PanelTransport transport = PanelTransport::Broadcasts;  // how the panels moved
  std::vector<double> seconds;  // from the start of the call until the GPU's last product ended
  // The time each GPU's products stream sat waiting for a panel to arrive (GPU events).
  std::vector<double> wait_seconds;
  std::vector<double> bytes_received;  // over NCCL, per GPU
};

// The plan `options` gives `problem` on `group`, without running it. InvalidValue for blocks
// that do not match the grid (naming the GPU and the operand), or a limit that cannot hold
// the narrowest panel.
Status plan_distributed(DeviceGroup& group, const DistributedGemmProblem& problem, const DistributedOptions& options,
                        DistributedPlan& out);

// C <- alpha op(A) op(B) + beta C on the group's GPUs, operands in device memory as
// DistributedGemmProblem places them. Returns when every GPU's block of C is complete.
// A collective that stalls past the group's timeout aborts its communicators: Timeout.
Status gemm_distributed(DeviceGroup& group, const DistributedGemmProblem& problem,
                        const DistributedOptions& options = {}, DistributedRun* run = nullptr);

// The same with A, B and C in host memory: C is cut into grid blocks (process_grid()) and each
// GPU computes its block out of core (gemm_out_of_core(): its rows of A and columns of B stream
// in over its own host link while it multiplies), on a thread per GPU. No operand moves between
// GPUs, so this needs no NCCL. `options` applies to every GPU; `plans`, when given, receives
// each GPU's plan in rank order.
Status gemm_distributed_host(DeviceGroup& group, const GemmProblem& problem, const OutOfCoreOptions& options = {},
                             std::vector<OutOfCorePlan>* plans = nullptr);

}  // namespace gemmlab
