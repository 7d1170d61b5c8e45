// gemmlab list: the registered rungs, for people and as JSON.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <set>
#include <string>

#include "cli/cli_test.hpp"

namespace gemmlab::testing {
namespace {

// The rungs every build has: the first rung and the two OpenBLAS anchors.
constexpr const char* kFoundationRungs[] = {"naive", "openblas_sgemm_1t", "openblas_sgemm"};

TEST(CliList, ExitsZeroAndNamesEveryRung) {
  const ProgramRun run = gemmlab({"list"});
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  EXPECT_TRUE(run.err.empty()) << explain(run);
  for (const char* name : kFoundationRungs)
    EXPECT_NE(run.out.find(std::string(" ") + name + " "), std::string::npos) << name << "\n" << explain(run);
  // Every rung the JSON listing knows has a row in the table, after its backend.
  for (const std::string& name : listed_cpu_variants())
    EXPECT_NE(run.out.find("cpu    " + name + " "), std::string::npos) << name << "\n" << explain(run);
}

TEST(CliList, JsonListsEveryRungWithItsFields) {
  const ProgramRun run = gemmlab({"list", "--format", "json"});
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  const nlohmann::json doc = nlohmann::json::parse(run.out);
  ASSERT_TRUE(doc.is_array());
  std::set<std::string> cpu_names;
  int anchors = 0;
  for (const auto& v : doc) {
    for (const char* field : {"backend", "name", "input", "compute", "output", "technique", "config"})
      EXPECT_TRUE(v.at(field).is_string()) << field << " in " << v.dump();
    EXPECT_TRUE(v.at("anchor").is_boolean());
    EXPECT_TRUE(v.at("threads").is_number_integer());
    EXPECT_FALSE(v.at("technique").get<std::string>().empty()) << v.dump();
    const std::string backend = v.at("backend").get<std::string>();
    EXPECT_TRUE(backend == "cpu" || backend == "cuda") << backend;
    if (backend != "cpu") continue;
    EXPECT_TRUE(cpu_names.insert(v.at("name").get<std::string>()).second) << "duplicate " << v.dump();
    if (v.at("anchor").get<bool>()) ++anchors;
  }
  for (const char* name : kFoundationRungs) EXPECT_EQ(cpu_names.count(name), 1u) << name;
  EXPECT_GE(anchors, 1);
}

TEST(CliList, ConfigsListEachRungsNamedConfigurations) {
  const ProgramRun json = gemmlab({"list", "--backend", "cpu", "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << explain(json);
  const ProgramRun table = gemmlab({"list", "--backend", "cpu", "--configs"});
  ASSERT_EQ(table.exit_code, 0) << explain(table);
  int configurable = 0;
  for (const auto& v : nlohmann::json::parse(json.out)) {
    const auto& configs = v.at("configurations");
    ASSERT_TRUE(configs.is_array()) << v.dump();
    if (configs.empty()) continue;
    ++configurable;
    // The default first; each named with a description, and each in the table.
    for (const auto& c : configs) {
      EXPECT_FALSE(c.at("name").get<std::string>().empty()) << v.dump();
      EXPECT_FALSE(c.at("description").get<std::string>().empty()) << v.dump();
      EXPECT_NE(table.out.find(c.at("name").get<std::string>()), std::string::npos) << c.dump();
    }
    EXPECT_NE(table.out.find(configs.front().at("name").get<std::string>() + " "), std::string::npos);
  }
  EXPECT_GE(configurable, 1) << "no CPU rung has named configurations";
  EXPECT_NE(table.out.find("(default)"), std::string::npos) << explain(table);
}

TEST(CliList, BackendFilterKeepsOnlyThatBackend) {
  const ProgramRun run = gemmlab({"list", "--backend", "cpu", "--format", "json"});
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  const nlohmann::json doc = nlohmann::json::parse(run.out);
  ASSERT_FALSE(doc.empty());
  for (const auto& v : doc) EXPECT_EQ(v.at("backend"), "cpu") << v.dump();
}

}  // namespace
}  // namespace gemmlab::testing
