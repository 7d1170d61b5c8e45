// --device on every GPU command and gemmlab device --all, end to end: usage errors anywhere;
// on a machine with GPUs, an ordinal past the last is a usage error naming the device count,
// results record which device ran, and CUDA_VISIBLE_DEVICES decides what is visible (two
// GPUs or more: the second, made the only visible one, is the same board).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "cli/cli_test.hpp"

namespace gemmlab::testing {
namespace {

// gemmlab with environment settings first ("NAME=value"), through env(1).
ProgramRun gemmlab_with_env(const std::vector<std::string>& env, const std::vector<std::string>& args) {
  std::vector<std::string> all = env;
  all.emplace_back(GEMMLAB_EXE);
  all.insert(all.end(), args.begin(), args.end());
  return run_program("/usr/bin/env", all);
}

// Every visible GPU as device --all lists it (empty without a GPU or without CUDA).
nlohmann::json visible_devices() {
  const ProgramRun run = gemmlab({"device", "--all", "--format", "json"});
  if (run.exit_code != 0) return nlohmann::json::array();
  return nlohmann::json::parse(run.out);
}

const std::vector<std::vector<std::string>> kGpuCommands = {
    {"bench", "--backend", "cuda", "--sizes", "64", "--variants", "naive"},
    {"verify", "--backend", "cuda", "--sizes", "64", "--variants", "naive"},
    {"explain", "naive", "--backend", "cuda", "--mnk", "64x64x64"},
    {"mem", "--experiments", "coalescing"},
    {"device"},
};

TEST(CliDevice, EveryGpuCommandTakesDevice) {
  for (std::vector<std::string> args : kGpuCommands) {
    args.insert(args.begin() + 1, {"--device", "0", "--help"});
    const ProgramRun run = gemmlab(args);
    EXPECT_EQ(run.exit_code, 0) << explain(run);
    EXPECT_NE(run.out.find("--device"), std::string::npos) << explain(run);
  }
}

TEST(CliDevice, NegativeOrHugeOrdinalIsUsage) {
  for (const char* bad : {"-1", "1024", "one", ""}) {
    const ProgramRun run = gemmlab({"device", "--device", bad});
    EXPECT_EQ(run.exit_code, 2) << explain(run);
    EXPECT_NE(run.err.find("--device"), std::string::npos) << explain(run);
  }
}

TEST(CliDevice, DeviceOnTheCpuBackendIsUsage) {
  for (const char* command : {"bench", "verify"}) {
    const ProgramRun run = gemmlab({command, "--backend", "cpu", "--device", "1", "--sizes", "8"});
    EXPECT_EQ(run.exit_code, 2) << explain(run);
    EXPECT_NE(run.err.find("--device 1"), std::string::npos) << explain(run);
    EXPECT_NE(run.err.find("cpu backend"), std::string::npos) << explain(run);
  }
  const ProgramRun run = gemmlab({"explain", "naive", "--backend", "cpu", "--device", "0", "--mnk", "8x8x8"});
  EXPECT_EQ(run.exit_code, 2) << explain(run);
}

TEST(CliDevice, AllExcludesDevice) {
  const ProgramRun run = gemmlab({"device", "--all", "--device", "0"});
  EXPECT_EQ(run.exit_code, 2) << explain(run);
  EXPECT_NE(run.err.find("--all"), std::string::npos) << explain(run);
}

TEST(CliDevice, OrdinalPastTheLastNamesTheDeviceCount) {
  const nlohmann::json devices = visible_devices();
  for (std::vector<std::string> args : kGpuCommands) {
    args.insert(args.begin() + 1, {"--device", "7"});
    const ProgramRun run = gemmlab(args);
    EXPECT_TRUE(run.out.empty()) << explain(run);
    if (devices.empty()) {  // no GPU or no CUDA: said as without --device
      EXPECT_EQ(run.exit_code, 1) << explain(run);
      EXPECT_NE(run.err.find("no CUDA"), std::string::npos) << explain(run);
    } else if (devices.size() <= 7) {
      EXPECT_EQ(run.exit_code, 2) << explain(run);
      const std::string count = std::to_string(devices.size()) + " CUDA device";
      EXPECT_NE(run.err.find("--device 7"), std::string::npos) << explain(run);
      EXPECT_NE(run.err.find(count), std::string::npos) << explain(run);
      EXPECT_NE(run.err.find("visible"), std::string::npos) << explain(run);
    }
  }
}

TEST(CliDevice, AllListsEveryVisibleDeviceOrSaysThereIsNone) {
  const ProgramRun run = gemmlab({"device", "--all", "--format", "json"});
  if (run.exit_code != 0) {
    EXPECT_EQ(run.exit_code, 1) << explain(run);
    EXPECT_NE(run.err.find("no CUDA"), std::string::npos) << explain(run);
    GTEST_SKIP() << "no GPU here: " << run.err;
  }
  const nlohmann::json devices = nlohmann::json::parse(run.out);
  ASSERT_TRUE(devices.is_array());
  ASSERT_FALSE(devices.empty());
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const nlohmann::json& d = devices[i];
    EXPECT_EQ(d.at("ordinal").get<std::size_t>(), i);
    EXPECT_FALSE(d.at("pci_bus_id").get<std::string>().empty());
    EXPECT_EQ(d.at("uuid").get<std::string>().rfind("GPU-", 0), 0u) << d.dump();
    EXPECT_GT(d.at("peaks").at("dram_gbs").get<double>(), 0);
  }
  const ProgramRun table = gemmlab({"device", "--all"});
  EXPECT_EQ(table.exit_code, 0) << explain(table);
  for (const nlohmann::json& d : devices)
    EXPECT_NE(table.out.find(d.at("pci_bus_id").get<std::string>()), std::string::npos) << explain(table);
}

TEST(CliDevice, BenchRecordsTheDeviceThatRan) {
  const nlohmann::json devices = visible_devices();
  if (devices.empty()) GTEST_SKIP() << "no GPU here";
  const std::string last = std::to_string(devices.size() - 1);
  const ProgramRun run = gemmlab(quick({"bench", "--backend", "cuda", "--device", last, "--sizes", "64", "--variants",
                                        "naive", "--format", "json"}));
  ASSERT_EQ(run.exit_code, 0) << explain(run);
  const nlohmann::json doc = nlohmann::json::parse(run.out);
  const nlohmann::json& device = doc.at("device");
  EXPECT_EQ(device.at("device_ordinal").get<std::string>(), last);
  EXPECT_EQ(device.at("pci_bus_id").get<std::string>(), devices.back().at("pci_bus_id").get<std::string>());
  EXPECT_EQ(device.at("uuid").get<std::string>(), devices.back().at("uuid").get<std::string>());
}

TEST(CliDevice, CudaVisibleDevicesDecidesWhatIsVisible) {
  const nlohmann::json devices = visible_devices();
  if (devices.empty()) GTEST_SKIP() << "no GPU here";
  // Nothing visible: as a machine without a GPU.
  const ProgramRun none = gemmlab_with_env({"CUDA_VISIBLE_DEVICES="}, {"device", "--all"});
  EXPECT_EQ(none.exit_code, 1) << explain(none);
  EXPECT_NE(none.err.find("no CUDA"), std::string::npos) << explain(none);
  if (devices.size() < 2) GTEST_SKIP() << "one GPU: the remapping needs two";
  // The second board alone: ordinal 0 now, the same PCI bus id, and --device 1 names the count.
  const ProgramRun second = gemmlab_with_env({"CUDA_VISIBLE_DEVICES=1"}, {"device", "--all", "--format", "json"});
  ASSERT_EQ(second.exit_code, 0) << explain(second);
  const nlohmann::json only = nlohmann::json::parse(second.out);
  ASSERT_EQ(only.size(), 1u);
  EXPECT_EQ(only[0].at("pci_bus_id"), devices[1].at("pci_bus_id"));
  EXPECT_EQ(only[0].at("cuda_visible_devices"), "1");
  const ProgramRun past = gemmlab_with_env({"CUDA_VISIBLE_DEVICES=1"}, {"device", "--device", "1"});
  EXPECT_EQ(past.exit_code, 2) << explain(past);
  EXPECT_NE(past.err.find("1 CUDA device is visible"), std::string::npos) << explain(past);
  EXPECT_NE(past.err.find("CUDA_VISIBLE_DEVICES=1"), std::string::npos) << explain(past);
}

}  // namespace
}  // namespace gemmlab::testing
