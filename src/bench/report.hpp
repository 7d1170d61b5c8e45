// Output for people (a table) and for machines (CSV, and JSON with a schema version).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "bench/harness.hpp"

namespace gemmlab::bench {

// Version of the JSON layout below; raise it when a field changes meaning or goes away.
// 2: every result and the settings carry "dtype" (f32, tf32, bf16, f16), and
// ratio_to_anchor is against the anchor of the same dtype; version 1 was f32 throughout.
inline constexpr int kSchemaVersion = 2;

struct RunContext {
  std::string command;  // "bench" or "verify"
  std::string backend;
  std::vector<std::pair<std::string, std::string>> device;  // Executor::describe()
  Options options;
};

std::string format_table(const std::vector<Record>& records, const RunContext& context);
std::string format_csv(const std::vector<Record>& records);
nlohmann::json to_json(const std::vector<Record>& records, const RunContext& context);

}  // namespace gemmlab::bench
