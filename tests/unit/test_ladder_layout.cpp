// One numbering: a rung's file is src/<backend>/ladder/NN_*.{cpp,cu}, its header comment
// says "Rung NN (<backend>)", its Variant carries rung NN, and the registry lists the rungs
// in that order with the anchors last. Adding a rung is its file and its registry line; this
// test catches a number that drifts between them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "gemmlab/registry.hpp"

#ifndef GEMMLAB_SOURCE_DIR
#error "GEMMLAB_SOURCE_DIR (the repository root) is set by tests/CMakeLists.txt"
#endif

namespace gemmlab {
namespace {

namespace fs = std::filesystem;

// Rung number -> file name, for every numbered file of one backend's ladder folder.
std::map<int, std::string> numbered_files(const std::string& backend) {
  std::map<int, std::string> files;
  const std::regex numbered(R"((\d\d)_\w+\.(cpp|cu))");
  for (const auto& entry : fs::directory_iterator(fs::path(GEMMLAB_SOURCE_DIR) / "src" / backend / "ladder")) {
    const std::string name = entry.path().filename().string();
    std::smatch m;
    if (!std::regex_match(name, m, numbered)) continue;
    EXPECT_TRUE(files.emplace(std::stoi(m[1].str()), name).second) << "two files numbered " << m[1] << ": " << name;
  }
  return files;
}

class LadderLayout : public ::testing::TestWithParam<Backend> {};

TEST_P(LadderLayout, FileNumbersHeadersAndTheRegistryAgree) {
  const std::string backend(to_string(GetParam()));
  const std::map<int, std::string> files = numbered_files(backend);
  ASSERT_FALSE(files.empty()) << "no numbered rung files under src/" << backend << "/ladder";
  int expected = 1;
  for (const auto& [number, name] : files) {
    EXPECT_EQ(number, expected++) << name << ": the numbers run 01, 02, ... without a gap";
    std::ifstream file(fs::path(GEMMLAB_SOURCE_DIR) / "src" / backend / "ladder" / name);
    std::string first_line;
    std::getline(file, first_line);
    const std::string header = "// Rung " + std::to_string(number) + " (" + backend + ")";
    EXPECT_EQ(first_line.rfind(header, 0), 0u) << name << " starts with '" << first_line << "', not '" << header << "'";
  }

  const auto registered = variants(GetParam());
  if (registered.empty()) GTEST_SKIP() << "SKIPPED: this build has no " << backend << " rungs";
  std::set<int> numbers;
  int last = 0;
  bool anchors_began = false;
  for (const Variant& v : registered) {
    if (v.anchor) {
      EXPECT_EQ(v.rung, 0) << v.name << ": an anchor has no rung number";
      anchors_began = true;
      continue;
    }
    EXPECT_FALSE(anchors_began) << v.name << " stands after an anchor: the anchors come last";
    EXPECT_TRUE(files.count(v.rung)) << v.name << " says rung " << v.rung << ", which has no file";
    EXPECT_GE(v.rung, last) << v.name << " is listed out of rung order";
    last = v.rung;
    numbers.insert(v.rung);
  }
  for (const auto& [number, name] : files) EXPECT_TRUE(numbers.count(number)) << name << " registers no variant";
}

INSTANTIATE_TEST_SUITE_P(Backends, LadderLayout, ::testing::Values(Backend::Cpu, Backend::Cuda),
                         [](const ::testing::TestParamInfo<Backend>& param) {
                           return std::string(to_string(param.param));
                         });

}  // namespace
}  // namespace gemmlab
