// SPDX-License-Identifier: Apache-2.0
// File: calibration with every rank active (optcoll/api/calibrate_node.h): the node_beta fit on
// synthetic throughput curves whose saturation is known, and a real calibration at p = 3 on
// threads whose model is valid and whose parts agree with each other (no timing asserted:
// machines are noisy), and the gap's fit to the all-pairs exchange from 4 ranks on.
#include "optcoll/api/calibrate_node.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "optcoll/exec/threads/world.h"
#include "optcoll/model/error.h"
#include "tests/exec/exec_helpers.h"

namespace optcoll {
namespace {

// A small, quick calibration (8 KiB exchanges, 64 KiB copies, 3 repetitions) on a thread
// world of p ranks: rank 0's result.
NodeCalibrationOptions quick_options() {
  NodeCalibrationOptions o;
  o.max_bytes = 8192;
  o.stream_bytes = 1 << 16;
  o.repetitions = 3;
  return o;
}

NodeCalibration calibrate_threads(Rank p, const NodeCalibrationOptions& o) {
  ThreadWorld world(p);
  NodeCalibration c;
  world.run([&](Transport& transport) {
    NodeCalibration mine = calibrate_node(transport, o);
    if (transport.rank() == 0) c = std::move(mine);
  });
  return c;
}

TEST(CalibrateNode, NodeBetaIsTheSaturationOfTheCopyCurve) {
  // One rank copies 10 GB/s; the node saturates at 25 GB/s: 10, 20, 25, 25.
  const std::vector<double> curve{10e9, 20e9, 25e9, 25e9};
  const FittedParameter fit = fit_node_beta(curve, 1 / 10e9);
  EXPECT_EQ(fit.name, "node_beta");
  EXPECT_DOUBLE_EQ(fit.value, 1 / 25e9);
  EXPECT_NEAR(fit.error, 0, 1e-12);
  // A curve that never saturates: the highest level, no error either.
  const FittedParameter linear = fit_node_beta({10e9, 20e9, 30e9}, 1 / 10e9);
  EXPECT_DOUBLE_EQ(linear.value, 1 / 30e9);
  EXPECT_NEAR(linear.error, 0, 1e-12);
  // One stray low point (k = 2) does not drag the level down: the curve's saturation, with
  // that point's error (min(20, 40) / 5 - 1 = 3) as the fit error.
  const FittedParameter stray = fit_node_beta({10e9, 5e9, 30e9, 40e9}, 1 / 10e9);
  EXPECT_DOUBLE_EQ(stray.value, 1 / 40e9);
  EXPECT_NEAR(stray.error, 3, 1e-12);
  // A curve that saturates a little above one level: the level that fits it exactly.
  const FittedParameter noisy = fit_node_beta({10e9, 20e9, 22e9}, 1 / 10e9);
  EXPECT_DOUBLE_EQ(noisy.value, 1 / 22e9);
  EXPECT_NEAR(noisy.error, 0, 1e-12);
  // A curve below one rank's own copy rate (ranks waiting for CPUs, noise): the node is
  // never slower than one copier alone.
  const FittedParameter slow = fit_node_beta({5e9, 6e9, 4e9}, 1 / 10e9);
  EXPECT_DOUBLE_EQ(slow.value, 1 / 10e9);
}

TEST(CalibrateNode, OptionsAreCheckedBeforeMeasuring) {
  NodeCalibrationOptions o;
  o.op = "xor";
  EXPECT_THROW(check_calibration_options(o), Error);
  o = {};
  o.dtype = "complex";
  EXPECT_THROW(check_calibration_options(o), Error);
  o = {};
  o.send_modes.clear();
  EXPECT_THROW(check_calibration_options(o), Error);
  o = {};
  o.max_bytes = 16;
  EXPECT_THROW(check_calibration_options(o), Error);
}

TEST(CalibrateNode, AWorldOfThreeGivesAValidConsistentModel) {
  NodeCalibrationOptions o = quick_options();
  o.send_modes = {SendMode::kPort, SendMode::kReceiver};
  o.send_mode_min_bytes = 1024;
  const NodeCalibration c = calibrate_threads(3, o);
  EXPECT_EQ(c.ranks, 3);
  EXPECT_NO_THROW(validate(c.model));
  EXPECT_TRUE(c.model.per_byte);
  ASSERT_TRUE(c.model.node_beta.has_value());
  EXPECT_EQ(c.copy_throughput.size(), 3u);  // no cores given: every k up to p
  EXPECT_EQ(c.exchange.size(), c.ping_pong.size());
  EXPECT_EQ(c.model.send_mode_min_bytes, 1024u);
  EXPECT_TRUE(c.model.send_mode == SendMode::kPort || c.model.send_mode == SendMode::kReceiver);
  // alpha is the smallest exchange step less its bytes: the model predicts that step as
  // measured (8 B ask for too little memory to stretch anything).
  ASSERT_FALSE(c.checks.empty());
  EXPECT_NEAR(c.checks.front().predicted, c.checks.front().measured,
              1e-9 + 1e-6 * c.checks.front().measured);
  // The copy rate is the one-rank point of the curve it fits node_beta to.
  EXPECT_LE(*c.model.node_beta, c.model.copy * (1 + 1e-9));
  for (const auto& f : c.fitted) {
    EXPECT_TRUE(std::isfinite(f.value)) << f.name;
    EXPECT_GE(f.error, 0) << f.name;
  }
}

TEST(CalibrateNode, FromFourRanksTheGapFitsTheAllPairsExchange) {
  NodeCalibrationOptions o = quick_options();
  o.send_modes = {SendMode::kPort};
  const NodeCalibration c = calibrate_threads(4, o);
  ASSERT_TRUE(c.all_pairs.has_value());
  ASSERT_TRUE(c.send_gap.has_value());
  ASSERT_TRUE(c.model.send_gap.has_value());
  ASSERT_TRUE(c.model.receive_gap.has_value());
  EXPECT_EQ(*c.model.send_gap, *c.model.receive_gap);
  EXPECT_GE(*c.model.send_gap, c.send_gap->gap);  // never below the two-rank burst's
  const auto check = std::find_if(c.checks.begin(), c.checks.end(), [](const ModelCheck& k) {
    return k.what.starts_with("exchange of 8 B between every pair");
  });
  ASSERT_NE(check, c.checks.end());
  const double whole = c.model.transfer_time(0, 1, 1, sizeof(double));
  EXPECT_LE(*c.model.send_gap, std::max(whole, c.send_gap->gap) * (1 + 1e-9));
  if (*c.model.send_gap >= whole * (1 - 1e-9)) {
    // Raised as far as it goes (a port held for the whole transfer): still no slower than
    // measured (ranks that wait for CPUs can make the exchange slower than any gap).
    EXPECT_LE(check->predicted, check->measured * (1 + 2e-3));
  } else if (*c.model.send_gap > c.send_gap->gap) {
    // Raised to fit: the model predicts the exchange as measured (bisection to 0.1%).
    EXPECT_NEAR(check->predicted, check->measured, 2e-3 * check->measured);
  } else {
    EXPECT_GE(check->predicted, check->measured * (1 - 1e-9));  // the burst's gap sufficed
  }
}

TEST(CalibrateNode, BelowFourRanksTheGapIsTheBurstsAlone) {
  NodeCalibrationOptions o = quick_options();
  o.send_modes = {SendMode::kPort};
  const NodeCalibration c = calibrate_threads(2, o);
  EXPECT_FALSE(c.all_pairs.has_value());
  ASSERT_TRUE(c.send_gap.has_value());
  ASSERT_TRUE(c.model.send_gap.has_value());
  EXPECT_EQ(*c.model.send_gap, c.send_gap->gap);
}

// Messages between the two "nodes" of a thread world are slowed by a known delay per send,
// as a network would: the levels' ping-pongs must see it on the inter-node pair only.
class SlowBetweenNodes : public testing::ForwardingTransport {
 public:
  SlowBetweenNodes(Transport& inner, const Placement& placement, std::chrono::microseconds delay)
      : ForwardingTransport(inner), placement_(placement), delay_(delay) {}
  RequestId isend(Rank to, MsgKey key, std::span<const std::byte> data) override {
    if (node(to) != node(rank())) {
      const auto until = std::chrono::steady_clock::now() + delay_;
      while (std::chrono::steady_clock::now() < until) {
      }
    }
    return ForwardingTransport::isend(to, key, data);
  }

 private:
  std::int32_t node(Rank r) const { return placement_.node_of[static_cast<std::size_t>(r)]; }
  Placement placement_;
  std::chrono::microseconds delay_;
};

TEST(CalibrateNode, LevelsComeFromAPingPongWithinAndOneBetweenNodes) {
  const Placement placement{{0, 0, 1, 1}};
  NodeCalibrationOptions o = quick_options();
  o.max_bytes = 1024;
  o.repetitions = 3;
  NodeCalibration c;
  c.model.cores = 4;
  c.model.node_beta = 1e-10;
  c.fitted = {{"alpha", 1, "before", 0}, {"beta", 1, "before", 0}, {"node_beta", 1e-10, "", 0}};
  ThreadWorld world(4);
  world.run([&](Transport& transport) {
    SlowBetweenNodes slow(transport, placement, std::chrono::milliseconds(2));
    NodeCalibration mine = c;
    calibrate_levels(slow, placement, o, mine);
    if (transport.rank() == 0) c = std::move(mine);
  });
  ASSERT_TRUE(c.model.placement.has_value());
  EXPECT_EQ(c.model.placement->node_of, placement.node_of);
  ASSERT_TRUE(c.model.inter_alpha && c.model.inter_beta);
  EXPECT_GE(*c.model.inter_alpha, 1.5e-3);             // one send each way: 2 ms each
  EXPECT_LT(c.model.alpha, *c.model.inter_alpha / 4);  // ranks 0 and 1 share a node
  EXPECT_FALSE(c.model.cores.has_value());
  EXPECT_FALSE(c.model.node_beta.has_value());
  std::vector<std::string> names;
  for (const auto& f : c.fitted) names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"alpha", "beta", "inter_alpha", "inter_beta"}));
  EXPECT_TRUE(testing::contains(c.fitted[0].from, "ranks 0 and 1 (one node)")) << c.fitted[0].from;
  EXPECT_TRUE(testing::contains(c.fitted[2].from, "ranks 0 and 2 (two nodes)")) << c.fitted[2].from;
}

TEST(CalibrateNode, LevelsOfOneNodeChangeNothing) {
  NodeCalibration c;
  c.model.alpha = 3;
  ThreadWorld world(2);
  world.run([&](Transport& transport) {
    NodeCalibration mine = c;
    calibrate_levels(transport, Placement{{0, 0}}, quick_options(), mine);
    if (transport.rank() == 0) c = std::move(mine);
  });
  EXPECT_EQ(c.model.alpha, 3);
  EXPECT_FALSE(c.model.placement.has_value());
}

}  // namespace
}  // namespace optcoll
