// Output of gemmlab device, mem and explain: a table for people, JSON (and CSV for mem)
// for machines, with the same schema version and build facts as bench's.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "bench/explain.hpp"
#include "cuda/lab.hpp"

namespace gemmlab::bench {

// Every field of DeviceFacts as (key, text).
std::vector<std::pair<std::string, std::string>> device_fields(const cuda::DeviceFacts& facts);

std::string format_device_table(const cuda::DeviceFacts& facts, const cuda::Ceilings& ceilings);
nlohmann::json device_json(const cuda::DeviceFacts& facts, const cuda::Ceilings& ceilings);
// gemmlab device --all: one row per visible device (facts and computed peaks, nothing
// measured); JSON: an array with one object per device, as "device" in device_json.
std::string format_devices_table(const std::vector<cuda::DeviceFacts>& all);
nlohmann::json devices_json(const std::vector<cuda::DeviceFacts>& all);

std::string format_mem_table(const cuda::MemReport& report);
std::string format_mem_csv(const cuda::MemReport& report);
nlohmann::json mem_json(const cuda::MemReport& report);

std::string format_explain_table(const std::vector<Explanation>& explanations, const ExplainContext& context);
nlohmann::json explain_json(const std::vector<Explanation>& explanations, const ExplainContext& context);
// One explanation as JSON.
nlohmann::json explanation_json(const Explanation& e);
// bench --explain: each result of a bench document gets its "explain", the document the
// device and the ceilings the bounds came from. `explanations` follow the results' order.
void attach_explanations(nlohmann::json& bench_doc, const std::vector<Explanation>& explanations,
                         const ExplainContext& context);

}  // namespace gemmlab::bench
