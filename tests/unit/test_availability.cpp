// Where a rung runs: its declared needs (minimum compute capability, arch-specific code)
// against a GPU and the architectures a build carries code for, with fake GPUs and lists,
// so that every GPU from Turing to after Hopper is covered without one. Also: the CUDA
// registry declares what each rung needs, and this build's own lists parse.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gemmlab/availability.hpp"
#include "gemmlab/registry.hpp"

namespace gemmlab {
namespace {

// The default list of a build without a GPU (cmake/cuda_architectures.cmake).
constexpr const char* kDefaultList = "75-real;80-real;86-real;89-real;90a-real;90-virtual";

std::vector<ArchTarget> parse(const char* list) {
  std::vector<ArchTarget> out;
  const Status s = parse_architectures(list, out);
  EXPECT_TRUE(s.is_ok()) << s.describe();
  return out;
}

Variant cuda_rung(int min_cc, std::string arch_specific = "", std::string features = "") {
  Variant v;
  v.name = "rung";
  v.backend = Backend::Cuda;
  v.min_compute_capability = min_cc;
  v.arch_specific = std::move(arch_specific);
  v.arch_features = std::move(features);
  return v;
}

Variant simt() { return cuda_rung(0); }
Variant mma_sync() { return cuda_rung(80, "", "mma.sync"); }
Variant hopper() { return cuda_rung(90, "90a", "TMA and wgmma"); }

TEST(Availability, ParsesCMakeForms) {
  const std::vector<ArchTarget> t = parse("86;80-real,90a-real;90-virtual;100f");
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[0].arch, 86);
  EXPECT_TRUE(t[0].sass && t[0].ptx);
  EXPECT_TRUE(t[1].sass && !t[1].ptx);
  EXPECT_EQ(t[2].arch, 90);
  EXPECT_TRUE(t[2].arch_specific);
  EXPECT_TRUE(!t[3].sass && t[3].ptx && !t[3].arch_specific);
  EXPECT_EQ(t[4].arch, 100);
  EXPECT_FALSE(t[4].arch_specific);
  EXPECT_TRUE(parse("").empty());
}

TEST(Availability, RefusesWhatIsNotAnArchitecture) {
  std::vector<ArchTarget> out;
  for (const char* bad : {"sm_80", "all", "90b", "x", "80-realish"}) {
    const Status s = parse_architectures(bad, out);
    EXPECT_EQ(s.code(), StatusCode::InvalidValue) << bad;
    EXPECT_NE(s.message().find(bad), std::string::npos) << s.message();
  }
}

// Machine code runs on its own major version at the same or a newer minor; PTX on anything
// newer; arch-specific code on its own compute capability only.
TEST(Availability, LoadedTargetFollowsTheDriversRules) {
  const std::vector<ArchTarget> build = parse(kDefaultList);
  const auto loaded = [&](int cc) { return loaded_target(build, cc); };
  EXPECT_EQ(loaded(75)->text, "75-real");
  EXPECT_EQ(loaded(80)->text, "80-real");
  EXPECT_EQ(loaded(86)->text, "86-real");
  EXPECT_EQ(loaded(87)->text, "86-real");  // Orin: sm_86 code, same major
  EXPECT_EQ(loaded(89)->text, "89-real");
  EXPECT_EQ(loaded(90)->text, "90a-real");
  EXPECT_TRUE(loaded(90)->sass);
  EXPECT_EQ(loaded(100)->text, "90-virtual");  // Blackwell: compute_90 PTX, JIT-compiled
  EXPECT_FALSE(loaded(100)->sass);
  EXPECT_EQ(loaded(120)->text, "90-virtual");
  EXPECT_FALSE(loaded(70).has_value());  // older than the list

  // Arch-specific PTX alone runs nowhere but on its own capability.
  const std::vector<ArchTarget> hopper_only = parse("90a-virtual");
  EXPECT_TRUE(loaded_target(hopper_only, 90).has_value());
  EXPECT_FALSE(loaded_target(hopper_only, 100).has_value());
  // A -real list has no code for a newer major version.
  EXPECT_FALSE(loaded_target(parse("80-real"), 90).has_value());
  EXPECT_EQ(loaded_target(parse("80"), 90)->text, "80");
}

TEST(Availability, TheDefaultListRunsTheSimtLadderEverywhere) {
  const std::vector<ArchTarget> build = parse(kDefaultList);
  for (int cc : {75, 80, 86, 87, 89, 90, 100, 120})
    EXPECT_EQ(unavailable_reason(simt(), cc, build), "") << cc;
}

TEST(Availability, MmaSyncNeedsSm80) {
  const std::vector<ArchTarget> build = parse(kDefaultList);
  const std::string why = unavailable_reason(mma_sync(), 75, build);
  EXPECT_NE(why.find("needs sm_80"), std::string::npos) << why;
  EXPECT_NE(why.find("mma.sync"), std::string::npos) << why;
  EXPECT_NE(why.find("sm_75"), std::string::npos) << why;
  for (int cc : {80, 86, 89, 90, 100}) EXPECT_EQ(unavailable_reason(mma_sync(), cc, build), "") << cc;
}

TEST(Availability, HopperRungsNeedSm90a) {
  const std::vector<ArchTarget> hopper_list = parse("90a-real");
  for (int cc : {75, 80, 86, 89, 100, 120}) {
    const std::string why = unavailable_reason(hopper(), cc, hopper_list);
    EXPECT_NE(why.find("needs sm_90a: TMA and wgmma"), std::string::npos) << cc << ": " << why;
  }
  EXPECT_EQ(unavailable_reason(hopper(), 90, hopper_list), "");
}

// A build without 90a (-DCMAKE_CUDA_ARCHITECTURES=80, as an A100 build) on an H100: the SIMT
// and mma.sync rungs run from compute_80 PTX, the Hopper rungs have no code.
TEST(Availability, ABuildWithout90aSaysSoOnHopper) {
  const std::vector<ArchTarget> build = parse("80");
  EXPECT_EQ(unavailable_reason(simt(), 90, build), "");
  EXPECT_EQ(unavailable_reason(mma_sync(), 90, build), "");
  const std::vector<ArchTarget> no_hopper;  // the Hopper list of such a build is empty
  const std::string why = unavailable_reason(hopper(), 90, no_hopper);
  EXPECT_NE(why.find("no sm_90a code"), std::string::npos) << why;
  EXPECT_NE(why.find("add 90a"), std::string::npos) << why;
  // Plain sm_90 code is not sm_90a code either.
  EXPECT_NE(unavailable_reason(hopper(), 90, parse("90")).find("no sm_90a code"), std::string::npos);
}

// PTX older than what a rung needs: its kernels were compiled to nothing.
TEST(Availability, PtxWithoutTheInstructionsIsNoCode) {
  const std::string why = unavailable_reason(mma_sync(), 86, parse("75"));
  EXPECT_NE(why.find("compute_75 PTX"), std::string::npos) << why;
  EXPECT_NE(why.find("add 86"), std::string::npos) << why;
  EXPECT_EQ(unavailable_reason(simt(), 86, parse("75")), "");
  // No code at all for this GPU.
  const std::string none = unavailable_reason(simt(), 86, parse("90a-real"));
  EXPECT_NE(none.find("no code for sm_86"), std::string::npos) << none;
}

TEST(Availability, AnchorsBringTheirOwnCode) {
  Variant anchor = cuda_rung(80, "", "bf16 tensor-core math");
  anchor.anchor = true;
  EXPECT_EQ(unavailable_reason(anchor, 86, parse("90a-real")), "");
  EXPECT_NE(unavailable_reason(anchor, 75, parse(kDefaultList)).find("needs sm_80"), std::string::npos);
}

TEST(Availability, CpuVariantsAndNoDevice) {
  Variant cpu;
  cpu.backend = Backend::Cpu;
  EXPECT_EQ(unavailable_reason(cpu, 0, {}), "");
  EXPECT_EQ(unavailable_here(cpu), "");
  EXPECT_EQ(unavailable_reason(simt(), 0, parse(kDefaultList)), "no CUDA device");
}

// What the registry declares: the tensor-core rungs their architecture, the Hopper rungs
// sm_90a with the features that need it; the SIMT ladder nothing (it runs on every GPU of the list).
TEST(Availability, TheRegistryDeclaresWhatEachRungNeeds) {
  if (!cuda_built()) GTEST_SKIP() << "SKIPPED: no CUDA in this build";
  for (const Variant& v : variants(Backend::Cuda)) {
    SCOPED_TRACE(v.name);
    if (v.rung >= 12) {
      EXPECT_EQ(v.arch_specific, "90a");
      EXPECT_EQ(v.min_compute_capability, 90);
      EXPECT_NE(v.arch_features.find("wgmma"), std::string::npos);
    } else if (v.rung == 11) {
      EXPECT_EQ(v.min_compute_capability, 80);
      EXPECT_TRUE(v.arch_specific.empty());
    } else if (v.rung >= 1) {
      EXPECT_EQ(v.min_compute_capability, 0);
      EXPECT_TRUE(v.arch_specific.empty());
    }
    if (v.min_compute_capability > 0 || !v.arch_specific.empty()) {
      EXPECT_FALSE(v.arch_features.empty());
    }
  }
}

// The lists this build was compiled with parse, and the Hopper list is the 90a part of the other.
TEST(Availability, ThisBuildsListsParse) {
  if (!cuda_built()) GTEST_SKIP() << "SKIPPED: no CUDA in this build";
  std::vector<ArchTarget> general, hopper_list;
  ASSERT_TRUE(parse_architectures(cuda_architectures(), general).is_ok()) << cuda_architectures();
  ASSERT_FALSE(general.empty());
  ASSERT_TRUE(parse_architectures(hopper_architectures(), hopper_list).is_ok()) << hopper_architectures();
  for (const ArchTarget& t : hopper_list) EXPECT_TRUE(t.arch_specific && t.arch == 90) << t.text;
}

}  // namespace
}  // namespace gemmlab
