// The README's commands, walked as a new user would run them, so they cannot drift.
//
// Every ```sh block of README.md is read line by line (comments dropped, `a && b` split):
// - `scripts/NAME ...`: the script exists and is executable.
// - `build/gemmlab ...`: runs from the repository root against the program under test, with
//   `--dry-run` added to bench, verify and explain (they can run for minutes); it must exit
//   0, or 1 saying there is no CUDA device or backend where the command needs a GPU
//   (`--backend cuda`, `device`, `mem` without `--list`) and none is here.
// - `cmake ...`, `ctest ...`: what CI itself runs (.ci/run); not run again.
// - anything else fails the walk: a new kind of command needs a rule here.
// A block right after the line `<!-- readme-walk: run -->` runs as written, every command in
// order, in a fresh folder (so examples write new files, never committed ones).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli_test.hpp"

#ifndef GEMMLAB_SOURCE_DIR
#error "GEMMLAB_SOURCE_DIR is set by tests/CMakeLists.txt"
#endif

namespace gemmlab::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = GEMMLAB_SOURCE_DIR;
constexpr const char* kRunMarker = "<!-- readme-walk: run -->";

struct Block {
  bool run = false;
  int line = 0;  // of the opening fence
  std::vector<std::string> commands;
};

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

std::vector<Block> shell_blocks() {
  std::ifstream in(kRoot / "README.md");
  std::vector<Block> blocks;
  std::string line, previous;
  int number = 0;
  bool inside = false;
  while (std::getline(in, line)) {
    ++number;
    if (!inside && line == "```sh") {
      inside = true;
      blocks.push_back({trim(previous) == kRunMarker, number, {}});
    } else if (inside && line == "```") {
      inside = false;
    } else if (inside) {
      if (const auto hash = line.find(" #"); hash != std::string::npos) line = line.substr(0, hash);
      for (std::size_t start = 0;;) {
        const std::size_t split = line.find("&&", start);
        const std::string command = trim(line.substr(start, split == std::string::npos ? split : split - start));
        if (!command.empty()) blocks.back().commands.push_back(command);
        if (split == std::string::npos) break;
        start = split + 2;
      }
    }
    if (!trim(line).empty()) previous = line;
  }
  return blocks;
}

std::string first_word(const std::string& command) { return command.substr(0, command.find(' ')); }
bool has_word(const std::string& command, const std::string& word) {
  return (" " + command + " ").find(" " + word + " ") != std::string::npos;
}

// `command` as /bin/sh runs it in `folder`, with build/gemmlab and scripts/ resolved.
ProgramRun run_in(const fs::path& folder, std::string command) {
  const std::string program = "build/gemmlab";
  if (command.rfind(program, 0) == 0) command = shell_quote(GEMMLAB_EXE) + command.substr(program.size());
  else if (command.rfind("scripts/", 0) == 0) command = shell_quote((kRoot / "scripts").string()) + command.substr(7);
  return run_program("/bin/sh", {"-c", "cd " + shell_quote(folder.string()) + " && " + command});
}

bool needs_gpu(const std::string& command) {
  const std::string sub = command.substr(command.find(' ') + 1);
  return command.find("--backend cuda") != std::string::npos || sub.rfind("device", 0) == 0 || (sub.rfind("mem", 0) == 0 && !has_word(command, "--list"));
}

TEST(Readme, HasCommandsToWalk) {
  const std::vector<Block> blocks = shell_blocks();
  ASSERT_GE(blocks.size(), 4u);
  int run = 0;
  for (const Block& b : blocks) run += b.run ? 1 : 0;
  EXPECT_GE(run, 1) << "no block marked " << kRunMarker;
}

TEST(Readme, EveryCommandRunsAsWritten) {
  for (const Block& block : shell_blocks()) {
    SCOPED_TRACE("README.md block at line " + std::to_string(block.line));
    const ScratchDir scratch;
    const fs::path folder = block.run ? scratch.path() : kRoot;
    for (const std::string& command : block.commands) {
      SCOPED_TRACE(command);
      const std::string word = first_word(command);
      if (word == "cmake" || word == "ctest") continue;  // CI's own commands (.ci/run)
      if (word.rfind("scripts/", 0) == 0) {
        struct stat info {};
        ASSERT_EQ(::stat((kRoot / word).c_str(), &info), 0) << word << " does not exist";
        EXPECT_TRUE(info.st_mode & S_IXUSR) << word << " is not executable";
        if (!block.run) continue;
        const ProgramRun run = run_in(folder, command);
        if (run.exit_code != 0 && run.err.find("no python3 with matplotlib") != std::string::npos) {
          std::cout << "[ readme   ] " << command << ": no matplotlib here (scripts/install-deps.sh installs it)\n";
          continue;
        }
        EXPECT_EQ(run.exit_code, 0) << explain(run);
        continue;
      }
      ASSERT_EQ(word, "build/gemmlab") << "the README walk has no rule for '" << word << "' (tests/cli/test_cli_readme.cpp)";
      std::string line = command;
      const std::string sub = first_word(command.substr(word.size() + 1));
      const bool long_running = sub == "bench" || sub == "verify" || sub == "explain";
      if (!block.run && long_running) line += " --dry-run";
      const ProgramRun run = run_in(folder, line);
      if (run.exit_code == 1 && needs_gpu(command) &&
          (run.err.find("no CUDA device") != std::string::npos || run.err.find("no CUDA backend") != std::string::npos ||
           run.err.find("not in this build") != std::string::npos))
        continue;  // a GPU command on a machine without one: said so
      if (sub == "compare" && block.run) {
        // Two runs of one machine may differ beyond the threshold: 1 is a verdict, not an error.
        EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 1) << explain(run);
        EXPECT_NE(run.out.find("naive"), std::string::npos) << explain(run);
        continue;
      }
      EXPECT_EQ(run.exit_code, 0) << explain(run);
    }
  }
}

}  // namespace
}  // namespace gemmlab::testing
