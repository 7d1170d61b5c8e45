// The NVLink level (cuda/distributed.hpp): on two or more GPUs measure_peer_link gives positive
// copy rates and, in a build with NCCL, positive broadcast and all-gather bus rates, with every
// figure's data checked; with fewer it is InvalidValue naming how many GPUs are visible.
// Label: gpu; what needs two GPUs is skipped, with the count, on a machine with fewer.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <numeric>
#include <string>
#include <vector>

#include "cuda/distributed.hpp"
#include "cuda/nccl/collectives_bandwidth.hpp"

namespace gemmlab {
namespace {

// Visible CUDA devices; 0 without a device or a driver.
int visible_gpus() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

std::vector<int> all_gpus() {
  std::vector<int> devices(static_cast<std::size_t>(visible_gpus()));
  std::iota(devices.begin(), devices.end(), 0);
  return devices;
}

#define REQUIRE_TWO_GPUS()                                                         \
  if (const int gpus = visible_gpus(); gpus < 2)                                   \
  GTEST_SKIP() << "the NVLink level needs two GPUs; " << gpus << " visible"

TEST(PeerLink, TwoGpusGivePositiveCopyAndCollectiveRates) {
  REQUIRE_TWO_GPUS();
  const std::vector<int> devices = all_gpus();
  // The current device is the caller's before and after.
  ASSERT_EQ(cudaSetDevice(devices.back()), cudaSuccess);
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  cuda::PeerLinkRates rates;
  const Status s = cuda::measure_peer_link(devices, kBytes, 3, rates);
  ASSERT_TRUE(s.is_ok()) << s.describe();
  int current = -1;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, devices.back());
  EXPECT_EQ(rates.bytes, kBytes);
  EXPECT_EQ(rates.gpus, static_cast<int>(devices.size()));
  EXPECT_GT(rates.copy, 0.0);
  EXPECT_GT(rates.copy_both, 0.0);
#ifdef GEMMLAB_HAVE_NCCL
  EXPECT_GT(rates.broadcast_bus, 0.0);
  EXPECT_GT(rates.broadcast_algorithm, 0.0);
  EXPECT_GT(rates.all_gather_bus, 0.0);
  EXPECT_DOUBLE_EQ(rates.broadcast_bus, rates.broadcast_algorithm);  // nccl-tests: factor 1 for broadcast
#else
  EXPECT_EQ(rates.broadcast_bus, 0.0) << "a build without NCCL measures no collective";
  EXPECT_EQ(rates.all_gather_bus, 0.0);
#endif
}

// The figures under measure_peer_link, on an awkward size (not a multiple of the GPU count's
// share, past the 4 MiB checked whole): every timed repetition counted, every check clean.
TEST(PeerLink, EveryFigureIsTimedAndItsDataChecked) {
  REQUIRE_TWO_GPUS();
  const std::vector<int> devices = all_gpus();
  constexpr std::size_t kBytes = (std::size_t{5} << 20) + 12;
  cuda::nvlink::PeerCopyMeasurements copies;
  Status s = cuda::nvlink::measure_peer_copies(devices[0], devices[1], kBytes, 2, copies);
  ASSERT_TRUE(s.is_ok()) << s.describe();
  for (const cuda::nvlink::LinkMeasurement* m : {&copies.one_way, &copies.both_ways}) {
    EXPECT_EQ(m->time.reps, 2);
    EXPECT_GT(m->time.median_ms, 0.0);
    EXPECT_GT(m->checked_words, 0);
    EXPECT_EQ(m->mismatches, 0);
  }
  std::vector<cuda::nvlink::CollectiveMeasurements> collectives;
  s = cuda::nvlink::measure_collectives(devices, {kBytes, std::size_t{1} << 20}, 2, collectives);
  ASSERT_TRUE(s.is_ok()) << s.describe();
  ASSERT_EQ(collectives.size(), 2u);
#ifdef GEMMLAB_HAVE_NCCL
  for (const cuda::nvlink::CollectiveMeasurements& c : collectives) {
    SCOPED_TRACE(std::to_string(c.bytes) + " bytes");
    ASSERT_TRUE(c.measured);
    EXPECT_EQ(c.gpus, static_cast<int>(devices.size()));
    EXPECT_EQ(c.share % 4, 0u);
    EXPECT_LE(c.share * devices.size(), c.bytes);
    for (const cuda::nvlink::LinkMeasurement* m : {&c.broadcast, &c.all_gather}) {
      EXPECT_EQ(m->time.reps, 2);
      EXPECT_GT(m->rate(), 0.0);
      EXPECT_GT(m->checked_words, 0);
      EXPECT_EQ(m->mismatches, 0);
    }
    EXPECT_DOUBLE_EQ(c.all_gather.bus_factor,
                     static_cast<double>(devices.size() - 1) / static_cast<double>(devices.size()));
  }
#else
  for (const cuda::nvlink::CollectiveMeasurements& c : collectives) EXPECT_FALSE(c.measured);
#endif
}

TEST(PeerLink, FewerThanTwoGpusIsInvalidValueNamingTheCount) {
  const int gpus = visible_gpus();
  cuda::PeerLinkRates rates;
  if (gpus < 2) {
    const Status s = cuda::measure_peer_link({0, 1}, std::size_t{1} << 20, 1, rates);
    EXPECT_EQ(s.code(), StatusCode::InvalidValue) << s.describe();
    const std::string want = "the NVLink level needs two GPUs; " + std::to_string(gpus) + " visible";
    EXPECT_NE(s.message().find(want), std::string::npos) << s.message();
  }
  if (gpus >= 1) {  // one GPU named, whatever the machine has
    const Status s = cuda::measure_peer_link({0}, std::size_t{1} << 20, 1, rates);
    EXPECT_EQ(s.code(), StatusCode::InvalidValue) << s.describe();
    EXPECT_NE(s.message().find("the NVLink level needs two GPUs"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(std::to_string(gpus) + " visible"), std::string::npos) << s.message();
  }
  EXPECT_EQ(rates.copy, 0.0) << "nothing is reported for a refused call";
}

TEST(PeerLink, CanAccessPeerNamesADeviceThatDoesNotExist) {
  const int gpus = visible_gpus();
  if (gpus < 1) GTEST_SKIP() << "no CUDA device on this machine";
  bool can = false;
  Status s = cuda::can_access_peer(0, 0, can);
  ASSERT_TRUE(s.is_ok()) << s.describe();
  EXPECT_TRUE(can) << "a device reaches its own memory";
  s = cuda::can_access_peer(0, gpus, can);
  EXPECT_EQ(s.code(), StatusCode::InvalidValue) << s.describe();
  EXPECT_NE(s.message().find("device " + std::to_string(gpus) + " does not exist"), std::string::npos) << s.message();
  if (gpus >= 2) {
    s = cuda::can_access_peer(0, 1, can);
    EXPECT_TRUE(s.is_ok()) << s.describe();
  }
}

}  // namespace
}  // namespace gemmlab
