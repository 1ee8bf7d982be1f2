// SPDX-License-Identifier: Apache-2.0
// File: calibration: the fit recovers a known line, refuses what cannot be fitted; the
// ping-pong really exchanges messages between two thread ranks; the model is well formed.
#include "optcoll/exec/calibrate.h"

#include <cmath>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "optcoll/exec/threads/world.h"
#include "optcoll/model/error.h"
#include "tests/exec/exec_helpers.h"

namespace optcoll {
namespace {

TEST(Calibrate, FitRecoversAnExactLine) {
  std::vector<PingPongSample> samples;
  for (const std::size_t m : ping_pong_sizes(1 << 20)) {
    samples.push_back({m, 3e-6 + 2e-10 * static_cast<double>(m)});
  }
  for (const FitKind kind : {FitKind::kAsymptotic, FitKind::kRelative}) {
    const LinearFit fit = fit_latency_bandwidth(samples, kind);
    EXPECT_NEAR(fit.intercept, 3e-6, 1e-12);
    EXPECT_NEAR(fit.slope, 2e-10, 1e-16);
    EXPECT_LT(fit.max_relative_error, 1e-9);
  }
}

TEST(Calibrate, FitClampsNoise) {
  // Times that fall with size (noise) would fit a negative slope: clamped to 0.
  const std::vector<PingPongSample> falling = {{8, 2e-6}, {1024, 1.9e-6}, {4096, 1.8e-6}};
  for (const FitKind kind : {FitKind::kAsymptotic, FitKind::kRelative}) {
    EXPECT_EQ(fit_latency_bandwidth(falling, kind).slope, 0.0);
    EXPECT_GT(fit_latency_bandwidth(falling, kind).intercept, 0.0);
  }
}

// A TCP link as measured on the emulated cluster: flat 6 us up to 2 KiB, a bend, then
// 80 ns per byte. The asymptotic fit keeps both ends; the relative one lets the many small
// sizes pull beta far below the link's.
TEST(Calibrate, AsymptoticFitKeepsLatencyAndBandwidthOfABentCurve) {
  std::vector<PingPongSample> samples;
  for (const std::size_t m : ping_pong_sizes(std::size_t{4} << 20)) {
    const double t = m <= 2048 ? 6e-6 : 6e-6 + 8e-8 * static_cast<double>(m);
    samples.push_back({m, t});
  }
  const LinearFit fit = fit_latency_bandwidth(samples, FitKind::kAsymptotic);
  EXPECT_NEAR(fit.slope, 8e-8, 1e-15);
  EXPECT_NEAR(fit.intercept, 6e-6 - 8 * 8e-8, 1e-12);  // exact at 8 B
  const LinearFit relative = fit_latency_bandwidth(samples, FitKind::kRelative);
  EXPECT_LT(relative.slope, 0.5 * fit.slope);
  // Within 0.1% from 64 KiB up (in between no line can follow the bend); the relative fit
  // is off by more than half at 4 MiB.
  for (const auto& s : samples) {
    const double error =
        std::abs(fit.intercept + fit.slope * static_cast<double>(s.bytes) - s.seconds) / s.seconds;
    if (s.bytes >= (std::size_t{64} << 10)) {
      EXPECT_LT(error, 1e-3) << s.bytes;
    }
  }
  const auto& last = samples.back();
  EXPECT_GT(std::abs(relative.intercept + relative.slope * static_cast<double>(last.bytes) -
                     last.seconds) /
                last.seconds,
            0.5);
  EXPECT_EQ(parse_fit_kind("relative"), FitKind::kRelative);
  EXPECT_EQ(parse_fit_kind("asymptotic"), FitKind::kAsymptotic);
  EXPECT_THROW(parse_fit_kind("cubic"), Error);
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
    if (transport.rank() == 0) {
      samples = std::move(mine);
    } else if (transport.rank() == 2) {
      others = mine.size();
    }
  });
  ASSERT_EQ(samples.size(), sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(samples[i].bytes, sizes[i]);
    EXPECT_GT(samples[i].seconds, 0.0);
  }
  EXPECT_EQ(others, 0u);  // rank 2 takes no part
  ThreadWorld alone(1);
  EXPECT_THROW(
      alone.run([&](Transport& t) { measure_ping_pong(t, sizes, 1, std::chrono::seconds(1)); }),
      Error);
}

TEST(Calibrate, PingPongBetweenAnyTwoRanks) {
  const auto sizes = ping_pong_sizes(1 << 10);
  std::vector<std::size_t> held(3, 99);
  ThreadWorld world(3);
  world.run([&](Transport& transport) {
    const auto mine = measure_ping_pong(transport, sizes, 2, std::chrono::seconds(10), {2, 0});
    held[static_cast<std::size_t>(transport.rank())] = mine.size();
  });
  EXPECT_EQ(held, (std::vector<std::size_t>{0, 0, sizes.size()}));  // on the pair's first
  for (const auto& bad : std::vector<std::pair<Rank, Rank>>{{1, 1}, {0, 3}, {-1, 0}}) {
    ThreadWorld two(3);
    std::string message;
    two.run([&](Transport& t) {
      try {
        measure_ping_pong(t, sizes, 1, std::chrono::seconds(1), bad);
      } catch (const Error& e) {
        if (t.rank() == 0) message = e.what();
      }
    });
    EXPECT_TRUE(testing::contains(
        message, fmt::format("a ping-pong needs two distinct ranks from 0 to 2, got {} and {}",
                             bad.first, bad.second)))
        << message;
  }
}

// A transport whose every send keeps its caller busy for `cost` first: a known send gap.
class SlowSendTransport : public testing::ForwardingTransport {
 public:
  SlowSendTransport(Transport& inner, std::chrono::microseconds cost)
      : ForwardingTransport(inner), cost_(cost) {}
  RequestId isend(Rank to, MsgKey key, std::span<const std::byte> data) override {
    const auto until = std::chrono::steady_clock::now() + cost_;
    while (std::chrono::steady_clock::now() < until) {
    }
    return ForwardingTransport::isend(to, key, data);
  }

 private:
  std::chrono::microseconds cost_;
};

TEST(Calibrate, SendGapMeasuresTheSendersPerMessageCost) {
  // Each send costs its sender 300 us, far above the thread transport's own latency: a burst
  // of 6 takes 5 x 300 us more than one message, so the gap is about 300 us (the median of
  // 5 timings; a loaded machine only adds to the burst's time).
  std::optional<SendGapSample> sample;
  std::optional<SendGapSample> elsewhere{SendGapSample{}};
  ThreadWorld world(3);
  world.run([&](Transport& transport) {
    SlowSendTransport slow(transport, std::chrono::microseconds(300));
    auto mine = measure_send_gap(slow, 8, 6, 5, std::chrono::seconds(10));
    if (transport.rank() == 0) sample = mine;
    if (transport.rank() == 2) elsewhere = mine;
  });
  ASSERT_TRUE(sample.has_value());
  EXPECT_FALSE(elsewhere.has_value());  // rank 2 takes no part
  EXPECT_EQ(sample->bytes, 8u);
  EXPECT_EQ(sample->burst, 6);
  EXPECT_GE(sample->single_round_trip, 600e-6);  // one slow send each way
  EXPECT_GE(sample->burst_round_trip, sample->single_round_trip + 5 * 280e-6);
  EXPECT_GE(sample->gap, 280e-6);
  EXPECT_LE(sample->gap, sample->single_round_trip / 2);  // at most the one-way latency
  // Without the slow sends the gap is far smaller.
  std::optional<SendGapSample> fast;
  ThreadWorld pair(2);
  pair.run([&](Transport& transport) {
    auto mine = measure_send_gap(transport, 8, 6, 5, std::chrono::seconds(10));
    if (transport.rank() == 0) fast = mine;
  });
  ASSERT_TRUE(fast.has_value());
  EXPECT_LT(fast->gap, 250e-6);
}

TEST(Calibrate, SendGapRefusesBadArguments) {
  ThreadWorld pair(2);
  EXPECT_THROW(
      pair.run([](Transport& t) { measure_send_gap(t, 8, 1, 3, std::chrono::seconds(1)); }), Error);
  EXPECT_THROW(
      pair.run([](Transport& t) { measure_send_gap(t, 8, 4, 0, std::chrono::seconds(1)); }), Error);
  ThreadWorld alone(1);
  EXPECT_THROW(
      alone.run([](Transport& t) { measure_send_gap(t, 8, 4, 3, std::chrono::seconds(1)); }),
      Error);
}

TEST(Calibrate, EveryBuiltInKernelIsTimed) {
  const auto kernels = measure_reduce_kernels(1 << 12, 1);
  EXPECT_EQ(kernels.size(), 16u);
  for (const auto& k : kernels) EXPECT_GT(k.seconds_per_byte, 0.0) << k.dtype << " " << k.op;
  EXPECT_THROW(measure_reduce_kernels(64, 0), Error);
}

}  // namespace
}  // namespace optcoll
