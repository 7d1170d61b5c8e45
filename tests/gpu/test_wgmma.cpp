// The Hopper tensor-core rungs (bf16, tf32, 3xTF32) against the float64 reference on their
// stored inputs: ragged edges (TMA zero-fill), every transposition, both layouts, ld > cols,
// alpha/beta, beta = 0 with NaN in C, the padded and K-major copies of operands the kernel
// cannot read directly, and 3xTF32's accuracy. Label: gpu; skipped without a device of
// compute capability 9.0.
#include <gtest/gtest.h>

#if GEMMLAB_HAVE_CUDA
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/random.hpp"
#include "bench/harness.hpp"
#include "core/element.hpp"
#include "core/executor.hpp"
#include "core/reference.hpp"
#include "core/verify.hpp"
#include "cuda/ladder/rungs.hpp"
#include "cuda/hopper/stream_k.hpp"
#include "gemmlab/gemm.hpp"
#include "gemmlab/availability.hpp"
#include "gemmlab/registry.hpp"
#include "library/workspace.hpp"
#include "support/context.hpp"

namespace gemmlab {
namespace {

bool hopper_present() {
  if (!cuda_device_present()) return false;
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return false;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  return major == 9 && minor == 0;
}

// An H100 with a build that has no sm_90a code (CMAKE_CUDA_ARCHITECTURES without 90a): the
// rungs say so (gemmlab/availability.hpp), and these tests skip.
std::string hopper_code_missing() {
  const Variant* v = find_variant(Backend::Cuda, "wgmma_bf16");
  return v ? unavailable_here(*v) : "no wgmma_bf16 in the registry";
}

#define REQUIRE_HOPPER()                                                                                  \
  if (!hopper_present()) GTEST_SKIP() << "no sm_90 CUDA device on this machine (or no CUDA in this build)"; \
  if (const std::string missing = hopper_code_missing(); !missing.empty()) GTEST_SKIP() << "SKIPPED: " << missing

struct DeviceArray {
  void* p = nullptr;
  explicit DeviceArray(std::size_t bytes) { EXPECT_EQ(cudaMalloc(&p, bytes), cudaSuccess); }
  ~DeviceArray() { cudaFree(p); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
};

struct Case {
  std::int64_t m, n, k;
  Op op_a, op_b;
  Layout layout;
  double alpha, beta;
  std::int64_t pad;  // extra elements per leading dimension, on top of rounding up to 8
};

std::string describe(const Case& c) {
  return fmt::format("{}x{}x{} {}{} {} alpha {} beta {} pad {}", c.m, c.n, c.k, to_string(c.op_a),
                     to_string(c.op_b), to_string(c.layout), c.alpha, c.beta, c.pad);
}

Matrix shaped(std::int64_t rows, std::int64_t cols, Layout layout, DType type, std::int64_t pad) {
  Matrix x;
  x.rows = rows;
  x.cols = cols;
  x.layout = layout;
  x.dtype = type;
  const std::int64_t extent = x.contiguous_extent();
  x.ld = (extent + 7) / 8 * 8 + pad;  // TMA: row pitch a multiple of 16 bytes
  return x;
}

// The case's problem for `variant`: shapes, transpositions, layouts and scalars, no data.
GemmProblem problem_of(const Variant& variant, const Case& c) {
  GemmProblem p;
  p.m = c.m;
  p.n = c.n;
  p.k = c.k;
  p.op_a = c.op_a;
  p.op_b = c.op_b;
  p.alpha = c.alpha;
  p.beta = c.beta;
  p.compute = variant.compute;
  const DType in = variant.input;
  p.a = c.op_a == Op::N ? shaped(c.m, c.k, c.layout, in, c.pad) : shaped(c.k, c.m, c.layout, in, c.pad);
  p.b = c.op_b == Op::N ? shaped(c.k, c.n, c.layout, in, c.pad) : shaped(c.n, c.k, c.layout, in, c.pad);
  p.c = shaped(c.m, c.n, c.layout, variant.output, c.pad);
  return p;
}

// Runs `variant` on the case and checks every element of C against the reference. Returns
// false (checking nothing) when the variant refuses the layout and `may_refuse` is set.
bool check_case(const Variant& variant, const Case& c, std::uint64_t seed, bool may_refuse = false) {
  SCOPED_TRACE(describe(c) + fmt::format(" seed {}", seed));
  GemmProblem host = problem_of(variant, c);

  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  // Inputs in their storage type (bf16, f16, or float32, which tf32 math reduces).
  const auto random_operand = [&](const Matrix& x) {
    std::vector<float> values(static_cast<std::size_t>(x.span_elements()));
    for (float& v : values) v = round_to_storage(dist(rng), x.dtype);
    const std::vector<std::byte> bytes = encode(values, x.dtype);
    std::vector<unsigned char> out(bytes.size());
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  };
  std::vector<unsigned char> a = random_operand(host.a), b = random_operand(host.b);
  std::vector<float> c0(static_cast<std::size_t>(host.c.span_elements()));
  // beta = 0: C holds NaN, which must neither leak nor survive. C in its storage type (float,
  // or the 2-byte input type).
  for (auto& x : c0) x = c.beta == 0.0 ? std::numeric_limits<float>::quiet_NaN() : round_to_storage(dist(rng), host.c.dtype);
  const std::vector<std::byte> c0_stored = encode(c0, host.c.dtype);
  host.a.data = a.data();
  host.b.data = b.data();
  host.c.data = const_cast<std::byte*>(c0_stored.data());
  EXPECT_TRUE(validate(host).is_ok());
  ReferenceResult ref;
  if (!reference_gemm(host, ref).is_ok()) {
    ADD_FAILURE() << "reference failed";
    return false;
  }

  DeviceArray da(a.size()), db(b.size()), dc(c0_stored.size());
  EXPECT_EQ(cudaMemcpy(da.p, a.data(), a.size(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(db.p, b.data(), b.size(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(dc.p, c0_stored.data(), c0_stored.size(), cudaMemcpyHostToDevice), cudaSuccess);
  GemmProblem dev = host;
  dev.a.data = da.p;
  dev.b.data = db.p;
  dev.c.data = dc.p;
  const Status can = variant.can_implement(dev);
  if (!can.is_ok() && may_refuse) {
    EXPECT_EQ(can.code(), StatusCode::NotSupported) << can.describe();
    return false;
  }
  EXPECT_TRUE(can.is_ok()) << can.describe();
  if (!can.is_ok()) return false;
  const Status ran = gemm(testing::cuda_context(), dev, variant);  // prepare() (padded copies), then run()
  EXPECT_TRUE(ran.is_ok()) << ran.describe();
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<std::byte> got_stored(c0_stored.size());
  EXPECT_EQ(cudaMemcpy(got_stored.data(), dc.p, got_stored.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  std::vector<double> got(c0.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    got[i] = load_element(got_stored.data(), static_cast<std::int64_t>(i), host.c.dtype);

  // The rung's own bound where it has one (3xTF32), else its types': bf16 products are
  // exact in f32, tf32 math reduces each f32 input, the tensor cores' adders truncate, a
  // 2-byte C rounds the result once more.
  const Tolerance tolerance = variant.tolerance.value_or(tolerance_for(variant.input, variant.compute, variant.output));
  std::int64_t bad = 0, unwritten = 0;
  for (std::int64_t i = 0; i < c.m; ++i)
    for (std::int64_t j = 0; j < c.n; ++j) {
      const double v = got[static_cast<std::size_t>(host.c.offset(i, j))];
      const std::size_t r = static_cast<std::size_t>(i * c.n + j);
      if (std::isnan(v)) {
        ++unwritten;
        continue;
      }
      const double tol = tolerance.bound(c.k, ref.magnitude[r], ref.value[r]);
      if (std::fabs(v - ref.value[r]) > tol && ++bad <= 3)
        ADD_FAILURE() << fmt::format("C({}, {}) = {} vs reference {} (tolerance {:.3g})", i, j, v, ref.value[r], tol);
    }
  EXPECT_EQ(unwritten, 0) << "elements of C left unwritten (NaN)";
  EXPECT_EQ(bad, 0) << "elements of C outside the error bound";
  // The padding of C must come back untouched.
  for (std::int64_t line = 0; line < host.c.lines(); ++line)
    for (std::int64_t e = host.c.contiguous_extent(); e < host.c.ld && line * host.c.ld + e < static_cast<std::int64_t>(got.size()); ++e) {
      const std::size_t at = static_cast<std::size_t>(line * host.c.ld + e);
      const bool same = std::isnan(c0[at]) ? std::isnan(got[at]) : got[at] == static_cast<double>(c0[at]);
      if (!same) {
        ADD_FAILURE() << "C's padding was written at line " << line << ", element " << e;
        return true;
      }
    }
  return true;
}

// A row-major NN tf32 problem of n^3 whose operands all point at `data` (for explain).
GemmProblem tf32_row_major_nn(std::int64_t n, void* data) {
  GemmProblem p;
  p.m = p.n = p.k = n;
  p.compute = DType::TF32;
  p.a = shaped(n, n, Layout::RowMajor, DType::F32, 0);
  p.b = p.a;
  p.c = p.a;
  p.a.data = p.b.data = p.c.data = data;
  return p;
}

const std::vector<std::int64_t> kShapes[] = {
    {1, 1, 1},     {127, 131, 257}, {128, 256, 64}, {129, 257, 65}, {255, 17, 1},
    {33, 300, 100}, {1000, 7, 300},  {5, 1000, 64},  {300, 520, 1023}, {256, 512, 256},
    {130, 250, 321}, {64, 600, 577},  // K from one stage to many times round the ring
};

// The 2-byte wgmma rungs: the plain bf16 pipeline and the warp-specialised one for bf16 and
// f16, with float C and with C in the input type.
std::vector<Variant> two_byte_rungs() {
  return {cuda::wgmma_bf16_variant(),
          cuda::wgmma_ws_variant(DType::BF16),
          cuda::wgmma_ws_variant(DType::F16),
          cuda::wgmma_ws_variant(DType::BF16, DType::BF16),
          cuda::wgmma_ws_variant(DType::F16, DType::F16)};
}

TEST(Wgmma, Bf16EveryShapeTranspositionAndLayout) {
  REQUIRE_HOPPER();
  std::uint64_t seed = fresh_seed();
  for (const Variant& v : two_byte_rungs())
    for (Layout layout : {Layout::RowMajor, Layout::ColMajor})
      for (Op op_a : {Op::N, Op::T})
        for (Op op_b : {Op::N, Op::T})
          for (const auto& s : kShapes) check_case(v, {s[0], s[1], s[2], op_a, op_b, layout, 1.0, 0.0, 0}, seed++);
}

TEST(Wgmma, Bf16AlphaBetaAndPaddedLd) {
  REQUIRE_HOPPER();
  std::uint64_t seed = fresh_seed();
  for (const Variant& v : two_byte_rungs())
    for (Op op_a : {Op::N, Op::T})
      for (Op op_b : {Op::N, Op::T}) {
        check_case(v, {200, 300, 129, op_a, op_b, Layout::RowMajor, -1.5, 0.5, 8}, seed++);
        check_case(v, {131, 257, 77, op_a, op_b, Layout::ColMajor, 0.25, -2.0, 24}, seed++);
        check_case(v, {70, 90, 400, op_a, op_b, Layout::RowMajor, 2.0, 0.0, 16}, seed++);  // NaN C, alpha != 1
      }
}

TEST(Wgmma, Bf16LargeAgainstTheReference) {
  REQUIRE_HOPPER();
  for (const Variant& v : two_byte_rungs()) {
    check_case(v, {1024, 1536, 2048, Op::N, Op::N, Layout::RowMajor, 1.0, 0.0, 0}, fresh_seed());
    check_case(v, {1000, 1000, 1000, Op::T, Op::N, Layout::RowMajor, 1.0, 1.0, 0}, fresh_seed());
    // Several tiles per block, beta = 0 and a C TMA can address: a 2-byte C's tiles are held
    // and stored during the next tile's K steps; the last column of tiles straddles C's edge
    // and is stored at once.
    check_case(v, {2048, 4349, 200, Op::N, Op::T, Layout::RowMajor, -0.75, 0.0, 3}, fresh_seed());
  }
}

// tf32 with A K-major and several tiles per block, beta = 0: the last chunk of each tile is
// held and stored during the next tile's K steps (epilogue.cuh); the last column of tiles
// straddles C's edge and is stored at once. NT row-major and the column-major equivalent.
TEST(Wgmma, Tf32HeldChunksAcrossTiles) {
  REQUIRE_HOPPER();
  const Variant t = cuda::wgmma_ws_tf32_variant();
  check_case(t, {2048, 4349, 200, Op::N, Op::T, Layout::RowMajor, 1.5, 0.0, 3}, fresh_seed());
  check_case(t, {4349, 2048, 160, Op::T, Op::N, Layout::ColMajor, -1.0, 0.0, 0}, fresh_seed());
}

// Rows TMA cannot address (ld not a multiple of 16 bytes, or a misaligned base) are copied
// into a padded workspace first: still correct, and explain names the copy with the kernel.
TEST(Wgmma, OperandsTmaCannotAddressArePadded) {
  REQUIRE_HOPPER();
  const Variant v = cuda::wgmma_ws_variant(DType::BF16);
  const Variant t = cuda::wgmma_ws_tf32_variant();
  std::uint64_t seed = fresh_seed();
  for (const Variant& b : two_byte_rungs()) {
    for (Op op_a : {Op::N, Op::T})
      for (Op op_b : {Op::N, Op::T}) check_case(b, {67, 45, 33, op_a, op_b, Layout::RowMajor, 1.0, 0.5, 3}, seed++);
    check_case(b, {300, 257, 129, Op::N, Op::N, Layout::ColMajor, -1.0, 0.0, 1}, seed++);
    check_case(b, {129, 300, 500, Op::T, Op::T, Layout::RowMajor, 0.5, 0.0, 5}, seed++);
  }
  check_case(t, {67, 45, 33, Op::N, Op::T, Layout::RowMajor, 1.0, 0.5, 3}, seed++);
  check_case(t, {300, 257, 129, Op::T, Op::N, Layout::ColMajor, -1.0, 0.0, 1}, seed++);

  DeviceArray buffer(1 << 20);
  GemmProblem p;
  p.m = p.n = p.k = 33;
  p.a = shaped(33, 33, Layout::RowMajor, DType::BF16, 0);
  p.b = p.a;
  p.c = shaped(33, 33, Layout::RowMajor, DType::F32, 0);
  p.a.ld = 33;  // 66-byte rows: not a multiple of 16
  p.a.data = p.b.data = p.c.data = buffer.p;
  EXPECT_TRUE(v.can_implement(p).is_ok());
  KernelInfo info;
  ASSERT_TRUE(v.kernel_info(p, info).is_ok());
  EXPECT_NE(info.name.find("wgmma"), std::string::npos) << info.name;
  EXPECT_NE(info.name.find("padded copy of A"), std::string::npos) << info.name;
  EXPECT_NE(info.name.find("MB moved)"), std::string::npos) << info.name;  // the copy's traffic
  p.a.ld = 40;
  ASSERT_TRUE(v.kernel_info(p, info).is_ok());
  EXPECT_EQ(info.name.find("padded"), std::string::npos) << info.name;
  p.a.ld = 33;
  const Variant plain = cuda::wgmma_bf16_variant();
  ASSERT_TRUE(plain.kernel_info(p, info).is_ok());
  EXPECT_NE(info.name.find("wgmma_kernel"), std::string::npos) << info.name;
  EXPECT_NE(info.name.find("padded copy of A"), std::string::npos) << info.name;
  EXPECT_EQ(info.threads_per_block, 256);
}

// A rung bound to each of its named configurations in turn (gemmlab::configure, as the CLI's
// --config does); a rung without configurations as it is.
std::vector<Variant> configurations_of(const Variant& v) {
  if (v.configs.empty()) return {v};
  std::vector<Variant> out;
  for (const NamedConfig& c : v.configs) {
    Variant bound;
    const Status s = configure(v, c.name, bound);
    EXPECT_TRUE(s.is_ok()) << v.name << " " << c.name << ": " << s.describe();
    if (s.is_ok()) out.push_back(std::move(bound));
  }
  return out;
}

Variant configured(const Variant& v, const char* name) {
  Variant bound;
  const Status s = configure(v, name, bound);
  EXPECT_TRUE(s.is_ok()) << v.name << " " << name << ": " << s.describe();
  return bound;
}

// The name explain gives the kernel run() launches for `c` (descriptors only: explain reads no data).
std::string kernel_name_for(const Variant& v, const Case& c) {
  DeviceArray buffer(1 << 20);
  GemmProblem p = problem_of(v, c);
  p.a.data = p.b.data = p.c.data = buffer.p;
  KernelInfo info;
  const Status s = v.kernel_info(p, info);
  EXPECT_TRUE(s.is_ok()) << v.name << " " << v.config_name << " " << describe(c) << ": " << s.describe();
  return info.name;
}

// The configurations of the warp-specialised rungs, listed on the variant with the default
// first, each reachable by name without a GPU; an unknown name is refused, listing them.
// The out-of-core plans count a rung's workspace against the memory limit with
// Variant::workspace_bytes: it must never count less than prepare() then allocates, and for
// operands that need no copy it must not count the copies the size-only bound assumes.
TEST(Wgmma, TheWorkspaceCountIsWhatPrepareHolds) {
  REQUIRE_HOPPER();
  // cudaMalloc rounds each allocation up to 2 MiB, and a small one takes a page of 2 MiB: up
  // to three allocations (the copies, the tail's partials and its counters).
  constexpr std::int64_t kGranule = std::int64_t{8} << 20;
  struct Count {
    Variant v;
    Case c;
    bool copies;  // whether prepare() copies an operand
  };
  // Large enough that the stream-K tail's partials (about 35 MB on 132 SMs, counted always)
  // are small beside the copies, or beside the size-only bound where nothing is copied.
  const std::vector<Count> counts = {
      {cuda::wgmma_ws_variant(DType::BF16), {8192, 8192, 8192, Op::N, Op::N, Layout::RowMajor, 1, 1, 0}, false},
      {cuda::wgmma_ws_variant(DType::BF16), {16384, 16384, 2048, Op::N, Op::T, Layout::RowMajor, 1, 0, 0}, false},
      {cuda::wgmma_ws_variant(DType::BF16), {4095, 4095, 4095, Op::N, Op::N, Layout::RowMajor, 1, 0, 0}, true},
      // tf32 B stored k x n: copied K-major.
      {cuda::wgmma_ws_tf32_variant(), {4096, 8192, 8192, Op::T, Op::N, Layout::RowMajor, 1, 0, 0}, true},
      {cuda::wgmma_3xtf32_variant(), {2048, 2048, 2048, Op::N, Op::N, Layout::RowMajor, 1, 0, 0}, true},
  };
  for (const Count& count : counts) {
    SCOPED_TRACE(count.v.name + " " + describe(count.c));
    ASSERT_TRUE(count.v.workspace_bytes);
    GemmProblem p = problem_of(count.v, count.c);
    if (count.c.m % 8 != 0) p.a.ld = p.b.ld = count.c.k;  // 4095: rows TMA cannot address
    p.a.data = p.b.data = p.c.data = reinterpret_cast<void*>(std::uintptr_t{256});  // never read
    {  // whatever the first call loads (the memset kernel of the tail's counters) loaded before
      RunContext warm(Backend::Cuda, 0, nullptr, 0);
      ASSERT_TRUE(count.v.prepare(p, warm).is_ok());
    }
    RunContext context(Backend::Cuda, 0, nullptr, 0);
    std::size_t free_before = 0, free_after = 0, total = 0;
    ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
    ASSERT_TRUE(count.v.prepare(p, context).is_ok());
    ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
    const auto held = static_cast<std::int64_t>(free_before) - static_cast<std::int64_t>(free_after);
    const auto counted = static_cast<std::int64_t>(count.v.workspace_bytes(p));
    EXPECT_LE(held, counted + kGranule) << "held " << held << " counted " << counted;
    const auto size_only = static_cast<std::int64_t>(workspace_bound(count.v, p.m, p.n, p.k));
    EXPECT_LE(counted, size_only);
    if (count.copies) EXPECT_GT(held, counted / 2) << "held " << held << " counted " << counted;
    else EXPECT_LT(counted, size_only / 4) << "counted " << counted << " bound " << size_only;
  }
}

TEST(Wgmma, ConfigurationsAreNamedOnTheVariant) {
  const std::pair<Variant, std::vector<std::string>> rungs[] = {
      {cuda::wgmma_ws_variant(DType::BF16), {"auto", "blocks", "clusters", "stream_k", "spread_k", "free_rounds"}},
      {cuda::wgmma_ws_variant(DType::F16), {"auto", "blocks", "clusters", "stream_k", "spread_k", "free_rounds"}},
      {cuda::wgmma_ws_variant(DType::BF16, DType::BF16), {"auto", "blocks", "clusters", "stream_k", "spread_k", "free_rounds"}},
      {cuda::wgmma_ws_tf32_variant(), {"auto", "blocks", "clusters", "stream_k", "spread_k", "free_rounds"}},
      {cuda::wgmma_3xtf32_variant(), {"auto", "blocks", "free_rounds"}},
  };
  for (const auto& [v, names] : rungs) {
    SCOPED_TRACE(v.name);
    EXPECT_EQ(v.config_name, "auto");
    ASSERT_EQ(v.configs.size(), names.size());
    for (std::size_t i = 0; i < names.size(); ++i) {
      EXPECT_EQ(v.configs[i].name, names[i]);
      EXPECT_FALSE(v.configs[i].description.empty()) << names[i];
      Variant bound;
      ASSERT_TRUE(configure(v, names[i], bound).is_ok()) << names[i];
      EXPECT_EQ(bound.config_name, names[i]);
      EXPECT_EQ(bound.name, v.name);
      EXPECT_EQ(bound.precision(), v.precision());  // a configured 16-bit-C rung keeps its C
      EXPECT_EQ(bound.configs.size(), names.size());
      EXPECT_TRUE(bound.run && bound.prepare && bound.kernel_info && bound.can_implement && bound.configure);
    }
    // An unknown name: InvalidValue, from the library and from the variant itself, listing
    // the valid names.
    for (const char* bad : {"smem", "4", "cp_async", "quarters"}) {
      Variant bound;
      const Status s = configure(v, bad, bound);
      EXPECT_EQ(s.code(), StatusCode::InvalidValue) << bad << ": " << s.describe();
      EXPECT_NE(s.message().find(bad), std::string::npos) << s.describe();
      const Status direct = v.configure(bad, bound);
      EXPECT_EQ(direct.code(), StatusCode::InvalidValue) << direct.describe();
      for (const std::string& name : names) EXPECT_NE(direct.message().find(name), std::string::npos) << direct.describe();
    }
  }
  // 3xTF32 runs one K pass short of a stream-K tail: no such configuration.
  Variant bound;
  EXPECT_EQ(configure(cuda::wgmma_3xtf32_variant(), "stream_k", bound).code(), StatusCode::InvalidValue);
}

// Every configuration of the warp-specialised rungs on the forms it runs: clusters of two
// blocks sharing B by multicast or single blocks; C through shared memory and TMA, warp-stored
// where TMA cannot address C, from registers where the kernel has no warp-stored epilogue (A in
// registers, 3xTF32's promoted sums), for tf32 also C^T. Ragged tiles (an odd number of tile
// rows leaves one block of the last cluster without rows), alpha/beta, C that TMA cannot
// address (pads 1, 2, 3: row pitches of 4n + 1, 2, 3 floats).
TEST(Wgmma, EveryKernelForm) {
  REQUIRE_HOPPER();
  const std::vector<Variant> rungs = {cuda::wgmma_ws_variant(DType::BF16), cuda::wgmma_ws_tf32_variant(),
                                      cuda::wgmma_3xtf32_variant()};
  std::uint64_t seed = fresh_seed();
  for (const Variant& rung : rungs)
    for (const Variant& v : configurations_of(rung)) {
      SCOPED_TRACE(v.name + " " + v.config_name);
      check_case(v, {300, 520, 1023, Op::N, Op::T, Layout::RowMajor, 1.0, 0.0, 0}, seed++);
      check_case(v, {129, 257, 65, Op::T, Op::N, Layout::RowMajor, -1.5, 0.5, 0}, seed++);
      check_case(v, {640, 300, 200, Op::N, Op::N, Layout::ColMajor, 0.5, 1.0, 3}, seed++);
      check_case(v, {1000, 7, 300, Op::T, Op::T, Layout::RowMajor, 2.0, 0.0, 8}, seed++);
      // tf32 computes these as C^T = B^T A^T: C's last 64 columns straddle its edge, at a
      // multiple of 4 and not (stored from registers then).
      check_case(v, {264, 136, 200, Op::N, Op::N, Layout::RowMajor, 1.0, -0.5, 0}, seed++);
      check_case(v, {300, 130, 99, Op::N, Op::N, Layout::RowMajor, 0.5, 0.0, 0}, seed++);
      check_case(v, {130, 300, 99, Op::T, Op::T, Layout::ColMajor, -1.0, 1.0, 0}, seed++);
      // More tiles than blocks: each block's epilogue buffers go round several times, also
      // after a tile that stages an odd number of 32-column chunks (the last column here,
      // and every tile of the 20-column C).
      check_case(v, {2100, 2070, 40, Op::N, Op::N, Layout::RowMajor, 1.0, 0.5, 1}, seed++);
      check_case(v, {20000, 20, 8, Op::N, Op::T, Layout::RowMajor, 1.0, 0.5, 1}, seed++);
      // beta = 0 and a C that TMA cannot address: rows of every misalignment, the last
      // columns of a tile straddling C's edge, tile rows that end inside a warp's 8 or 16
      // rows, a column-major C, several tiles per block.
      check_case(v, {257, 300, 64, Op::N, Op::N, Layout::RowMajor, 1.0, 0.0, 1}, seed++);
      check_case(v, {200, 600, 72, Op::T, Op::T, Layout::RowMajor, -1.0, 0.0, 2}, seed++);
      check_case(v, {640, 300, 200, Op::N, Op::T, Layout::ColMajor, 0.5, 0.0, 3}, seed++);
      check_case(v, {2100, 2070, 40, Op::N, Op::N, Layout::RowMajor, 1.0, 0.0, 3}, seed++);
    }
}

// explain names the form each configuration runs, and the form that runs where a
// configuration cannot apply (one row of tiles: no cluster; a C that TMA cannot address: no
// stream-K tail).
TEST(Wgmma, EachConfigurationNamesItsForm) {
  REQUIRE_HOPPER();
  const Variant v = cuda::wgmma_ws_variant(DType::BF16);
  const Case square{512, 512, 512, Op::N, Op::N, Layout::RowMajor, 1.0, 0.0, 0};
  // By default single blocks where no stream-K tail runs and TMA can address C (form_of).
  EXPECT_NE(kernel_name_for(v, square).find("no clusters, TMA-store epilogue"), std::string::npos)
      << kernel_name_for(v, square);
  EXPECT_NE(kernel_name_for(configured(v, "clusters"), square).find("clusters of 2, TMA-store epilogue"),
            std::string::npos);
  EXPECT_NE(kernel_name_for(configured(v, "blocks"), square).find("no clusters, TMA-store epilogue"),
            std::string::npos);
  // Rows of C TMA cannot address: clusters by default, warp-stored.
  Case unaddressable = square;
  unaddressable.pad = 1;
  EXPECT_NE(kernel_name_for(v, unaddressable).find("clusters of 2, warp-stored epilogue"), std::string::npos)
      << kernel_name_for(v, unaddressable);
  // 3xTF32 keeps clusters by default (form_of); "blocks" runs without.
  const Variant three = cuda::wgmma_3xtf32_variant();
  EXPECT_NE(kernel_name_for(three, square).find("(clusters of 2, "), std::string::npos) << kernel_name_for(three, square);
  EXPECT_NE(kernel_name_for(configured(three, "blocks"), square).find("(no clusters, "), std::string::npos);
  // One row of tiles: nothing to share, whatever the configuration.
  const Case one_row{100, 512, 512, Op::N, Op::N, Layout::RowMajor, 1.0, 0.0, 1};  // and a C TMA cannot address
  // (spread_k: the stream-K kernels store such a C from registers.)
  for (const Variant& c : configurations_of(v)) {
    const bool spread = c.config_name == "spread_k";
    const std::string name = kernel_name_for(c, one_row);
    EXPECT_NE(name.find(spread ? "no clusters, epilogue from registers, K spread over every block"
                               : "no clusters, warp-stored epilogue"),
              std::string::npos)
        << c.config_name << ": " << name;
  }
  const Case one_row_tma{100, 512, 512, Op::N, Op::N, Layout::RowMajor, 1.0, 0.0, 0};
  EXPECT_NE(kernel_name_for(configured(v, "clusters"), one_row_tma).find("no clusters, TMA-store epilogue"),
            std::string::npos);
  // By default a row of a few tiles is spread by K over more SMs (spread_pays), for a C that
  // TMA can address.
  EXPECT_NE(kernel_name_for(v, one_row_tma).find("no clusters, TMA-store epilogue, K spread over every block"),
            std::string::npos)
      << kernel_name_for(v, one_row_tma);
  // Several whole rounds: held in step, except by free_rounds, which says so.
  const Case rounds{4096, 4096, 64, Op::N, Op::N, Layout::RowMajor, 1.0, 0.0, 0};
  EXPECT_EQ(kernel_name_for(v, rounds).find("not held in step"), std::string::npos) << kernel_name_for(v, rounds);
  EXPECT_NE(kernel_name_for(configured(v, "free_rounds"), rounds).find("rounds not held in step"), std::string::npos)
      << kernel_name_for(configured(v, "free_rounds"), rounds);

  // Units left over after whole rounds (one and a half rounds of clusters of two): each
  // configuration of each rung names its form.
  int device = 0, sms = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), cudaSuccess);
  const std::int64_t clusters = sms / 2;
  const Case leftover{256, (clusters + clusters / 2) * 256, 785, Op::N, Op::T, Layout::RowMajor, 1.0, 0.0, 0};
  for (const Variant& rung : {cuda::wgmma_ws_variant(DType::BF16), cuda::wgmma_ws_variant(DType::F16),
                              cuda::wgmma_ws_variant(DType::F16, DType::F16), cuda::wgmma_ws_tf32_variant()}) {
    SCOPED_TRACE(rung.name);
    const std::string blocks = kernel_name_for(configured(rung, "blocks"), leftover);
    EXPECT_NE(blocks.find("(no clusters, "), std::string::npos) << blocks;
    EXPECT_EQ(blocks.find("stream-K tail"), std::string::npos) << blocks;
    const std::string pairs = kernel_name_for(configured(rung, "clusters"), leftover);
    EXPECT_NE(pairs.find("(clusters of 2, "), std::string::npos) << pairs;
    EXPECT_EQ(pairs.find("stream-K tail"), std::string::npos) << pairs;
    const std::string tail = kernel_name_for(configured(rung, "stream_k"), leftover);
    EXPECT_NE(tail.find("(clusters of 2, "), std::string::npos) << tail;
    EXPECT_NE(tail.find("stream-K tail"), std::string::npos) << tail;
    // A C that TMA cannot address: no stream-K tail (its kernel has no warp-stored epilogue).
    Case odd = leftover;
    odd.pad = 1;
    const std::string fallback = kernel_name_for(configured(rung, "stream_k"), odd);
    EXPECT_NE(fallback.find("(clusters of 2, warp-stored epilogue"), std::string::npos) << fallback;
    EXPECT_EQ(fallback.find("stream-K tail"), std::string::npos) << fallback;
  }
}

// The stream_k configuration: units left over after the whole rounds are cut by K over all
// clusters (src/cuda/hopper/stream_k.hpp; the schedule itself is checked on the host). Shapes
// sized from this GPU's SM count so that a tail runs (explain must say so): one and a half
// rounds; a last unit row with one tile row (its second block multiplies nothing but still
// writes and waits); ragged K; alpha/beta and beta = 0 with NaN in C; bf16 and tf32, the
// latter also with A in registers; operands copied first (pad 4: bf16 rows TMA cannot
// address, C's it can); and a C TMA cannot address, where clusters run without the tail.
TEST(Wgmma, StreamKTailGivesTheSameSums) {
  REQUIRE_HOPPER();
  int device = 0, sms = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), cudaSuccess);
  const std::int64_t clusters = sms / 2;  // one block per SM, clusters of two along M
  std::uint64_t seed = fresh_seed();
  const Variant bf16 = configured(cuda::wgmma_ws_variant(DType::BF16), "stream_k");
  const Variant bf16_c = configured(cuda::wgmma_ws_variant(DType::BF16, DType::BF16), "stream_k");
  const Variant tf32 = configured(cuda::wgmma_ws_tf32_variant(), "stream_k");
  const std::int64_t n_rounds = (clusters + clusters / 2) * 256;  // units of 2 x 128 rows by 256 columns
  const std::vector<std::pair<const Variant*, Case>> cases = {
      {&bf16, {256, n_rounds, 785, Op::N, Op::N, Layout::RowMajor, 1.0, 0.0, 0}},
      // A bf16 C: the partials stay float32, the last piece rounds the sum once.
      {&bf16_c, {256, n_rounds, 785, Op::N, Op::T, Layout::RowMajor, 1.0, 0.0, 0}},
      {&bf16_c, {384, (clusters / 2 + 17) * 256 - 96, 520, Op::T, Op::N, Layout::RowMajor, -0.5, 1.5, 8}},
      {&bf16, {384, (clusters / 2 + 17) * 256 - 100, 520, Op::T, Op::N, Layout::ColMajor, -0.5, 1.5, 4}},
      {&tf32, {256, n_rounds, 389, Op::N, Op::T, Layout::RowMajor, 1.0, 0.0, 0}},
      // tf32 with A in registers: row-major NN runs as C^T = B^T A^T (B^T's K strided), TT
      // reads A stored k x m; ragged units and K, beta != 0.
      {&tf32, {n_rounds, 256, 389, Op::N, Op::N, Layout::RowMajor, 1.0, 0.0, 0}},
      {&tf32, {384, (clusters / 2 + 17) * 256 - 100, 300, Op::T, Op::T, Layout::RowMajor, 0.5, -1.0, 0}},
  };
  const auto check_form = [&](const Variant* v, const Case& c, bool tail) {
    DeviceArray buffer(1 << 20);
    GemmProblem p = problem_of(*v, c);  // descriptors only: explain reads no data
    p.a.data = p.b.data = p.c.data = buffer.p;
    KernelInfo info;
    ASSERT_TRUE(v->kernel_info(p, info).is_ok());
    EXPECT_EQ(info.name.find("stream-K tail") != std::string::npos, tail) << describe(c) << ": " << info.name;
    cudaFuncAttributes attributes{};
    ASSERT_EQ(cudaFuncGetAttributes(&attributes, info.function), cudaSuccess);
    EXPECT_EQ(attributes.localSizeBytes, 0u) << info.name << ": local memory (spills or a stack frame)";
    check_case(*v, c, seed++);
  };
  for (const auto& [v, c] : cases) check_form(v, c, true);
  // Rows of C TMA cannot address (pad 3): clusters, warp-stored, whole rounds.
  check_form(&bf16, {384, (clusters / 2 + 17) * 256 - 100, 520, Op::T, Op::N, Layout::ColMajor, -0.5, 1.5, 3}, false);
  check_form(&tf32, {256, n_rounds, 389, Op::N, Op::T, Layout::RowMajor, 1.0, 0.0, 3}, false);
  check_form(&bf16_c, {256, n_rounds, 300, Op::N, Op::N, Layout::RowMajor, 2.0, -1.0, 3}, false);
}

// The spread_k configuration (and "auto" for a row or column of a few tiles): every unit cut
// by K into pieces on as many SMs, no whole rounds. LLM-like shapes of 1 to 128 rows (the
// partials of rows below C are neither written nor read), a column of tiles (column-major
// C), ragged K, alpha/beta and beta = 0 with NaN in C, C in bf16, tf32 also with A in
// registers, a C TMA cannot address (stored from registers), and a K too short to spread
// (one block runs the unit whole). explain names the form; no local memory.
TEST(Wgmma, SpreadKGivesTheSameSums) {
  REQUIRE_HOPPER();
  std::uint64_t seed = fresh_seed();
  const Variant bf16 = configured(cuda::wgmma_ws_variant(DType::BF16), "spread_k");
  const Variant f16_c = configured(cuda::wgmma_ws_variant(DType::F16, DType::F16), "spread_k");
  const Variant bf16_c = cuda::wgmma_ws_variant(DType::BF16, DType::BF16);  // auto
  const Variant tf32 = configured(cuda::wgmma_ws_tf32_variant(), "spread_k");
  const auto check_form = [&](const Variant& v, const Case& c, bool spread) {
    const std::string name = kernel_name_for(v, c);
    EXPECT_EQ(name.find("K spread over every block") != std::string::npos, spread) << describe(c) << ": " << name;
    DeviceArray buffer(1 << 20);
    GemmProblem p = problem_of(v, c);
    p.a.data = p.b.data = p.c.data = buffer.p;
    KernelInfo info;
    ASSERT_TRUE(v.kernel_info(p, info).is_ok());
    cudaFuncAttributes attributes{};
    ASSERT_EQ(cudaFuncGetAttributes(&attributes, info.function), cudaSuccess);
    EXPECT_EQ(attributes.localSizeBytes, 0u) << info.name << ": local memory (spills or a stack frame)";
    check_case(v, c, seed++);
  };
  check_form(bf16, {1, 4096, 4096, Op::N, Op::T, Layout::RowMajor, 1.0, 0.0, 0}, true);
  check_form(bf16, {16, 1000, 777, Op::N, Op::T, Layout::RowMajor, 1.0, 0.0, 0}, true);
  check_form(bf16, {100, 3000, 1023, Op::T, Op::N, Layout::RowMajor, -0.5, 1.5, 8}, true);
  check_form(bf16, {128, 520, 2000, Op::N, Op::N, Layout::ColMajor, 1.0, 0.0, 0}, true);  // a column of tiles
  check_form(bf16, {16, 256, 64, Op::N, Op::T, Layout::RowMajor, 1.0, 0.0, 0}, false);    // one step: whole
  check_form(f16_c, {64, 2000, 1000, Op::N, Op::T, Layout::RowMajor, 1.0, 0.0, 0}, true);
  check_form(f16_c, {16, 1000, 777, Op::T, Op::T, Layout::RowMajor, 2.0, -1.0, 3}, true);  // C from registers
  check_form(bf16_c, {16, 4096, 4096, Op::N, Op::T, Layout::RowMajor, 1.0, 0.0, 0}, true);
  check_form(bf16_c, {128, 3000, 1000, Op::N, Op::T, Layout::RowMajor, 0.5, 0.25, 0}, true);
  check_form(bf16_c, {128, 14336, 1000, Op::N, Op::T, Layout::RowMajor, 0.5, 0.25, 0}, false);  // 56 tiles: whole
  // By default also a few tiles of several rows with a long K loop (16 tiles, 64 steps), not a
  // short one (512^3: 8 steps).
  const Variant bf16_auto = cuda::wgmma_ws_variant(DType::BF16);
  check_form(bf16_auto, {512, 1024, 4096, Op::N, Op::T, Layout::RowMajor, 1.0, 0.0, 0}, true);
  check_form(bf16_auto, {512, 512, 512, Op::N, Op::T, Layout::RowMajor, 1.0, 0.0, 0}, false);
  check_form(tf32, {16, 1000, 389, Op::N, Op::T, Layout::RowMajor, 1.0, 0.0, 0}, true);
  check_form(tf32, {100, 700, 1000, Op::T, Op::T, Layout::RowMajor, 0.5, -1.0, 0}, true);  // A in registers
  check_form(tf32, {5, 2000, 600, Op::N, Op::N, Layout::RowMajor, 1.0, 0.0, 0}, true);     // computes C^T
}

// The default ("auto"): the tail where stream_k::tail_pays says so for the clusters this
// GPU's SMs make, whole rounds elsewhere (explain names the form run() launches).
TEST(Wgmma, StreamKTailByDefaultWherePaid) {
  REQUIRE_HOPPER();
  int device = 0, sms = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), cudaSuccess);
  const Variant bf16 = cuda::wgmma_ws_variant(DType::BF16);
  ASSERT_EQ(bf16.config_name, "auto");
  for (const std::int64_t size : {4096, 8192}) {
    const Case c{size, size, size, Op::N, Op::N, Layout::RowMajor, 1.0, 0.0, 0};
    DeviceArray buffer(1 << 20);
    GemmProblem p = problem_of(bf16, c);  // descriptors only: explain reads no data
    p.a.data = p.b.data = p.c.data = buffer.p;
    KernelInfo info;
    ASSERT_TRUE(bf16.kernel_info(p, info).is_ok());
    const int units = static_cast<int>((size / 256) * (size / 256));  // 2 x 128 rows by 256 columns
    const bool expected = cuda::stream_k::tail_pays(units, sms / 2, static_cast<int>(size / 64));
    EXPECT_EQ(info.name.find("stream-K tail") != std::string::npos, expected) << size << ": " << info.name;
    // Clusters of 2 with the tail, single blocks in whole rounds (form_of).
    EXPECT_EQ(info.name.find("clusters of 2") != std::string::npos, expected) << size << ": " << info.name;
    EXPECT_EQ(info.name.find("no clusters") != std::string::npos, !expected) << size << ": " << info.name;
  }
}

// Every instantiation of the tensor-core kernels keeps its state in registers: no local
// memory (spills, or a stack frame such as the 512 bytes a `break` in the unrolled epilogue
// once cost, which --warn-on-spills does not report). Every configuration, transposition and
// operand route that explain can name.
TEST(Wgmma, KernelsUseNoLocalMemory) {
  REQUIRE_HOPPER();
  DeviceArray buffer(1 << 22);
  const auto check = [&](const Variant& v, DType type, std::int64_t ld) {
    for (Op op_a : {Op::N, Op::T})
      for (Op op_b : {Op::N, Op::T}) {
        GemmProblem p;
        p.m = p.n = p.k = 512;
        p.op_a = op_a;
        p.op_b = op_b;
        p.compute = v.compute;
        p.a = shaped(512, 512, Layout::RowMajor, type, 0);
        p.a.ld = ld;
        p.b = p.a;
        p.c = shaped(512, 512, Layout::RowMajor, DType::F32, 0);
        p.a.data = p.b.data = p.c.data = buffer.p;
        KernelInfo info;
        ASSERT_TRUE(v.kernel_info(p, info).is_ok()) << v.name << " " << v.config_name;
        cudaFuncAttributes attributes{};
        ASSERT_EQ(cudaFuncGetAttributes(&attributes, info.function), cudaSuccess) << info.name;
        EXPECT_EQ(attributes.localSizeBytes, 0u) << info.name << ": local memory (spills or a stack frame)";
      }
  };
  for (const Variant& rung : two_byte_rungs())
    for (const Variant& v : configurations_of(rung)) check(v, v.input, 512);
  for (const Variant& v : configurations_of(cuda::wgmma_3xtf32_variant())) check(v, DType::F32, 512);
  for (const Variant& v : configurations_of(cuda::wgmma_ws_tf32_variant())) {
    check(v, DType::F32, 512);
    check(v, DType::F32, 513);  // rows TMA cannot address: copied
  }
}

// Each rung takes its own types and names itself when given others (no GPU needed).
TEST(Wgmma, RungsRefuseOtherPrecisions) {
  GemmProblem p;
  p.m = p.n = p.k = 8;
  p.a = shaped(8, 8, Layout::RowMajor, DType::F16, 0);
  p.b = p.a;
  p.c = shaped(8, 8, Layout::RowMajor, DType::F32, 0);
  for (const Variant& v : {cuda::wgmma_bf16_variant(), cuda::wgmma_ws_variant(DType::BF16), cuda::wgmma_ws_tf32_variant(),
                           cuda::wgmma_3xtf32_variant()}) {
    EXPECT_TRUE(v.tensor_cores) << v.name << ": explain must not bound it by the FP32 FMA rate";
    const Status s = v.can_implement(p);
    EXPECT_EQ(s.code(), StatusCode::NotSupported) << v.name << ": " << s.describe();
    EXPECT_NE(s.message().find(v.name), std::string::npos) << s.describe();
  }
}

// tf32 reads B K-major only: row-major NT and column-major TN go straight in. An A whose K
// is strided goes into registers (rows permuted against bank conflicts); where B's K is
// strided and A's is not (row-major NN, column-major TT) the kernel computes C^T = B^T A^T;
// rows TMA cannot address (pad 3) are copied K-major first. Every shape, transposition and
// layout, ragged tiles, alpha/beta and beta = 0 with NaN in C; explain names the form.
TEST(Wgmma, Tf32EveryShapeTranspositionAndLayout) {
  REQUIRE_HOPPER();
  const Variant v = cuda::wgmma_ws_tf32_variant();
  std::uint64_t seed = fresh_seed();
  for (Layout layout : {Layout::RowMajor, Layout::ColMajor})
    for (Op op_a : {Op::N, Op::T})
      for (Op op_b : {Op::N, Op::T}) {
        for (const auto& s : kShapes) check_case(v, {s[0], s[1], s[2], op_a, op_b, layout, 1.0, 0.0, 0}, seed++);
        check_case(v, {136, 136, 257, op_a, op_b, layout, 1.0, 0.0, 0}, seed++);
        check_case(v, {264, 520, 33, op_a, op_b, layout, -0.5, 2.0, 8}, seed++);
        // Rows TMA cannot address (pitches of 4 mod 16 bytes): padded or K-major copies.
        check_case(v, {257, 259, 97, op_a, op_b, layout, 0.5, 0.0, 1}, seed++);
        check_case(v, {1, 1, 1, op_a, op_b, layout, 1.0, 0.0, 1}, seed++);
      }
  check_case(v, {200, 300, 129, Op::N, Op::T, Layout::RowMajor, -1.5, 0.5, 8}, seed++);
  check_case(v, {131, 257, 77, Op::T, Op::N, Layout::ColMajor, 0.25, -2.0, 24}, seed++);
  check_case(v, {133, 70, 99, Op::N, Op::N, Layout::RowMajor, 0.5, 1.0, 3}, seed++);  // copy and transpose
  check_case(v, {1024, 1536, 2048, Op::N, Op::T, Layout::RowMajor, 1.0, 0.0, 0}, seed++);
  check_case(v, {1000, 1000, 1000, Op::N, Op::N, Layout::RowMajor, 1.0, 0.0, 0}, seed++);
  check_case(v, {1024, 2048, 1536, Op::N, Op::N, Layout::RowMajor, 1.0, 0.0, 0}, seed++);
  check_case(v, {640, 768, 4096, Op::T, Op::T, Layout::RowMajor, 1.0, 1.0, 3}, seed++);

  DeviceArray buffer(1 << 20);
  GemmProblem p = tf32_row_major_nn(64, buffer.p);
  KernelInfo info;
  ASSERT_TRUE(v.kernel_info(p, info).is_ok());  // row-major NN: B's K is not contiguous
  EXPECT_NE(info.name.find("clusters, A read M-major into registers, computing C^T = B^T A^T, TMA-store epilogue"),
            std::string::npos)
      << info.name;
  EXPECT_EQ(info.name.find("copy"), std::string::npos) << info.name;
  p.op_a = Op::T;  // both K strided (TN): A into registers, B copied
  p.op_b = Op::N;
  ASSERT_TRUE(v.kernel_info(p, info).is_ok());
  EXPECT_NE(info.name.find("A read M-major into registers, TMA-store epilogue"), std::string::npos) << info.name;
  EXPECT_NE(info.name.find("K-major (transposed) copy of B"), std::string::npos) << info.name;
  EXPECT_EQ(info.name.find("C^T"), std::string::npos) << info.name;
  p.op_a = p.op_b = Op::N;
  p.a.ld = p.b.ld = 65;  // 260-byte rows: neither operand TMA-addressable, so nothing into registers
  ASSERT_TRUE(v.kernel_info(p, info).is_ok());
  EXPECT_NE(info.name.find("padded copy of A and a K-major (transposed) copy of B"), std::string::npos) << info.name;
  EXPECT_EQ(info.name.find("into registers"), std::string::npos) << info.name;
}

// 3xTF32: every shape, transposition and layout within its own bound (15_wgmma_3xtf32.cu),
// in each configuration (clusters of 2, single blocks), the big·big sums promoted by halves;
// explain says so.
TEST(Wgmma, ThreeTf32EveryShapeTranspositionAndLayout) {
  REQUIRE_HOPPER();
  std::uint64_t seed = fresh_seed();
  DeviceArray buffer(1 << 22);
  for (const Variant& v : configurations_of(cuda::wgmma_3xtf32_variant())) {
    SCOPED_TRACE(v.config_name);
    ASSERT_TRUE(v.tolerance.has_value());
    GemmProblem named;
    named.m = named.n = named.k = 512;
    named.compute = v.compute;
    named.a = shaped(512, 512, Layout::RowMajor, DType::F32, 0);
    named.b = named.a;
    named.c = named.a;
    named.a.data = named.b.data = named.c.data = buffer.p;
    KernelInfo info;
    ASSERT_TRUE(v.kernel_info(named, info).is_ok());
    EXPECT_NE(info.name.find("promoted by m64n128 halves"), std::string::npos) << info.name;
    for (Layout layout : {Layout::RowMajor, Layout::ColMajor})
      for (Op op_a : {Op::N, Op::T})
        for (Op op_b : {Op::N, Op::T})
          for (const auto& s : kShapes) check_case(v, {s[0], s[1], s[2], op_a, op_b, layout, 1.0, 0.0, 0}, seed++);
    check_case(v, {200, 300, 129, Op::T, Op::T, Layout::RowMajor, -1.5, 0.5, 3}, seed++);
    check_case(v, {1000, 1000, 1000, Op::N, Op::N, Layout::ColMajor, 1.0, 0.0, 0}, seed++);
  }
}

// What 3xTF32 is for: float32 accuracy. Its relative error (Frobenius) on a long K stays
// within 1.5x cuBLAS SGEMM's and far below plain TF32's, measured in one bench run each, in
// each of its configurations.
TEST(Wgmma, ThreeTf32ErrorMatchesSgemmNotTf32) {
  REQUIRE_HOPPER();
  std::unique_ptr<Executor> ex;
  ASSERT_TRUE(make_cuda_executor(ex).is_ok());
  const auto error_of = [&](DType dtype, const std::vector<std::string>& names, const std::string& config) {
    bench::Options o;
    o.dtype = dtype;
    o.variants = names;
    o.config = config;
    o.shapes = {{512, 512, 8192}};
    o.seed = fresh_seed();
    o.time = false;
    std::vector<bench::Record> records;
    EXPECT_TRUE(bench::run(o, *ex, records).is_ok());
    std::map<std::string, double> error;
    for (const bench::Record& r : records) {
      EXPECT_TRUE(r.status == "ok" && r.verification.passed) << r.variant << ": " << r.message << r.verification.summary();
      error[r.variant] = r.verification.rel_frobenius;
    }
    return error;
  };
  auto tf32 = error_of(DType::TF32, {"wgmma_ws_tf32"}, "");
  auto sgemm = error_of(DType::F32, {"cublas_sgemm"}, "");
  ASSERT_EQ(sgemm.count("cublas_sgemm") + tf32.count("wgmma_ws_tf32"), 2u);
  EXPECT_GT(sgemm["cublas_sgemm"], 0.0);
  for (const NamedConfig& c : cuda::wgmma_3xtf32_variant().configs) {
    SCOPED_TRACE(c.name);
    auto f32 = error_of(DType::F32, {"wgmma_3xtf32"}, c.name);
    ASSERT_EQ(f32.count("wgmma_3xtf32"), 1u);
    EXPECT_LE(f32["wgmma_3xtf32"], 1.5 * sgemm["cublas_sgemm"]);
    EXPECT_LE(f32["wgmma_3xtf32"], tf32["wgmma_ws_tf32"] / 100);
  }
}

}  // namespace
}  // namespace gemmlab

#else
TEST(Wgmma, NeedsCuda) { GTEST_SKIP() << "SKIPPED: no CUDA in this build"; }
#endif
