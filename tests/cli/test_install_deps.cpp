// scripts/install-deps.sh checks each need by running it and asks apt only for what is
// missing. Simulated here with stand-ins first on PATH: a dpkg that lists nothing (as on a
// machine whose CMake, Ninja and matplotlib came through pip) and an apt-get and sudo that
// record what they were asked and reach no network. The tests run after the build, so every
// real tool is present.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/cli_test.hpp"

namespace gemmlab::testing {
namespace {

const std::string kScript = std::string(GEMMLAB_SOURCE_DIR) + "/scripts/install-deps.sh";

void write_program(const std::filesystem::path& path, const std::string& body) {
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), 0755);
}

// A folder of stand-ins: dpkg and dpkg-query list nothing; apt-get and sudo append their
// arguments to `log` (apt-get install fails, as without a network). `broken` names tools
// that exist but fail when run.
struct FakeSystem {
  ScratchDir dir;
  std::filesystem::path log = dir.path() / "calls.log";

  explicit FakeSystem(const std::vector<std::string>& broken = {}) {
    const std::string record = "echo \"$(basename \"$0\") $*\" >> '" + log.string() + "'";
    write_program(dir.path() / "dpkg-query", record + "\nexit 1");
    write_program(dir.path() / "dpkg", record + "\nexit 1");
    write_program(dir.path() / "apt-get", record + "\n[ \"$1\" = update ] && exit 0\nexit 100");
    write_program(dir.path() / "sudo", record + "\nexec \"$@\"");
    for (const std::string& tool : broken) write_program(dir.path() / tool, "exit 1");
  }

  ProgramRun run(const std::vector<std::string>& args = {}) const {
    const char* path = std::getenv("PATH");
    std::vector<std::string> all = {"PATH=" + dir.path().string() + ":" + (path ? path : "/usr/bin:/bin"),
                                    "/bin/bash", kScript};
    all.insert(all.end(), args.begin(), args.end());
    return run_program("/usr/bin/env", all);
  }
  std::string calls() const { return std::filesystem::exists(log) ? read_file(log) : std::string(); }
};

TEST(InstallDeps, EverythingPresentInstallsNothingWhateverDpkgSays) {
  const FakeSystem system;
  const ProgramRun run = system.run();
  EXPECT_EQ(run.exit_code, 0) << explain(run);
  EXPECT_EQ(system.calls(), "") << "install-deps asked the package manager although nothing is missing\n"
                                << explain(run);
  EXPECT_NE(run.out.find("nothing to install"), std::string::npos) << explain(run);
  for (const char* need : {"cmake", "ninja", "C++20", "fmt", "nlohmann-json", "CLI11", "GoogleTest", "OpenBLAS",
                           "matplotlib"})
    EXPECT_NE(run.out.find(std::string("found   ") + need), std::string::npos) << need << "\n" << explain(run);
}

TEST(InstallDeps, AskingForOnlyWhatIsMissingAndSayingWhenAptCannot) {
  const FakeSystem system({"ninja"});
  const ProgramRun run = system.run();
  EXPECT_EQ(run.exit_code, 1) << explain(run);
  EXPECT_NE(run.out.find("MISSING ninja"), std::string::npos) << explain(run);
  const std::string calls = system.calls();
  EXPECT_NE(calls.find("apt-get update"), std::string::npos) << calls;
  EXPECT_NE(calls.find("install -y -qq ninja-build\n"), std::string::npos) << calls;
  for (const char* present : {" cmake", "g++", "libfmt-dev", "python3-matplotlib", "libgtest-dev"})
    EXPECT_EQ(calls.find(present), std::string::npos) << present << " is present, yet asked for\n" << calls;
  EXPECT_NE(run.err.find("could not install ninja-build"), std::string::npos) << explain(run);
}

TEST(InstallDeps, CheckOnlyReportsAndNeverInstalls) {
  const FakeSystem system({"cmake"});
  const ProgramRun run = system.run({"--check"});
  EXPECT_EQ(run.exit_code, 1) << explain(run);
  EXPECT_NE(run.out.find("MISSING cmake"), std::string::npos) << explain(run);
  EXPECT_NE(run.err.find("apt packages: cmake"), std::string::npos) << explain(run);
  EXPECT_EQ(system.calls(), "") << explain(run);
}

TEST(InstallDeps, UnknownArgumentIsUsage) {
  const FakeSystem system;
  const ProgramRun run = system.run({"--yes"});
  EXPECT_EQ(run.exit_code, 2) << explain(run);
  EXPECT_EQ(system.calls(), "") << explain(run);
}

}  // namespace
}  // namespace gemmlab::testing
