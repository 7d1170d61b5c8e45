// What the end-to-end tests share: running the gemmlab program built with them.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "support/run_program.hpp"

#ifndef GEMMLAB_EXE
#error "GEMMLAB_EXE (the path of the gemmlab program) is set by tests/CMakeLists.txt"
#endif

namespace gemmlab::testing {

inline ProgramRun gemmlab(const std::vector<std::string>& args) { return run_program(GEMMLAB_EXE, args); }

// For failure messages: what ran and what it said.
inline std::string explain(const ProgramRun& run) {
  constexpr std::size_t kStdoutShown = 2000;
  std::string text = "command: ";
  text += run.command;
  text += "\nexit code: ";
  text += std::to_string(run.exit_code);
  text += "\nstderr:\n";
  text += run.err;
  text += "\nstdout (first 2000 characters):\n";
  text += run.out.substr(0, kStdoutShown);
  return text;
}

// Settings that keep a bench run well under a second: tiny sizes, one repetition.
inline std::vector<std::string> quick(std::vector<std::string> args) {
  for (const char* arg : {"--reps", "1", "--warmup", "0", "--min-time", "0"}) args.emplace_back(arg);
  return args;
}

// The CPU rungs, in ladder order, as `gemmlab list` reports them.
inline std::vector<std::string> listed_cpu_variants() {
  const ProgramRun run = gemmlab({"list", "--backend", "cpu", "--format", "json"});
  EXPECT_EQ(run.exit_code, 0) << explain(run);
  std::vector<std::string> names;
  for (const auto& v : nlohmann::json::parse(run.out)) names.push_back(v.at("name").get<std::string>());
  return names;
}

}  // namespace gemmlab::testing
