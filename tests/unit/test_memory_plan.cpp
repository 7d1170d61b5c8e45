// The memory plan made before a run allocates anything: known shapes give known bytes, the
// verification falls back to a sample where the full reference would not fit or take too
// long, a run that cannot fit is refused with its bytes and what to do; and what a machine
// offers (MemAvailable). --device-memory-limit's parser is tested with the others (test_options).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bench/memory_plan.hpp"
#include "cli/options.hpp"  // parse_mnk, to read a suggested shape back
#include "core/host_info.hpp"
#include "gemmlab/gemm.hpp"
#include "gemmlab/registry.hpp"
#include "support/assertions.hpp"

namespace gemmlab::bench {
namespace {

using testing::contains;

constexpr std::uint64_t kF32 = 4, kF64 = 8, kBf16 = 2;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

Options options_for(std::vector<Shape> shapes) {
  Options o;
  o.shapes = std::move(shapes);
  o.seed = 7;
  return o;
}

std::uint64_t bytes_of(const std::vector<MemoryItem>& items, const std::string& what) {
  for (const MemoryItem& item : items)
    if (item.what == what) return item.bytes;
  return 0;
}

// A CUDA rung as the plan sees one: its backend, its types, and whether it sizes a workspace.
Variant cuda_rung(const std::string& name, bool prepares, bool tensor_cores = false, DType compute = DType::F32) {
  Variant v;
  v.name = name;
  v.backend = Backend::Cuda;
  v.tensor_cores = tensor_cores;
  v.compute = compute;
  // Whatever prepare's parameters are: the plan only asks whether there is one.
  if (prepares) v.prepare = [](const auto&...) { return Status::ok(); };
  return v;
}

MemoryTarget cpu_target() { return {Backend::Cpu, 0}; }
MemoryTarget cuda_target(std::uint64_t flush = 1000) { return {Backend::Cuda, flush}; }

TEST(MemoryPlan, CpuShapeCountsEveryCopy) {
  // 100 x 200 x 300 f32, NN row-major, beta = 0: A 30000 elements, B 60000, C 20000.
  const Options o = options_for({{100, 200, 300}});
  const MemoryPlan plan = plan_shape(o, o.shapes[0], {}, cpu_target(), VerifyMode::Full);
  // On the CPU the executor's buffers are host memory: the harness's copy and the buffer.
  EXPECT_EQ(bytes_of(plan.host, "A"), 2 * 30000 * kF32);
  EXPECT_EQ(bytes_of(plan.host, "B"), 2 * 60000 * kF32);
  EXPECT_EQ(bytes_of(plan.host, "C"), 2 * 20000 * kF32);
  EXPECT_EQ(bytes_of(plan.host, "C result"), 20000 * kF32);
  EXPECT_EQ(bytes_of(plan.host, "C's initial copy"), 0u);  // beta = 0: C is not restored
  // Value and magnitude (2 m n doubles), op(A) and op(B) in float64.
  EXPECT_EQ(bytes_of(plan.host, "float64 reference"), (2 * 20000 + 30000 + 60000) * kF64);
  EXPECT_EQ(bytes_of(plan.host, "allowance"), kHostAllowance);
  EXPECT_EQ(plan.host_bytes(), (2 * 30000 + 2 * 60000 + 2 * 20000 + 20000) * kF32 +
                                   (2 * 20000 + 30000 + 60000) * kF64 + kHostAllowance);
  EXPECT_TRUE(plan.device.empty());
  EXPECT_EQ(plan.device_bytes(), 0u);
}

TEST(MemoryPlan, CudaShapeSplitsHostAndDevice) {
  Options o = options_for({{100, 200, 300}});
  o.dtype = DType::BF16;
  o.beta = 0.5;  // timed with beta != 0: C restored from a copy on the device
  const MemoryPlan plan = plan_shape(o, o.shapes[0], {}, cuda_target(4096), VerifyMode::Full);
  // The host keeps float32 values and the bf16 encoding of A and B; the device the bf16.
  EXPECT_EQ(bytes_of(plan.host, "A"), 30000 * (kF32 + kBf16));
  EXPECT_EQ(bytes_of(plan.host, "B"), 60000 * (kF32 + kBf16));
  EXPECT_EQ(bytes_of(plan.host, "C"), 20000 * kF32);
  EXPECT_EQ(bytes_of(plan.device, "A"), 30000 * kBf16);
  EXPECT_EQ(bytes_of(plan.device, "B"), 60000 * kBf16);
  EXPECT_EQ(bytes_of(plan.device, "C"), 20000 * kF32);
  EXPECT_EQ(bytes_of(plan.device, "C's initial copy"), 20000 * kF32);
  EXPECT_EQ(bytes_of(plan.device, "L2 flush buffer"), 4096u);
  EXPECT_EQ(bytes_of(plan.device, "allowance"), kDeviceAllowance);
  // 6e6 multiply-adds: the reference stays on the host.
  EXPECT_EQ(bytes_of(plan.device, "float64 reference"), 0u);
  EXPECT_EQ(bytes_of(plan.host, "float64 reference"), (2 * 20000 + 30000 + 60000) * kF64);
}

// --out-dtype bf16: C lives in 2 bytes on the device (its buffer and its initial copy), and on
// the host as float32 values beside its encoding, as A and B do; the result comes back encoded
// and is decoded. The padding's canaries are float32 values either way.
TEST(MemoryPlan, HalfPrecisionCCountsItsStorageSize) {
  Options o = options_for({{100, 200, 300}});
  o.dtype = o.out_dtype = DType::BF16;
  o.beta = 0.5;
  o.ld_padding = 2;  // C: 100 rows of 202
  const OperandLayout l = operand_layout(o, o.shapes[0]);
  EXPECT_EQ(l.c.dtype, DType::BF16);
  EXPECT_EQ(l.a.dtype, DType::BF16);
  const MemoryPlan plan = plan_shape(o, o.shapes[0], {}, cuda_target(), VerifyMode::Full);
  constexpr std::uint64_t kC = 100 * 202, kCanaries = 100 * 2;
  EXPECT_EQ(bytes_of(plan.device, "C"), kC * kBf16);
  EXPECT_EQ(bytes_of(plan.device, "C's initial copy"), kC * kBf16);
  EXPECT_EQ(bytes_of(plan.host, "C"), kC * (kF32 + kBf16) + kCanaries * kF32);
  EXPECT_EQ(bytes_of(plan.host, "C result"), kC * (kF32 + kBf16));
  // f16 alike; the CPU backend's buffer is host memory, joined to the harness's copy.
  o.dtype = o.out_dtype = DType::F16;
  const MemoryPlan on_cpu = plan_shape(o, o.shapes[0], {}, cpu_target(), VerifyMode::Full);
  EXPECT_EQ(bytes_of(on_cpu.host, "C"), kC * (kF32 + kBf16) + kCanaries * kF32 + kC * kBf16);
  // C in float32 beside bf16 inputs, as before.
  o.dtype = DType::BF16;
  o.out_dtype = DType::F32;
  EXPECT_EQ(bytes_of(plan_shape(o, o.shapes[0], {}, cuda_target(), VerifyMode::Full).device, "C"), kC * kF32);
}

// FP8 inputs: one byte an element on the device, and on the host the float values the harness
// quantises beside their 1-byte encoding; C in f32 or a 2-byte type as --out-dtype says.
TEST(MemoryPlan, Fp8OperandsCountOneByteAnElement) {
  constexpr std::uint64_t kFp8 = 1;
  Options o = options_for({{100, 200, 300}});
  o.dtype = DType::E4M3;
  o.out_dtype = DType::BF16;
  o.ld_padding = 1;  // A: 100 rows of 301; B: 300 rows of 201; C: 100 rows of 201
  const OperandLayout l = operand_layout(o, o.shapes[0]);
  EXPECT_EQ(l.a.dtype, DType::E4M3);
  EXPECT_EQ(l.b.dtype, DType::E4M3);
  EXPECT_EQ(l.c.dtype, DType::BF16);
  const MemoryPlan plan = plan_shape(o, o.shapes[0], {}, cuda_target(), VerifyMode::Full);
  constexpr std::uint64_t kA = 100 * 301, kB = 300 * 201, kC = 100 * 201, kCanaries = 100;
  EXPECT_EQ(bytes_of(plan.device, "A"), kA * kFp8);
  EXPECT_EQ(bytes_of(plan.device, "B"), kB * kFp8);
  EXPECT_EQ(bytes_of(plan.host, "A"), kA * (kF32 + kFp8));
  EXPECT_EQ(bytes_of(plan.host, "B"), kB * (kF32 + kFp8));
  EXPECT_EQ(bytes_of(plan.device, "C"), kC * kBf16);
  EXPECT_EQ(bytes_of(plan.host, "C"), kC * (kF32 + kBf16) + kCanaries * kF32);
  o.dtype = DType::E5M2;
  o.out_dtype = DType::F32;
  const MemoryPlan f32_c = plan_shape(o, o.shapes[0], {}, cuda_target(), VerifyMode::Full);
  EXPECT_EQ(bytes_of(f32_c.device, "B"), kB * kFp8);
  EXPECT_EQ(bytes_of(f32_c.device, "C"), kC * kF32);
}

TEST(MemoryPlan, LeadingDimensionsAndTranspositionsCount) {
  Options o = options_for({{100, 200, 300}});
  o.ld_padding = 3;
  o.op_a = Op::T;  // A stored 300 x 100: 300 lines of 103
  o.layout = Layout::ColMajor;
  o.verify = false;
  const MemoryPlan plan = plan_shape(o, o.shapes[0], {}, cuda_target(), VerifyMode::None);
  // Column-major: A (300 x 100) has 100 columns of ld 303; B (300 x 200) 200 of 303; C
  // (100 x 200) 200 of 103, whose padding holds a canary per element on the host.
  EXPECT_EQ(bytes_of(plan.device, "A"), 100 * 303 * kF32);
  EXPECT_EQ(bytes_of(plan.device, "B"), 200 * 303 * kF32);
  EXPECT_EQ(bytes_of(plan.device, "C"), 200 * 103 * kF32);
  EXPECT_EQ(bytes_of(plan.host, "C"), 200 * 103 * kF32 + 200 * 3 * kF32);
  EXPECT_EQ(bytes_of(plan.host, "C result"), 0u);  // not verified: nothing downloaded
  EXPECT_EQ(bytes_of(plan.host, "float64 reference"), 0u);
}

TEST(MemoryPlan, LargeProblemsGetTheirReferenceOnTheDevice) {
  const Options o = options_for({{2048, 2048, 2048}});  // 2^33 multiply-adds
  const MemoryPlan plan = plan_shape(o, o.shapes[0], {}, cuda_target(), VerifyMode::Full);
  const std::uint64_t square = 2048 * 2048;
  // Device: A, B and C in float64; host: the result and op(A), op(B) with their magnitudes.
  EXPECT_EQ(bytes_of(plan.device, "float64 reference"), 3 * square * kF64);
  EXPECT_EQ(bytes_of(plan.host, "float64 reference"), (2 * square + 2 * 2 * square) * kF64);
}

TEST(MemoryPlan, SampledReferenceIsSmall) {
  const Options o = options_for({{100000, 100000, 100000}});
  const MemoryPlan plan = plan_shape(o, o.shapes[0], {}, cuda_target(), VerifyMode::Sampled);
  EXPECT_EQ(bytes_of(plan.host, "float64 reference"), 0u);
  EXPECT_GT(bytes_of(plan.host, "sampled reference"), 0u);
  EXPECT_LT(bytes_of(plan.host, "sampled reference"), std::uint64_t{1} << 30);
  // 10^10 elements of 4 bytes: A, B, C on the device, and C's result on the host.
  EXPECT_EQ(bytes_of(plan.device, "A"), 40'000'000'000u);
  EXPECT_EQ(bytes_of(plan.host, "C result"), 40'000'000'000u);
}

TEST(MemoryPlan, HugeShapesSaturateRatherThanWrap) {
  const std::int64_t side = 2147483647;
  const Options o = options_for({{side, side, side}});
  const MemoryPlan plan = plan_shape(o, o.shapes[0], {}, cuda_target(), VerifyMode::Full);
  EXPECT_EQ(plan.host_bytes(), UINT64_MAX);
  EXPECT_GT(plan.device_bytes(), std::uint64_t{1} << 62);
}

TEST(MemoryPlan, RungWorkspacesAreBoundedAndKeptAcrossShapes) {
  Options o = options_for({{1000, 500, 200}, {10, 10, 10}});
  const std::vector<Variant> selected = {cuda_rung("naive", false), cuda_rung("pipelined", true),
                                         cuda_rung("wgmma_3xtf32", true, true, DType::F32),
                                         cuda_rung("wgmma_ws_tf32", true, true, DType::TF32)};
  EXPECT_EQ(workspace_bound(selected[0], o, o.shapes[0]), 0u);
  // (m + 64 + n + 64) rows of (k + 64) 4-byte elements; twice for the split (3xTF32) rung.
  const std::uint64_t copies = (1064 + 564) * 264 * kF32;
  EXPECT_EQ(workspace_bound(selected[1], o, o.shapes[0]), copies);
  EXPECT_EQ(workspace_bound(selected[2], o, o.shapes[0]), 2 * copies);
  EXPECT_EQ(workspace_bound(selected[3], o, o.shapes[0]), copies);
  // A rung's workspace is at least as large as the operands it copies.
  const OperandLayout l = operand_layout(o, o.shapes[0]);
  EXPECT_GE(copies, (buffer_elements(l.a) + buffer_elements(l.b)) * kF32);
  // The anchor and CPU rungs keep none.
  Variant anchor = cuda_rung("cublas_sgemm", true);
  anchor.anchor = true;
  EXPECT_EQ(workspace_bound(anchor, o, o.shapes[0]), 0u);
  // The pitched rung copies A and B into rows of whole 512-byte pitches.
  EXPECT_EQ(workspace_bound(cuda_rung("pitched", false), o, o.shapes[0]),
            1000 * 1024 + 200 * 2048);  // A: 1000 rows of 800 bytes; B: 200 rows of 2000

  const std::vector<MemoryPlan> plans = plan_run(o, selected, cuda_target(), MemoryAvailable{});
  ASSERT_EQ(plans.size(), 2u);
  const std::string names = "workspaces of pipelined, wgmma_3xtf32, wgmma_ws_tf32";
  EXPECT_EQ(bytes_of(plans[0].device, names), 4 * copies);
  // The small shape runs while the large one's workspaces are still allocated.
  EXPECT_EQ(bytes_of(plans[1].device, names), 4 * copies);
}

TEST(MemoryPlan, AutoCountsTheLargestWorkspaceItMayChoose) {
  const Options o = options_for({{3000, 2000, 1000}});
  for (const Backend backend : {Backend::Cpu, Backend::Cuda})
    for (const DType dtype : kDTypeNames) {
      const std::optional<Precision> precision = precision_for(dtype);
      if (!precision) continue;
      Variant automatic;
      automatic.name = std::string(kAutoVariant);
      automatic.backend = backend;
      automatic.input = precision->input;
      automatic.compute = precision->compute;
      automatic.output = precision->output;
      const std::uint64_t bound = workspace_bound(automatic, o, o.shapes[0]);
      for (const Variant& v : variants(backend))
        if (v.precision() == *precision) {
          EXPECT_GE(bound, workspace_bound(v, o, o.shapes[0])) << v.name;
        }
    }
}

TEST(MemoryPlan, FullReferenceWhereItFits) {
  const Options o = options_for({{512, 512, 512}});
  MemoryAvailable plenty;
  plenty.host = 64 * kGiB;
  const std::vector<MemoryPlan> plans = plan_run(o, {}, cpu_target(), plenty);
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].verification, VerifyMode::Full);
  EXPECT_TRUE(plans[0].why_sampled.empty());
}

TEST(MemoryPlan, SampledWhenTheHostReferenceWouldTakeTooLong) {
  Options o = options_for({{8192, 8192, 8192}});
  MemoryAvailable plenty;
  plenty.host = 1024 * kGiB;
  std::vector<MemoryPlan> plans = plan_run(o, {}, cpu_target(), plenty);
  EXPECT_EQ(plans[0].verification, VerifyMode::Sampled);
  EXPECT_TRUE(contains(plans[0].why_sampled, "too long"));
  EXPECT_GT(plans[0].host_bytes(), 0u);
  // On a GPU the reference is computed there, in full.
  plenty.device_free = 1024 * kGiB;
  plans = plan_run(o, {}, cuda_target(), plenty);
  EXPECT_EQ(plans[0].verification, VerifyMode::Full);
  // The threshold is an option (tests lower it).
  o.shapes = {{64, 64, 64}};
  o.host_reference_max_fmas = 1000;
  plans = plan_run(o, {}, cpu_target(), plenty);
  EXPECT_EQ(plans[0].verification, VerifyMode::Sampled);
}

TEST(MemoryPlan, SampledWhenTheReferenceWouldNotFit) {
  const Options o = options_for({{30000, 30000, 100}});  // C 3.6 GB, the reference 14.4 GB more
  MemoryAvailable some;
  some.host = 16 * kGiB;
  some.device_free = 80 * kGiB;
  const std::vector<MemoryPlan> plans = plan_run(o, {}, cuda_target(), some);
  EXPECT_EQ(plans[0].verification, VerifyMode::Sampled);
  EXPECT_TRUE(contains(plans[0].why_sampled, "host memory"));
  EXPECT_TRUE(check_plans(o, {}, cuda_target(), some, plans).is_ok());
  // Or the device reference would not fit the device.
  const Options large = options_for({{40000, 40000, 40000}});  // float64 A, B, C: 38.4 GB
  some.host = 1024 * kGiB;
  some.device_free = 40 * kGiB;
  const std::vector<MemoryPlan> on_device = plan_run(large, {}, cuda_target(), some);
  EXPECT_EQ(on_device[0].verification, VerifyMode::Sampled);
  EXPECT_TRUE(contains(on_device[0].why_sampled, "device memory"));
}

TEST(MemoryPlan, NoVerificationNoReference) {
  Options o = options_for({{512, 512, 512}});
  o.verify = false;
  const std::vector<MemoryPlan> plans = plan_run(o, {}, cpu_target(), MemoryAvailable{});
  EXPECT_EQ(plans[0].verification, VerifyMode::None);
  EXPECT_EQ(bytes_of(plans[0].host, "C result"), 0u);
}

TEST(MemoryAvailable, DeviceIsTheLimitOrWhatIsFree) {
  MemoryAvailable a;
  EXPECT_FALSE(a.device().has_value());
  a.device_free = 10 * kGiB;
  a.device_held = 1 * kGiB;  // the executor's own buffers count as the run's
  EXPECT_EQ(a.device(), 11 * kGiB);
  a.device_limit = 8 * kGiB;
  EXPECT_EQ(a.device(), 8 * kGiB);
  a.device_limit = 20 * kGiB;
  EXPECT_EQ(a.device(), 11 * kGiB);
}

// ---- the refusal -------------------------------------------------------------------------

TEST(MemoryRefusal, NamesTheBytesNeededAndAvailable) {
  const Options o = options_for({{100000, 100000, 100000}});
  MemoryAvailable a;
  a.host = 98'300'000'000;
  a.device_free = 79'000'000'000;
  a.device_name = "device 0 (a test GPU)";
  const std::vector<MemoryPlan> plans = plan_run(o, {}, cuda_target(), a);
  const Status s = check_plans(o, {}, cuda_target(), a, plans);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::AllocFailed);
  const std::string& m = s.message();
  EXPECT_TRUE(contains(m, "100000x100000x100000 (f32) does not fit")) << m;
  EXPECT_TRUE(contains(m, "nothing was allocated")) << m;
  EXPECT_TRUE(contains(m, "of device memory (A 40.0 GB, B 40.0 GB, C 40.0 GB")) << m;
  EXPECT_TRUE(contains(m, "79.0 GB free on device 0 (a test GPU)")) << m;
  EXPECT_TRUE(contains(m, "of host memory (A 40.0 GB, B 40.0 GB, C 40.0 GB, C result 40.0 GB")) << m;
  EXPECT_TRUE(contains(m, "98.3 GB available")) << m;
  EXPECT_TRUE(contains(m, "a sample of C")) << m;  // it is not the reference that is too large
  EXPECT_TRUE(contains(m, "a smaller problem (--mnk ")) << m;
  EXPECT_FALSE(contains(m, "out-of-core")) << m;  // nothing promised that is not built
}

TEST(MemoryRefusal, SuggestsWhatFitsAndOnlyThat) {
  // Fits the device but not the host, by C's result copy alone: --no-verify would do.
  const Options o = options_for({{50000, 50000, 16}});  // C 10 GB; A, B 3.2 MB
  MemoryAvailable a;
  a.host = 15'000'000'000;
  a.device_free = 80'000'000'000;
  const std::vector<MemoryPlan> plans = plan_run(o, {}, cuda_target(), a);
  const Status s = check_plans(o, {}, cuda_target(), a, plans);
  ASSERT_FALSE(s.is_ok());
  EXPECT_TRUE(contains(s.message(), "--no-verify")) << s.message();
  EXPECT_FALSE(contains(s.message(), "device memory")) << s.message();
  // The suggested smaller problem fits.
  const std::string& m = s.message();
  const std::size_t at = m.find("--mnk ");
  ASSERT_NE(at, std::string::npos) << m;
  Options smaller = o;
  smaller.shapes = cli::parse_mnk(m.substr(at + 6, m.find(' ', at + 6) - at - 6));
  EXPECT_EQ(smaller.shapes[0].k, 16);  // small dimensions are kept
  EXPECT_TRUE(check_plans(smaller, {}, cuda_target(), a, plan_run(smaller, {}, cuda_target(), a)).is_ok());
}

TEST(MemoryRefusal, ALimitBelowWhatIsFreeIsNamed) {
  Options o = options_for({{20000, 20000, 20000}});
  o.device_memory_limit = 2 * kGiB;
  MemoryAvailable a;
  a.host = 1024 * kGiB;
  a.device_free = 80 * kGiB;
  a.device_limit = o.device_memory_limit;
  const std::vector<MemoryPlan> plans = plan_run(o, {}, cuda_target(), a);
  const Status s = check_plans(o, {}, cuda_target(), a, plans);
  ASSERT_FALSE(s.is_ok());
  EXPECT_TRUE(contains(s.message(), "2.1 GB allowed by --device-memory-limit")) << s.message();
  EXPECT_TRUE(contains(s.message(), "raise --device-memory-limit (now 2.1 GB)")) << s.message();
}

TEST(MemoryRefusal, NamesTheRungsWhoseCopiesDoNotFit) {
  const Options o = options_for({{30000, 30000, 30000}});  // A, B, C 3.6 GB each
  const std::vector<Variant> selected = {cuda_rung("naive", false), cuda_rung("wgmma_3xtf32", true, true)};
  MemoryAvailable a;
  a.host = 1024 * kGiB;
  a.device_free = 12'000'000'000;
  const Status s = check_plans(o, selected, cuda_target(), a, plan_run(o, selected, cuda_target(), a));
  ASSERT_FALSE(s.is_ok());
  EXPECT_TRUE(contains(s.message(), "workspaces of wgmma_3xtf32")) << s.message();
  EXPECT_TRUE(contains(s.message(), "leave out the rungs that copy A and B (wgmma_3xtf32): --variants naive"))
      << s.message();
}

TEST(MemoryRefusal, EveryShapeIsCheckedBeforeAnyRuns) {
  const Options o = options_for({{64, 64, 64}, {200000, 200000, 16}, {300000, 300000, 16}});
  MemoryAvailable a;
  a.host = 100 * kGiB;
  const Status s = check_plans(o, {}, cpu_target(), a, plan_run(o, {}, cpu_target(), a));
  ASSERT_FALSE(s.is_ok());
  EXPECT_TRUE(contains(s.message(), "200000x200000x16 (f32) does not fit")) << s.message();
  EXPECT_TRUE(contains(s.message(), "1 more of the 3 shapes does not fit either: 300000x300000x16")) << s.message();
}

TEST(MemoryRefusal, UnknownMemoryIsNotChecked) {
  const Options o = options_for({{100000, 100000, 100000}});
  EXPECT_TRUE(check_plans(o, {}, cuda_target(), MemoryAvailable{}, plan_run(o, {}, cuda_target(), {})).is_ok());
}

TEST(FormatBytes, PowersOfAThousand) {
  EXPECT_EQ(format_bytes(0), "0 bytes");
  EXPECT_EQ(format_bytes(999), "999 bytes");
  EXPECT_EQ(format_bytes(1500), "1.5 kB");
  EXPECT_EQ(format_bytes(268'435'456), "268.4 MB");
  EXPECT_EQ(format_bytes(120'000'000'000), "120.0 GB");
  EXPECT_EQ(format_bytes(28'000'000'000'000), "28.0 TB");
  EXPECT_EQ(format_bytes(1'500'000'000'000'000), "1.5 PB");
  EXPECT_EQ(format_bytes(UINT64_MAX), "more than 18.4 EB");
}

// ---- what the machine offers --------------------------------------------------------------

TEST(HostMemory, ReadsMemAvailableInBytes) {
  const std::string meminfo =
      "MemTotal:       131072000 kB\nMemFree:         1000000 kB\nMemAvailable:   98304000 kB\nBuffers: 1 kB\n";
  EXPECT_EQ(parse_mem_available(meminfo), std::uint64_t{98304000} * 1024);
  EXPECT_FALSE(parse_mem_available("MemTotal: 1 kB\n").has_value());
  EXPECT_FALSE(parse_mem_available("MemAvailable: lots\n").has_value());
  EXPECT_FALSE(parse_mem_available("XMemAvailable: 5 kB\n").has_value());
}

TEST(HostMemory, ThisMachineSaysSomething) {
  const std::optional<std::uint64_t> available = host_memory_available();
  ASSERT_TRUE(available.has_value()) << "neither /proc/meminfo nor a cgroup could be read";
  EXPECT_GT(*available, 0u);
}

}  // namespace
}  // namespace gemmlab::bench
