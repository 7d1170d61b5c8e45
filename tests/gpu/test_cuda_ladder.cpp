// Every CUDA rung of every --dtype (the f32 SIMT ladder, the tf32, bf16 and f16 tensor-core
// rungs, each beside its anchor) and every --out-dtype it takes (C in float32, or in bf16 or
// f16 beside inputs of that type) against the float64 reference on awkward problems, on
// inputs rounded to the storage type. Label: gpu. Without a CUDA device (or in a build
// without CUDA) every test reports itself skipped.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cctype>
#include <cstdio>
#include <chrono>
#include <thread>
#include <tuple>
#include <map>
#include <utility>
#include <string>
#include <vector>

#include "bench/harness.hpp"
#include "core/random.hpp"
#include "cuda/runtime/buffer.hpp"
#include "cuda/runtime/l2_flush.hpp"
#include "gemmlab/availability.hpp"
#include "gemmlab/registry.hpp"
#include "support/cuda_executor.hpp"

namespace gemmlab {
namespace {

// Shapes that break tiling assumptions: 1x1x1, primes, tile sizes +- 1, k = 1,
// tall/skinny and wide/flat, non-square.
const std::vector<bench::Shape> kAwkwardShapes = {
    {1, 1, 1},     {127, 131, 257}, {33, 17, 1},    {64, 64, 64},  {63, 65, 31},
    {129, 127, 129}, {255, 257, 17}, {1000, 7, 300}, {5, 1000, 64}, {300, 200, 1023},
};

struct Case {
  DType dtype;
  DType out_dtype;  // C's storage
  Op op_a, op_b;
  Layout layout;
  double alpha, beta;
  std::int64_t pad;
};

// "bf16", or "bf16_bf16" where C is not float32 (as the rungs are named).
std::string types_of(DType dtype, DType out_dtype) {
  return out_dtype == DType::F32 ? std::string(to_string(dtype))
                                 : fmt::format("{}_{}", to_string(dtype), to_string(out_dtype));
}

std::string describe(const Case& c) {
  return fmt::format("{}_{}{}_{}_a{}_b{}_pad{}", types_of(c.dtype, c.out_dtype), to_string(c.op_a),
                     to_string(c.op_b), to_string(c.layout), c.alpha, c.beta, c.pad);
}

// Every (--dtype, --out-dtype) a run can ask for.
std::vector<std::pair<DType, DType>> every_precision() {
  std::vector<std::pair<DType, DType>> out;
  for (DType dtype : kDTypeNames)
    for (DType output : kOutDTypeNames)
      if (output_allowed(dtype, output)) out.push_back({dtype, output});
  return out;
}

// A tensor-core rung may refuse a layout its instructions cannot read (tf32 wgmma reads
// K-major operands only): a refusal with its reason is not a wrong answer. Every rung must
// still run somewhere (EveryTensorCoreRungRunsSomewhere); f32 rungs may refuse nothing. Any
// rung may be skipped where this GPU or this build cannot run it (the Hopper rungs off
// sm_90a, or in a build without 90a; mma_sync before sm_80), and a forced configuration
// whose shared memory this GPU does not have: the reason is named either way.
bool refusal_allowed(const bench::Record& r) {
  if (r.status != "skipped" || r.message.empty()) return false;
  if (r.message.rfind("cannot run here: ", 0) == 0) return true;
  if (r.message.find("of shared memory per block; this GPU allows") != std::string::npos) return true;
  return r.dtype != "f32";
}

void expect_all_pass(const std::vector<bench::Record>& records, const std::string& context) {
  ASSERT_FALSE(records.empty());
  for (const bench::Record& r : records) {
    SCOPED_TRACE(fmt::format("{} {} {}x{}x{} seed {}", context, r.variant, r.m, r.n, r.k, r.seed));
    if (refusal_allowed(r)) continue;
    EXPECT_EQ(r.status, "ok") << r.message;
    if (r.status != "ok") continue;
    EXPECT_TRUE(r.verified);
    EXPECT_TRUE(r.verification.passed) << r.verification.summary();
  }
}

// How many CUDA variants run under --dtype `dtype` --out-dtype `out_dtype` (its rungs and
// its anchor).
std::size_t rungs_of(DType dtype, DType out_dtype) {
  const Precision precision = *precision_for(dtype, out_dtype);
  std::size_t count = 0;
  for (const Variant& v : variants(Backend::Cuda)) count += v.precision() == precision ? 1 : 0;
  return count;
}

class CudaLadder : public ::testing::TestWithParam<Case> {};

TEST_P(CudaLadder, EveryRungMatchesTheReference) {
  REQUIRE_CUDA(ex);
  const Case c = GetParam();
  bench::Options o;
  o.dtype = c.dtype;
  o.out_dtype = c.out_dtype;
  o.shapes = kAwkwardShapes;
  o.op_a = c.op_a;
  o.op_b = c.op_b;
  o.layout = c.layout;
  o.alpha = c.alpha;
  o.beta = c.beta;
  o.ld_padding = c.pad;
  o.seed = fresh_seed();
  o.time = false;
  std::vector<bench::Record> records;
  ASSERT_TRUE(bench::run(o, *ex, records).is_ok());
  EXPECT_EQ(records.size(), kAwkwardShapes.size() * rungs_of(c.dtype, c.out_dtype));
  expect_all_pass(records, describe(c));
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const auto& [dtype, output] : every_precision())
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T})
        for (Layout l : {Layout::RowMajor, Layout::ColMajor}) {
          cases.push_back({dtype, output, a, b, l, 1.0, 0.0, 0});   // beta = 0: C holds NaN, must not leak
          cases.push_back({dtype, output, a, b, l, -1.5, 0.75, 3});  // ld > cols, alpha/beta in play
        }
  return cases;
}

// Test names allow only letters, digits and underscores.
std::string test_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = describe(info.param);
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllTranspositionsAndLayouts, CudaLadder, ::testing::ValuesIn(all_cases()), test_name);

// Aligned leading dimensions (multiples of 4) take the 16-byte paths of the vector rungs;
// odd ones (pad 3 above, odd sizes) the element-wise paths. Both must agree with the reference.
TEST(CudaLadder, VectorPathsOnAlignedShapes) {
  REQUIRE_CUDA(ex);
  bench::Options o;
  o.shapes = {{256, 256, 256}, {128, 384, 64}, {260, 132, 36}};
  o.ld_padding = 4;
  o.seed = fresh_seed();
  o.time = false;
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T}) {
      o.op_a = a;
      o.op_b = b;
      std::vector<bench::Record> records;
      ASSERT_TRUE(bench::run(o, *ex, records).is_ok());
      expect_all_pass(records, fmt::format("{}{}", to_string(a), to_string(b)));
    }
}

// Refusals are allowed per layout, not per rung: over every transposition and layout,
// each tensor-core rung runs and passes on a shape whose rows are 16-byte aligned (in FP8
// too: K = 80, which cuBLASLt's FP8 matmul needs).
TEST(CudaLadder, EveryTensorCoreRungRunsSomewhere) {
  REQUIRE_CUDA(ex);
  for (const auto& [dtype, output] : every_precision()) {
    if (dtype == DType::F32) continue;
    const std::string types = types_of(dtype, output);
    bench::Options o;
    o.dtype = dtype;
    o.out_dtype = output;
    o.shapes = {{136, 264, 80}};
    o.seed = fresh_seed();
    o.time = false;
    std::map<std::string, int> ran;
    for (Layout l : {Layout::RowMajor, Layout::ColMajor})
      for (Op a : {Op::N, Op::T})
        for (Op b : {Op::N, Op::T}) {
          o.op_a = a;
          o.op_b = b;
          o.layout = l;
          std::vector<bench::Record> records;
          ASSERT_TRUE(bench::run(o, *ex, records).is_ok());
          expect_all_pass(records, fmt::format("{} {}{} {}", types, to_string(a), to_string(b), to_string(l)));
          for (const bench::Record& r : records) ran[r.variant] += r.status == "ok" && r.verification.passed;
        }
    for (const Variant& v : variants(Backend::Cuda)) {
      if (v.precision() != *precision_for(dtype, output) || !unavailable_here(v).empty()) continue;
      EXPECT_GT(ran[v.name], 0) << v.name << " (" << types << ") ran on no layout";
    }
  }
}

// k = 0 and alpha = 0: C <- beta * C through the library's scale path, A and B not read; a
// 16-bit C scaled and stored in its own type.
TEST(CudaLadder, ScaleOnlyProblems) {
  REQUIRE_CUDA(ex);
  for (const auto& [dtype, output] : every_precision()) {
    const std::string types = types_of(dtype, output);
    bench::Options o;
    o.dtype = dtype;
    o.out_dtype = output;
    o.shapes = {{37, 41, 0}, {64, 64, 0}};
    o.beta = 0.5;
    o.seed = fresh_seed();
    o.time = false;
    std::vector<bench::Record> records;
    ASSERT_TRUE(bench::run(o, *ex, records).is_ok());
    expect_all_pass(records, fmt::format("{} k=0", types));
    o.shapes = {{37, 41, 13}};
    o.alpha = 0.0;
    records.clear();
    ASSERT_TRUE(bench::run(o, *ex, records).is_ok());
    expect_all_pass(records, fmt::format("{} alpha=0", types));
  }
}

// Every --l2-flush runs between timed repetitions without an error (beta != 0: C is
// restored before each flush and read by every repetition), each rung verified and timed
// the repetitions asked for.
TEST(CudaLadder, EveryCacheFlushBetweenRepetitions) {
  REQUIRE_CUDA(ex);
  for (CacheFlush flush : {CacheFlush::Clean, CacheFlush::Write, CacheFlush::None}) {
    bench::Options o;
    o.variants = {"naive", "cublas_sgemm"};
    o.shapes = {{67, 45, 33}};
    o.beta = 0.75;
    o.seed = fresh_seed();
    o.flush = flush;
    o.warmup = 0;
    o.min_reps = o.max_reps = 3;
    o.min_seconds = 0;
    std::vector<bench::Record> records;
    const Status status = bench::run(o, *ex, records);
    ASSERT_TRUE(status.is_ok()) << to_string(flush) << ": " << status.describe();
    expect_all_pass(records, fmt::format("--l2-flush {}", to_string(flush)));
    for (const bench::Record& r : records) {
      EXPECT_TRUE(r.timed) << r.variant << " " << to_string(flush) << ": " << r.message;
      EXPECT_EQ(r.timing.reps, 3) << r.variant << " " << to_string(flush);
    }
  }
}

// The flush's read-back takes whole 16-byte words from an aligned buffer, and says so
// rather than read past the end.
TEST(CudaLadder, ReadThroughL2RefusesPartialWords) {
  REQUIRE_CUDA(ex);
  cuda::DeviceMemory buffer, sink;
  ASSERT_TRUE(cuda::DeviceMemory::allocate(64, buffer).is_ok());
  ASSERT_TRUE(cuda::DeviceMemory::allocate(sizeof(unsigned), sink).is_ok());
  const auto stream = static_cast<cudaStream_t>(ex->context().stream());
  const Status odd_size = cuda::read_through_l2(buffer.data(), 40 + 4, 132, 1u, sink.as<unsigned>(), stream);
  EXPECT_EQ(odd_size.code(), StatusCode::InvalidValue) << odd_size.describe();
  const Status odd_base = cuda::read_through_l2(buffer.as<unsigned char>() + 4, 32, 132, 1u, sink.as<unsigned>(), stream);
  EXPECT_EQ(odd_base.code(), StatusCode::InvalidValue) << odd_base.describe();
  EXPECT_TRUE(cuda::read_through_l2(buffer.data(), 64, 132, 1u, sink.as<unsigned>(), stream).is_ok());
  EXPECT_TRUE(ex->synchronize().is_ok());
}

// A failed CUDA call is reported by that call alone: the error the runtime also keeps as the
// last error must not come back at the next launch check, blamed on a kernel that ran fine.
TEST(CudaLadder, FailedCallIsNotBlamedOnTheNextLaunch) {
  REQUIRE_CUDA(ex);
  cuda::DeviceMemory too_big, buffer, sink;
  const Status refused = cuda::DeviceMemory::allocate(std::size_t{1} << 60, too_big);
  EXPECT_FALSE(refused.is_ok());
  ASSERT_TRUE(cuda::DeviceMemory::allocate(64, buffer).is_ok());
  ASSERT_TRUE(cuda::DeviceMemory::allocate(sizeof(unsigned), sink).is_ok());
  const auto stream = static_cast<cudaStream_t>(ex->context().stream());
  const Status launched = cuda::read_through_l2(buffer.data(), 64, 132, 1u, sink.as<unsigned>(), stream);
  EXPECT_TRUE(launched.is_ok()) << launched.describe();
  EXPECT_TRUE(ex->synchronize().is_ok());
}

// A repetition's events time the GPU, not the host: work that sleeps on the host before it
// enqueues a tiny copy times far below the sleep (the launch gate holds the stream until
// the work is enqueued), with and without an L2 flush ahead of it.
TEST(CudaLadder, TimingLeavesOutTheHostsLaunchPath) {
  REQUIRE_CUDA(ex);
  std::unique_ptr<Buffer> from, to;
  ASSERT_TRUE(ex->allocate(4096, from).is_ok());
  ASSERT_TRUE(ex->allocate(4096, to).is_ok());
  constexpr auto kHostDelay = std::chrono::milliseconds(20);
  for (CacheFlush flush : {CacheFlush::None, CacheFlush::Clean}) {
    ASSERT_TRUE(ex->flush_caches(flush).is_ok());
    double ms = -1;
    const Status timed = ex->time_once(
        [&] {
          std::this_thread::sleep_for(kHostDelay);
          return ex->copy_within(to->data(), from->data(), 4096);
        },
        ms);
    ASSERT_TRUE(timed.is_ok()) << timed.describe();
    EXPECT_GE(ms, 0.0);
    EXPECT_LT(ms, 2.0) << "the host's " << kHostDelay.count() << " ms of launch path landed inside the events";
  }
}

// The 2-byte tensor-core rungs take cp.async only where every row of A and B starts on a
// 16-byte boundary (ld a multiple of 8 elements); these shapes have such rows (through
// the padding) with ragged edges everywhere: m and n past a tile, k ending inside a
// 16-byte chunk, k = 1; C in float32 and in the input type. Each run must say it took that
// path, and agree with the reference.
TEST(CudaLadder, TensorCoreAsyncPathOnAlignedRows) {
  REQUIRE_CUDA(ex);
  // (shape, padding): the contiguous extent of each matrix plus the padding is a multiple
  // of 8 for every transposition and layout (131 + 5, 67 + 5; 129 + 7, 1 + 7; 256 + 0).
  const std::vector<std::pair<bench::Shape, std::int64_t>> problems = {
      {{131, 131, 67}, 5}, {{129, 129, 1}, 7}, {{256, 256, 256}, 0}, {{136, 264, 72}, 0}};
  for (const auto& [dtype, output] : every_precision())
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T})
        for (Layout l : {Layout::RowMajor, Layout::ColMajor})
          for (const auto& [shape, pad] : problems) {
            if (storage_bytes(dtype) != 2) continue;
            const std::string context = fmt::format("{} {}{} {} {}x{}x{} pad {}", types_of(dtype, output),
                                                    to_string(a), to_string(b), to_string(l), shape.m, shape.n,
                                                    shape.k, pad);
            bench::Options o;
            o.dtype = dtype;
            o.out_dtype = output;
            o.shapes = {shape};
            o.op_a = a;
            o.op_b = b;
            o.layout = l;
            o.ld_padding = pad;
            o.alpha = 0.75;
            o.beta = -1.25;
            o.seed = fresh_seed();
            o.time = false;
            int inspected = 0;
            o.inspect = [&](const GemmProblem& problem, const Variant& v, const bench::Record&) {
              // The mma_sync rungs' cp.async path (the wgmma rungs load through TMA).
              if (!v.kernel_info || v.name.rfind("mma_sync", 0) != 0) return;
              KernelInfo info;
              ASSERT_TRUE(v.kernel_info(problem, info).is_ok()) << context;
              EXPECT_NE(info.name.find("cp.async"), std::string::npos) << context << ": " << info.name;
              ++inspected;
            };
            std::vector<bench::Record> records;
            ASSERT_TRUE(bench::run(o, *ex, records).is_ok());
            expect_all_pass(records, context);
            EXPECT_GT(inspected, 0) << context << ": no rung named its kernel";
          }
}

// A rung with named configurations, each one bound in turn (gemmlab::configure on each of
// variant.configs, run by bench through Options::config), on every transposition, with
// 16-byte-aligned rows and without: each instantiation has its own launch setup (dynamic
// shared memory above 48 KB for some).
struct ConfigTable {
  const char* variant;
  DType dtype;
  bench::Shape aligned, unaligned;    // with `aligned_pad` every ld is a multiple of 16 bytes
  std::int64_t aligned_pad;
  DType out_dtype = DType::F32;
};

void check_every_configuration(Executor& ex, const ConfigTable& table) {
  const Variant* variant = find_variant(Backend::Cuda, table.variant);
  ASSERT_NE(variant, nullptr) << table.variant;
  if (const std::string why = unavailable_here(*variant); !why.empty()) {
    std::printf("SKIPPED: %s cannot run here: %s\n", table.variant, why.c_str());
    return;
  }
  ASSERT_GT(variant->configs.size(), 1u) << table.variant << " lists no configurations to choose from";
  EXPECT_EQ(variant->configs.front().name, "auto");
  EXPECT_EQ(variant->config_name, "auto");
  for (const NamedConfig& named : variant->configs) {
    const std::string& config = named.name;
    Variant configured;
    const Status bound = configure(*variant, config, configured);
    ASSERT_TRUE(bound.is_ok()) << bound.describe();
    EXPECT_EQ(configured.config_name, config);
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T})
        for (const auto& [shape, pad] : {std::pair{table.aligned, table.aligned_pad}, std::pair{table.unaligned, std::int64_t{0}}}) {
          bench::Options o;
          o.dtype = table.dtype;
          o.out_dtype = table.out_dtype;
          o.variants = {table.variant};
          o.config = config;
          o.shapes = {shape};
          o.op_a = a;
          o.op_b = b;
          o.ld_padding = pad;
          o.beta = 0.5;
          o.seed = fresh_seed();
          o.time = false;
          std::vector<bench::Record> records;
          ASSERT_TRUE(bench::run(o, ex, records).is_ok());
          const std::string context = fmt::format("config {} {}{} pad {}", config, to_string(a), to_string(b), pad);
          expect_all_pass(records, context);
          for (const bench::Record& r : records) EXPECT_EQ(r.config_name, config) << context;
        }
  }
}

// 10_pipelined.cu: "auto" and each entry of kChoices; 4-byte floats: pad 4 on a multiple of 4.
TEST(CudaLadder, EveryPipelinedConfiguration) {
  REQUIRE_CUDA(ex);
  check_every_configuration(*ex, {"pipelined", DType::F32, {300, 260, 68}, {301, 259, 67}, 4});
}

// A configuration a rung does not have is a usage error (InvalidValue) naming the rung, the
// name asked for and every valid configuration; a stale name never runs.
TEST(CudaLadder, UnknownConfigurationListsTheValidOnes) {
  REQUIRE_CUDA(ex);
  for (const char* rung :
       {"pipelined", "mma_sync_bf16", "mma_sync_f16", "mma_sync_bf16_bf16", "mma_sync_f16_f16"}) {
    const Variant* v = find_variant(Backend::Cuda, rung);
    ASSERT_NE(v, nullptr) << rung;
    Variant out;
    const Status s = configure(*v, "256x256", out);
    EXPECT_EQ(s.code(), StatusCode::InvalidValue) << s.describe();
    EXPECT_NE(s.message().find(rung), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("256x256"), std::string::npos) << s.message();
    for (const NamedConfig& c : v->configs) EXPECT_NE(s.message().find(c.name), std::string::npos) << c.name;
    bench::Options o;
    o.dtype = v->input;  // f32, bf16, f16: each rung's own --dtype and --out-dtype
    o.out_dtype = v->output;
    o.variants = {rung};
    o.config = "256x256";
    o.shapes = {{64, 64, 64}};
    o.seed = fresh_seed();
    o.time = false;
    std::vector<bench::Record> records;
    EXPECT_EQ(bench::run(o, *ex, records).code(), StatusCode::InvalidValue) << rung;
    EXPECT_TRUE(records.empty()) << rung;
  }
}

// NN problems at least kTransposeMinN (2048) columns wide go through A^T in a workspace
// (10_pipelined.cu): ragged m and k, k = 1, a single row, rows that are not 16-byte aligned
// (pad 1, which the copy aligns), beta = 0 over NaN and beta != 0, both layouts (column-major
// storage swaps the operands, so N stays the wide side only where m and n are both wide).
// Each run must say it took that path, and agree with the reference.
TEST(CudaLadder, PipelinedTransposesAForWideNN) {
  REQUIRE_CUDA(ex);
  const std::vector<std::pair<bench::Shape, std::int64_t>> problems = {
      {{301, 2049, 67}, 1}, {{1, 2048, 1}, 0}, {{130, 4099, 260}, 3}, {{2050, 2051, 33}, 1}};
  for (Layout l : {Layout::RowMajor, Layout::ColMajor})
    for (double beta : {0.0, 0.5})
      for (const auto& [shape, pad] : problems) {
        const std::string context =
            fmt::format("{} {}x{}x{} pad {} beta {}", to_string(l), shape.m, shape.n, shape.k, pad, beta);
        bench::Options o;
        o.variants = {"pipelined"};
        o.shapes = {shape};
        o.layout = l;
        o.ld_padding = pad;
        o.alpha = -1.25;
        o.beta = beta;
        o.seed = fresh_seed();
        o.time = false;
        int transposed = 0;
        o.inspect = [&](const GemmProblem& problem, const Variant& v, const bench::Record&) {
          KernelInfo info;
          ASSERT_TRUE(v.kernel_info(problem, info).is_ok()) << context;
          transposed += info.name.find("A transposed") != std::string::npos ? 1 : 0;
        };
        std::vector<bench::Record> records;
        ASSERT_TRUE(bench::run(o, *ex, records).is_ok());
        expect_all_pass(records, context);
        // Row-major: n is the wide side. Column-major runs C^T = B^T A^T, whose n is m.
        const bool wide = (l == Layout::RowMajor ? shape.n : shape.m) >= 2048;
        EXPECT_EQ(transposed, wide ? 1 : 0) << context;
      }
}

// 11_mma_sync.cu: "auto" and each entry of kChoices; 2-byte elements: pad 8 on a multiple
// of 8, so every operand goes by cp.async; ragged against every tile on every side.
TEST(CudaLadder, EveryMmaSyncConfiguration) {
  REQUIRE_CUDA(ex);
  check_every_configuration(*ex, {"mma_sync_bf16", DType::BF16, {296, 264, 136}, {301, 259, 67}, 8});
  // Its 16-bit-C twin: the same configurations, an epilogue that rounds C to bf16.
  check_every_configuration(*ex,
                            {"mma_sync_bf16_bf16", DType::BF16, {296, 264, 136}, {301, 259, 67}, 8, DType::BF16});
}

// 11_mma_sync.cu with few tiles and a long K: C of 1 to 100 rows takes the short tiles, and
// each tile's K is split into ranges whose partials the last block adds (split_k.cuh). Every
// transposition and both layouts (column-major runs C^T, whose rows are n: the short tiles
// then go unused but the split stays), beta = 0 over NaN and beta != 0 with padded rows, C
// in float32 and in bf16; the problems run one after another in one context, so each
// finds the counters the previous left at zero. Row-major runs must say they split K.
TEST(CudaLadder, MmaSyncSplitsKWhereTilesAreFew) {
  REQUIRE_CUDA(ex);
  const std::vector<bench::Shape> shapes = {
      {1, 1000, 4097}, {16, 4096, 2048}, {33, 515, 3001}, {64, 257, 8192}, {100, 300, 5000}};
  for (const char* rung : {"mma_sync_bf16", "mma_sync_bf16_bf16"})
    for (Layout l : {Layout::RowMajor, Layout::ColMajor})
      for (Op a : {Op::N, Op::T})
        for (Op b : {Op::N, Op::T})
          for (double beta : {0.0, -0.5}) {
            const std::string context =
                fmt::format("{} {} {}{} beta {}", rung, to_string(l), to_string(a), to_string(b), beta);
            const Variant* v = find_variant(Backend::Cuda, rung);
            ASSERT_NE(v, nullptr);
            bench::Options o;
            o.dtype = DType::BF16;
            o.out_dtype = v->output;
            o.variants = {rung};
            o.shapes = shapes;
            o.op_a = a;
            o.op_b = b;
            o.layout = l;
            o.alpha = 0.75;
            o.beta = beta;
            o.ld_padding = beta == 0.0 ? 0 : 8;
            o.seed = fresh_seed();
            o.time = false;
            int split = 0;
            o.inspect = [&](const GemmProblem& problem, const Variant& run, const bench::Record&) {
              KernelInfo info;
              ASSERT_TRUE(run.kernel_info(problem, info).is_ok()) << context;
              split += info.name.find("(split-K)") != std::string::npos ? 1 : 0;
            };
            std::vector<bench::Record> records;
            ASSERT_TRUE(bench::run(o, *ex, records).is_ok());
            if (!records.empty() && refusal_allowed(records.front())) GTEST_SKIP() << records.front().message;
            EXPECT_EQ(records.size(), shapes.size()) << context;
            expect_all_pass(records, context);
            if (l == Layout::RowMajor) {
              EXPECT_EQ(split, static_cast<int>(shapes.size())) << context;
            }
          }
}

// auto's rule for C of a few rows (choose.cpp, When::FewRows): up to 64 rows the mma_sync rung
// of the precision runs (on sm_80 and later), in the short tile that holds them, verified.
TEST(CudaLadder, AutoTakesShortTilesForFewRows) {
  REQUIRE_CUDA(ex);
  for (const auto& [dtype, output, rung] : {std::tuple{DType::BF16, DType::F32, "mma_sync_bf16"},
                                            std::tuple{DType::F16, DType::F16, "mma_sync_f16_f16"}}) {
    const Variant* v = find_variant(Backend::Cuda, rung);
    ASSERT_NE(v, nullptr);
    if (!check_runs_here(*v)) GTEST_SKIP() << check_runs_here(*v).message();
    bench::Options o;
    o.dtype = dtype;
    o.out_dtype = output;
    o.variants = {"auto"};
    o.shapes = {{1, 4096, 4096}, {16, 1000, 4096}, {64, 520, 3000}};
    o.op_b = Op::T;
    o.seed = fresh_seed();
    o.time = false;
    std::vector<bench::Record> records;
    ASSERT_TRUE(bench::run(o, *ex, records).is_ok());
    expect_all_pass(records, rung);
    for (const bench::Record& r : records)
      EXPECT_EQ(r.technique.rfind(fmt::format("auto chose {}", rung), 0), 0u) << r.m << ": " << r.technique;
  }
}

// Large enough that every block of every rung is busy, and k long enough that rounding
// errors accumulate: 4096^2 x 4096 against the float64 reference.
TEST(CudaLadderLarge, Square4096) {
  REQUIRE_CUDA(ex);
  for (const auto& [dtype, output] : every_precision()) {
    bench::Options o;
    o.dtype = dtype;
    o.out_dtype = output;
    o.shapes = {{4096, 4096, 4096}};
    o.seed = fresh_seed();
    o.time = false;
    std::vector<bench::Record> records;
    ASSERT_TRUE(bench::run(o, *ex, records).is_ok());
    expect_all_pass(records, fmt::format("{} 4096", types_of(dtype, output)));
  }
}

}  // namespace
}  // namespace gemmlab
