// Output for people (a table) and for machines (CSV, and JSON with a schema version).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/harness.hpp"
#include "bench/memory_plan.hpp"
#include "bench/out_of_core.hpp"

namespace gemmlab::bench {

// Version of the JSON layout below; raise it when a field changes meaning or goes away.
// 2: every result and the settings carry "dtype" (f32, tf32, bf16, f16), and
// ratio_to_anchor is against the anchor of the same dtype; version 1 was f32 throughout.
// 3: "run" (date, command line, host); settings only where they applied (l2_flush on a GPU
// only), max_seconds, max_spread, interleaved; min_reps is honoured (no silent floor of 3);
// each timed result carries "noisy", its "warnings", time_ms.capped and, with --samples,
// time_ms.samples.
// Within 3, added: settings.device_memory_limit where given; "memory" (what each shape was
// planned to need and what was available); verification.mode ("full" or "sampled") with
// verification.samples and verification.note for a sampled check; for the out-of-core job
// ("command": "bench --out-of-core"), "host_link" and each result's "out_of_core"; for the
// distributed job ("command": "bench --distributed"), "nccl_version", "peer_link", its settings
// (gpus, devices, decompositions, placements, broadcast_ctas) and each result's "distributed";
// "out_dtype" (how C was stored: f32, or bf16 or f16 beside that dtype) in the settings and
// every result, absent from older files, which stored C in f32; dtypes e4m3 and e5m2, whose
// results carry "scale_a" and "scale_b" (the per-tensor scales A and B were quantised with).
inline constexpr int kSchemaVersion = 3;

struct RunContext {
  std::string command;  // "bench" or "verify"
  std::string backend;
  std::vector<std::pair<std::string, std::string>> device;  // Executor::describe()
  Options options;
  std::string command_line;  // as typed, quoted for a shell
  std::string date;          // when the run started, ISO 8601 UTC
  std::string host;          // the machine's name
  bool samples = false;      // every repetition's time in the JSON
  std::optional<MemoryCheck> memory;  // the plan the run was checked against
  std::optional<HostLink> host_link;  // the out-of-core job's measured host link
};

// Now, as ISO 8601 UTC (2025-01-31T12:00:00Z).
std::string utc_now();

std::string format_table(const std::vector<Record>& records, const RunContext& context);
std::string format_csv(const std::vector<Record>& records);
nlohmann::json to_json(const std::vector<Record>& records, const RunContext& context);

}  // namespace gemmlab::bench
