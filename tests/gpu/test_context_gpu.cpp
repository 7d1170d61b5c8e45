// gemmlab::Context on the GPU: two contexts on two threads, each with its own stream (and,
// where there are two GPUs, its own device), run the rungs that keep workspaces, handles and
// raised kernel attributes at the same time, every result verified; auto picks a rung that
// runs here. Label gpu; skipped without a device.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gemmlab/availability.hpp"
#include "gemmlab/gemm.hpp"
#include "support/context.hpp"
#include "support/host_problem.hpp"
#include "support/seeds.hpp"

namespace gemmlab {
namespace {

using testing::HostProblem;
using testing::make_host_problem;

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

// A problem's operands on `device`: A and B converted to the rung's input type, C as float.
struct DeviceProblem {
  void* a = nullptr;
  void* b = nullptr;
  float* c = nullptr;
  ~DeviceProblem() {
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
};

// Runs `rung` (or auto) on a fresh f32-stored problem in `context`, copies C back and checks
// it against the float64 reference. Returns what went wrong, or "".
std::string run_once(Context& context, const std::string& rung, std::uint64_t seed, std::int64_t m,
                     std::int64_t n, std::int64_t k) {
  HostProblem hp = make_host_problem({.m = m, .n = n, .k = k, .op_b = Op::T, .beta = 0.5, .seed = seed});
  ReferenceResult reference;
  if (!testing::host_reference(hp, reference)) return "reference";
  if (cudaSetDevice(context.device()) != cudaSuccess) return "cudaSetDevice";
  DeviceProblem d;
  const auto bytes = [](const testing::HostMatrix& x) { return x.storage.size() * sizeof(float); };
  if (cudaMalloc(&d.a, bytes(hp.a)) || cudaMalloc(&d.b, bytes(hp.b)) ||
      cudaMalloc(reinterpret_cast<void**>(&d.c), bytes(hp.c)))
    return "cudaMalloc";
  const auto stream = static_cast<cudaStream_t>(context.stream());
  if (cudaMemcpyAsync(d.a, hp.a.storage.data(), bytes(hp.a), cudaMemcpyHostToDevice, stream) ||
      cudaMemcpyAsync(d.b, hp.b.storage.data(), bytes(hp.b), cudaMemcpyHostToDevice, stream) ||
      cudaMemcpyAsync(d.c, hp.c.storage.data(), bytes(hp.c), cudaMemcpyHostToDevice, stream))
    return "upload";
  GemmProblem p = hp.problem;
  p.a.data = d.a;
  p.b.data = d.b;
  p.c.data = d.c;
  if (const Status s = gemm(context, p, {.variant = rung}); !s) return rung + ": " + s.describe();
  std::vector<float> got(hp.c.storage.size());
  if (cudaMemcpyAsync(got.data(), d.c, bytes(hp.c), cudaMemcpyDeviceToHost, stream) ||
      cudaStreamSynchronize(stream))
    return "download";
  const Verification v = testing::verify_result(hp, got, reference);
  return v.passed ? "" : rung + ": " + v.summary();
}

// f32 rungs that keep something in the context: pipelined (A^T workspace for NN, raised
// limits), pitched (pitched copies), cuBLAS (a handle), 3xTF32 on Hopper (split copies).
std::vector<std::string> stateful_rungs() {
  std::vector<std::string> names;
  for (const char* name : {"pipelined", "pitched", "cublas_sgemm", "wgmma_3xtf32"})
    if (const Variant* v = find_variant(Backend::Cuda, name); v && unavailable_here(*v).empty())
      names.emplace_back(name);
  return names;
}

void two_contexts_at_once(int device0, int device1) {
  testing::Seeds seeds;
  const std::uint64_t seed = seeds.next();
  SCOPED_TRACE(seeds.describe(seed));
  const std::vector<std::string> rungs = stateful_rungs();
  ASSERT_FALSE(rungs.empty());
  const int devices[2] = {device0, device1};
  std::string failures[2];
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      if (cudaSetDevice(devices[t]) != cudaSuccess) {
        failures[t] = "cudaSetDevice";
        return;
      }
      cudaStream_t stream = nullptr;
      if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
        failures[t] = "stream";
        return;
      }
      {
        std::unique_ptr<Context> context;
        if (const Status s = Context::create({.backend = Backend::Cuda, .device = devices[t], .stream = stream},
                                             context);
            !s) {
          failures[t] = s.describe();
        } else {
          // Growing sizes: every workspace is reallocated while the other thread computes.
          for (int round = 0; round < 4 && failures[t].empty(); ++round)
            for (const std::string& rung : rungs) {
              failures[t] = run_once(*context, rung, seed + 100 * t + round, 97 + 61 * round + t, 130 + 7 * t,
                                     33 + 45 * round);
              if (!failures[t].empty()) break;
            }
        }
      }
      cudaStreamDestroy(stream);
    });
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");
}

TEST(ContextGpu, TwoContextsOnTwoThreadsOfOneDevice) {
  if (device_count() < 1) GTEST_SKIP() << "SKIPPED: no CUDA device";
  two_contexts_at_once(0, 0);
}

TEST(ContextGpu, TwoContextsOnTwoDevices) {
  if (device_count() < 2) GTEST_SKIP() << "SKIPPED: fewer than two CUDA devices";
  two_contexts_at_once(0, 1);
}

TEST(ContextGpu, AutoRunsAVerifiedRungOfEachType) {
  if (device_count() < 1) GTEST_SKIP() << "SKIPPED: no CUDA device";
  std::unique_ptr<Context> context = testing::make_context(Backend::Cuda);
  ASSERT_NE(context, nullptr);
  testing::Seeds seeds;
  const std::uint64_t seed = seeds.next();
  SCOPED_TRACE(seeds.describe(seed));
  EXPECT_EQ(run_once(*context, "auto", seed, 131, 77, 65), "");
  Variant chosen;
  HostProblem hp = make_host_problem({.m = 64, .n = 64, .k = 64, .seed = seed});
  ASSERT_TRUE(resolve_variant(*context, hp.problem, {}, chosen).is_ok());
  EXPECT_FALSE(chosen.anchor) << chosen.name;
  EXPECT_EQ(unavailable_here(chosen), "") << chosen.name;
}

TEST(ContextGpu, AnSmCountTargetLeavesTheResultAlone) {
  if (device_count() < 1) GTEST_SKIP() << "SKIPPED: no CUDA device";
  std::unique_ptr<Context> context = testing::make_context(Backend::Cuda);
  ASSERT_NE(context, nullptr);
  testing::Seeds seeds;
  // Persistent grids of 5 SMs, and of 1 (a target below a cluster still runs one): many
  // rounds per block, every tile of a 600 x 700 problem still written once.
  for (const int sms : {5, 1}) {
    context->set_sm_count_target(sms);
    EXPECT_EQ(context->sm_count_target(), sms);
    for (const std::string& rung : stateful_rungs()) {
      const std::uint64_t seed = seeds.next();
      SCOPED_TRACE(seeds.describe(seed) + " " + rung + " sms " + std::to_string(sms));
      EXPECT_EQ(run_once(*context, rung, seed, 600, 700, 300), "");
    }
  }
  context->set_sm_count_target(0);
  EXPECT_EQ(context->sm_count_target(), 0);
}

TEST(ContextGpu, ADeviceThatDoesNotExistIsNamed) {
  const int n = device_count();
  if (n < 1) GTEST_SKIP() << "SKIPPED: no CUDA device";
  std::unique_ptr<Context> context;
  const Status s = Context::create({.backend = Backend::Cuda, .device = n + 6}, context);
  EXPECT_EQ(s.code(), StatusCode::InvalidValue);
  EXPECT_NE(s.message().find(std::to_string(n + 6)), std::string::npos) << s.message();
  EXPECT_EQ(context, nullptr);
}

}  // namespace
}  // namespace gemmlab
