// SPDX-License-Identifier: Apache-2.0
// File: calibration: the fit recovers a known line, refuses what cannot be fitted; the
// ping-pong really exchanges messages between two thread ranks; the model is well formed.
#include "optcoll/exec/calibrate.h"

#include <gtest/gtest.h>

#include "optcoll/exec/threads/world.h"
#include "optcoll/model/error.h"

namespace optcoll {
namespace {

TEST(Calibrate, FitRecoversAnExactLine) {
  std::vector<PingPongSample> samples;
  for (const std::size_t m : ping_pong_sizes(1 << 20)) {
    samples.push_back({m, 3e-6 + 2e-10 * static_cast<double>(m)});
  }
  const LinearFit fit = fit_latency_bandwidth(samples);
  EXPECT_NEAR(fit.intercept, 3e-6, 1e-12);
  EXPECT_NEAR(fit.slope, 2e-10, 1e-16);
  EXPECT_LT(fit.max_relative_error, 1e-9);
}

TEST(Calibrate, FitWeighsRelativeErrorsAndClampsNoise) {
  // Times that fall with size (noise) would fit a negative slope: clamped to 0.
  const std::vector<PingPongSample> falling = {{8, 2e-6}, {1024, 1.9e-6}, {4096, 1.8e-6}};
  EXPECT_EQ(fit_latency_bandwidth(falling).slope, 0.0);
  EXPECT_GT(fit_latency_bandwidth(falling).intercept, 0.0);
}

TEST(Calibrate, FitRefusesTooFewSizesAndNonPositiveTimes) {
  const std::vector<PingPongSample> one = {{8, 1e-6}, {8, 1.1e-6}};
  EXPECT_THROW(fit_latency_bandwidth(one), Error);
  const std::vector<PingPongSample> zero = {{8, 0.0}, {64, 1e-6}};
  EXPECT_THROW(fit_latency_bandwidth(zero), Error);
  EXPECT_THROW(ping_pong_sizes(16), Error);
  EXPECT_EQ(ping_pong_sizes(32), (std::vector<std::size_t>{8, 32}));
  EXPECT_EQ(ping_pong_sizes(100), (std::vector<std::size_t>{8, 32, 100}));
}

TEST(Calibrate, PingPongOnThreadsTimesEverySizeOnRankZero) {
  const auto sizes = ping_pong_sizes(1 << 12);
  std::vector<PingPongSample> samples;
  std::size_t others = 99;
  ThreadWorld world(3);
  world.run([&](Transport& transport) {
    auto mine = measure_ping_pong(transport, sizes, 3, std::chrono::seconds(10));
    if (transport.rank() == 0) samples = std::move(mine);
    if (transport.rank() == 2) others = mine.size();
  });
  ASSERT_EQ(samples.size(), sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(samples[i].bytes, sizes[i]);
    EXPECT_GT(samples[i].seconds, 0.0);
  }
  EXPECT_EQ(others, 0u);  // rank 2 takes no part
  ThreadWorld alone(1);
  EXPECT_THROW(alone.run([&](Transport& t) { measure_ping_pong(t, sizes, 1, std::chrono::seconds(1)); }),
               Error);
}

TEST(Calibrate, ModelTakesGammaFromTheChosenKernel) {
  const auto kernels = measure_reduce_kernels(1 << 12, 1);
  EXPECT_EQ(kernels.size(), 16u);
  for (const auto& k : kernels) EXPECT_GT(k.seconds_per_byte, 0.0) << k.dtype << " " << k.op;
  const double copy = measure_copy_per_byte(1 << 12, 1);
  EXPECT_GT(copy, 0.0);
  const CostModel model = calibrated_model({1e-6, 1e-10, 0}, kernels, "int64", "max", copy);
  EXPECT_TRUE(model.per_byte);
  EXPECT_EQ(model.alpha, 1e-6);
  EXPECT_EQ(model.beta, 1e-10);
  EXPECT_EQ(model.copy, copy);
  for (const auto& k : kernels) {
    if (k.dtype == "int64" && k.op == "max") {
      EXPECT_EQ(model.gamma, k.seconds_per_byte);
    }
  }
  EXPECT_THROW(calibrated_model({1e-6, 1e-10, 0}, kernels, "int64", "xor", copy), Error);
  EXPECT_THROW(measure_reduce_kernels(64, 0), Error);
  EXPECT_THROW(measure_copy_per_byte(64, 0), Error);
}

}  // namespace
}  // namespace optcoll
