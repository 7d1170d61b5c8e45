// GPU <-> GPU, the level past host <-> device (transfer.cu): copies between two GPUs by the copy
// engines (cudaMemcpyPeerAsync), one way and both ways at once, and NCCL's broadcast and
// all-gather over every visible GPU as bus bandwidth (nccl-tests' convention), by size. The
// distributed GEMM broadcasts panels over this link, so these are its ceilings, as the host
// link's rates are the out-of-core GEMM's. The measurements and their data checks are
// src/cuda/runtime/peer_link.cpp and src/cuda/nccl/collectives_bandwidth.cpp; this file turns
// them into rows. With one GPU the experiment reports one row, skipped (checked = false), and
// the lab goes on.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "cuda/mem/experiment.hpp"
#include "cuda/nccl/collectives_bandwidth.hpp"
#include "cuda/runtime/device.hpp"

namespace gemmlab::cuda::mem {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kSizes[] = {kMiB, 16 * kMiB, 256 * kMiB, 1024 * kMiB};
// Left free on every GPU beside a size's buffers (two of the size for the copies): NCCL's own
// buffers and whatever else the process holds.
constexpr std::size_t kHeadroom = 1024 * kMiB;

// A row that was not measured: why, in the note; checked = false, so it neither passes nor fails.
MemRow skipped_row(std::string variant, std::size_t bytes, const std::string& why) {
  return make_row(std::move(variant), bytes > 0 ? "bytes" : "", static_cast<long long>(bytes), 0, "skipped: " + why);
}

// The figures time_row fills, from a measurement timed by the NVLink level itself (its events
// are on the GPUs' own streams, not the lab's), and its data check.
MemRow measured_row(const MemContext& ctx, std::string variant, std::size_t param, double bytes,
                    const nvlink::LinkMeasurement& m, std::string note) {
  MemRow row = make_row(std::move(variant), "bytes", static_cast<long long>(param), bytes, std::move(note));
  row.time = m.time;
  row.gbs = row.time.median_ms > 0 ? row.bytes / (row.time.median_ms * 1e-3) * 1e-9 : 0;
  row.ratio_to_copy = ctx.copy_ceiling_gbs > 0 ? row.gbs / ctx.copy_ceiling_gbs : 0;
  row.pct_of_theoretical =
      ctx.facts.theoretical_bandwidth_gbs > 0 ? 100.0 * row.gbs / ctx.facts.theoretical_bandwidth_gbs : 0;
  record_check(row, m.mismatches);
  return row;
}

// The least free device memory among `devices`.
Status least_free_bytes(const std::vector<int>& devices, std::size_t& out) {
  const nvlink::RestoreDevice restore;
  out = std::numeric_limits<std::size_t>::max();
  for (int d : devices) {
    CUDA_CHECK(cudaSetDevice(d));
    std::size_t free = 0, total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free, &total));
    out = std::min(out, free);
  }
  return Status::ok();
}

Status run(MemContext& ctx, std::vector<MemRow>& rows) {
  const int count = device_count();
  if (count < 2) {
    const std::string hidden = visible_devices_note();
    rows.push_back(skipped_row("skipped", 0,
                               fmt::format("needs 2 GPUs; {} visible{}", count, hidden.empty() ? "" : " (" + hidden + ")")));
    return Status::ok();
  }
  // The lab's GPU first (it sends the one-way copies and roots the broadcast), then the others.
  const int first = ctx.facts.ordinal;
  std::vector<int> devices{first};
  for (int d = 0; d < count; ++d)
    if (d != first) devices.push_back(d);
  const int second = devices[1];
  const int gpus = static_cast<int>(devices.size());
  const int reps = std::max(1, ctx.timing.reps);

  std::size_t free = 0;
  GEMMLAB_TRY(least_free_bytes(devices, free));
  std::vector<std::size_t> sizes;
  for (std::size_t bytes : kSizes)
    if (2 * bytes + kHeadroom <= free) sizes.push_back(bytes);

  std::vector<nvlink::PeerCopyMeasurements> copies(sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i)
    GEMMLAB_TRY(nvlink::measure_peer_copies(first, second, sizes[i], reps, copies[i]));
  std::vector<nvlink::CollectiveMeasurements> collectives;
  GEMMLAB_TRY(nvlink::measure_collectives(devices, sizes, reps, collectives));

  std::size_t next = 0;  // the next measured size
  for (std::size_t bytes : kSizes) {
    if (next == sizes.size() || sizes[next] != bytes) {
      rows.push_back(skipped_row("skipped", bytes,
                                 fmt::format("2 x {} MiB and {} MiB to spare do not fit in the {} MiB free on the "
                                             "fullest GPU",
                                             bytes / kMiB, kHeadroom / kMiB, free / kMiB)));
      continue;
    }
    const nvlink::PeerCopyMeasurements& copy = copies[next];
    const nvlink::CollectiveMeasurements& nccl = collectives[next];
    ++next;
    const std::string access =
        copy.peer_access ? "peer access on" : "no peer access: the driver stages the copy through host memory";
    rows.push_back(measured_row(ctx, "peer_copy", bytes, copy.one_way.bytes, copy.one_way,
                                fmt::format("GPU {} to GPU {}, cudaMemcpyPeerAsync on a stream of GPU {}; {}", first,
                                            second, first, access)));
    rows.push_back(measured_row(ctx, "peer_copy_both", bytes, copy.both_ways.bytes, copy.both_ways,
                                fmt::format("GPU {} to GPU {} and back at once, a stream on each; each direction's "
                                            "bytes over the time of the pair: its rate while the other runs; {}",
                                            first, second, access)));
    if (!nccl.measured) {
      for (const char* variant : {"nccl_broadcast_bus", "nccl_all_gather_bus"})
        rows.push_back(skipped_row(variant, bytes, "this build has no NCCL"));
      continue;
    }
    rows.push_back(measured_row(ctx, "nccl_broadcast_bus", bytes, nccl.broadcast.bytes, nccl.broadcast,
                                fmt::format("NCCL broadcast from GPU {} to {} GPUs, in place; bus bandwidth = "
                                            "algorithm bandwidth (nccl-tests)",
                                            first, gpus)));
    // Bytes counted x (P - 1) / P, so that GB/s is the bus bandwidth.
    rows.push_back(measured_row(ctx, "nccl_all_gather_bus", bytes, nccl.all_gather.bytes * nccl.all_gather.bus_factor,
                                nccl.all_gather,
                                fmt::format("NCCL all-gather over {} GPUs, in place, {} bytes from each; bytes = the "
                                            "gathered {} x ({} - 1) / {}: bus bandwidth (nccl-tests); algorithm "
                                            "bandwidth {:.1f} GB/s",
                                            gpus, nccl.share, nccl.share * static_cast<std::size_t>(gpus), gpus, gpus,
                                            nccl.all_gather.rate() * 1e-9)));
  }
  return Status::ok();
}

}  // namespace

Experiment nvlink_experiment() {
  return {"nvlink",
          "GPU <-> GPU: copy-engine copies one way and both ways at once, NCCL broadcast and all-gather bus "
          "bandwidth, by size (needs 2 GPUs)",
          "the level past the host link: the distributed GEMM's panels cross it; the link is full duplex, so a "
          "copy each way at once keeps most of each one's rate; NCCL's bus bandwidth is what a broadcast or an "
          "all-gather over every GPU sustains; with one GPU the experiment is skipped, and says so",
          run};
}

}  // namespace gemmlab::cuda::mem
