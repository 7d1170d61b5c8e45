// The distributed job (gemmlab bench --gpus N, or --devices LIST): one GEMM spread over the
// GPUs of one host (gemmlab/distributed.hpp), measured against the same rung on one GPU. Per
// shape, in one run and from the same random values:
//   single_gpu  the in-core rung on the first GPU, device operands: t1, the scaling baseline;
//   device      gemm_distributed() on operands already cut over the GPUs, per decomposition
//               (rows, summa; run once where both choose the same grid): strong scaling,
//               efficiency t1 / (P tP); and, for square shapes, weak scaling on a problem with
//               P times the rows (each GPU keeps the single-GPU problem's work), t1(m) / tP(Pm);
//   host        gemm_distributed_host() on page-locked host operands, each GPU a block of C
//               out of core, beside cublasXt over the same P GPUs at each blockDim (f32 only).
// Every run is checked at a sample of C against float64 dot products, and C (NaN where beta = 0)
// scanned for an element left unwritten. A shape whose operands do not fit the host, or whose
// blocks do not fit a GPU, is recorded as skipped with the reason, before anything is allocated.
// The job runs in distributed.cpp, each kind of run in distributed_runs.cpp (distributed_runs.hpp),
// the report in distributed_report.cpp.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/harness.hpp"
#include "bench/out_of_core.hpp"
#include "bench/report.hpp"
#include "gemmlab/distributed.hpp"
#include "gemmlab/distribution.hpp"

namespace gemmlab::bench {

// Where the operands start: already cut over the GPUs, or whole in host memory.
enum class Placement : std::uint8_t { Device, Host };
std::string_view to_string(Placement placement);                // "device" | "host"
std::optional<Placement> parse_placement(std::string_view text);  // as to_string writes

// The JSON's "command" for the job (scripts/distributed.py reads it).
inline constexpr std::string_view kDistributedCommand = "bench --distributed";

struct DistributedJob {
  std::vector<int> devices;  // CUDA ordinals, distinct; P = devices.size(); the first is the anchor's
  std::vector<Decomposition> decompositions = {Decomposition::RowBlocks, Decomposition::Summa};
  std::vector<Placement> placements = {Placement::Device, Placement::Host};
  // The rung of every GPU's products and of the single-GPU anchor ("auto": the library's
  // choice for the dtype); Options::config configures a named one.
  std::string variant = "auto";
  // cublasXt blockDims over all P GPUs (0: a fresh handle's default); float32 only.
  std::vector<int> xt_block_dims = {0, 2048, 4096, 8192, 16384};
  // The single-GPU anchor, weak scaling and cublasXt. Off (explain --distributed): the
  // distributed runs and their models alone.
  bool anchors = true;
  // The most each GPU may use for panel buffers and the rung's workspace (0: what it has free).
  std::uint64_t device_memory_limit = 0;
  // DistributedOptions::broadcast_ctas: NCCL's blocks, and the SMs the products leave them.
  int broadcast_ctas = kDefaultBroadcastCtas;
  PanelTransport transport = PanelTransport::CopyEngines;  // DistributedOptions::transport
  DistributedCut cut = DistributedCut::Stripe;             // DistributedOptions::cut
  // DistributedOptions::panel_width (0: the model's choice).
  std::int64_t panel_width = 0;
};

// 8192, 16384 and 32768 squares and the odd 16383 x 16385 x 4097.
std::vector<Shape> default_distributed_shapes();

// The link between the GPUs as measured before the first shape (bytes per second; 0: not
// measured): copy-engine copies between the first two GPUs, one way and both ways at once;
// NCCL's broadcast and all-gather over all P as bus bandwidth; the broadcast's algorithm
// bandwidth (bytes of the buffer over its time), which the model takes as each GPU's receive rate.
struct PeerLink {
  std::uint64_t bytes = 0;  // of each timed transfer
  int gpus = 0;
  double copy = 0, copy_both = 0;
  double broadcast_bus = 0, all_gather_bus = 0;
  double broadcast_algorithm = 0;
};

// What a distributed job's record adds to its Record.
struct DistributedFigures {
  std::string mode;     // "single_gpu", "device", "host" or "cublasxt"
  std::string scaling;  // device: "strong" or "weak"
  std::vector<int> devices;
  std::optional<Decomposition> decomposition;  // device
  // Decompositions asked for whose grid is this record's (the same schedule): run once, here.
  std::vector<Decomposition> same_grid;
  ProcessGrid grid;  // device and host: how C is cut over the GPUs
  // device: the plan at the rates measured in this run (the one the last timed call ran).
  DistributedPlan plan;
  bool planned = false;
  std::string local_variant, local_config;  // the rung of the products (single_gpu: its own)
  // device: the rates the plan was made at, as the job measured them: flops_per_second is the
  // rung's rate on one GPU's largest block of C with all of K, link_bytes_per_second what NCCL's
  // broadcast delivered to each GPU; 0 where not measured (the library then assumes nominal ones).
  DistributedRates rates;
  // device: per GPU, in rank order, medians over the timed calls.
  std::vector<double> bytes_received;
  std::vector<double> wait_seconds;
  std::optional<PanelTransport> transport;  // device: how the panels moved
  std::vector<double> seconds;
  std::vector<OutOfCorePlan> host_plans;  // host: each GPU's out-of-core plan, in rank order
  int block_dim = 0;                      // cublasxt
  bool default_block_dim = false;         // cublasxt
  // The single-GPU anchor of the shape (weak: of the shape of one GPU's share) and the efficiency.
  std::optional<double> t1_ms;
  Shape t1_shape{0, 0, 0};
  std::string t1_variant;
  std::optional<double> efficiency;  // strong: t1 / (P tP); weak: t1(m) / tP(P m)
  // host: against the fastest cublasXt of the shape.
  std::optional<double> ratio_to_best_xt;
  int best_xt_block_dim = 0;
};

struct DistributedResults {
  DistributedJob job;  // as run
  std::vector<Record> records;
  std::vector<DistributedFigures> figures;  // one per record, in the same order
  std::vector<int> devices;
  std::optional<PeerLink> peer_link;  // P >= 2
  std::optional<HostLink> host_link;  // host placement
  std::string nccl_version;           // empty without NCCL
};

// Runs the job on `executor`, a CUDA executor on job.devices[0]. InvalidValue for a bad job
// (no devices, --pad, an ordinal past the last visible GPU); NotSupported where the build or
// the machine cannot run it (no CUDA, no NCCL for device placement, GPUs without peer access).
// A shape that does not fit is not an error: its records say skipped, and why. A run that
// fails (a collective timing out, a failed check) is recorded as such; the job goes on.
Status run_distributed(const Options& options, const DistributedJob& job, Executor& executor,
                       DistributedResults& out);

// The report's JSON (to_json's, with "peer_link", "distributed" and each result's "distributed")
// and table (format_table's, with each record's plan and model under it).
nlohmann::json distributed_json(const DistributedResults& results, const RunContext& context);
std::string format_distributed_table(const DistributedResults& results, const RunContext& context);

// What a shape needs, for the checks before anything is allocated and for --dry-run: the
// page-locked host operands (A, B and C in their storage types), and each GPU's blocks of A, B
// and C under a decomposition (InvalidValue where the grid cannot be made, e.g. m < P).
std::uint64_t distributed_host_bytes(const Options& options, const Shape& shape);
Status distributed_block_bytes(const Options& options, const Shape& shape, Decomposition decomposition, int gpus,
                               std::vector<std::uint64_t>& per_gpu);

}  // namespace gemmlab::bench
