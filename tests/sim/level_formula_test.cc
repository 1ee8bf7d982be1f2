// SPDX-License-Identifier: Apache-2.0
// File: the butterfly formulas under a placement (patterns::ButterflyCosts, TwoLevelCosts)
// against the simulator: reduce_scatter_block/recursive_halving, allreduce/rabenseifner,
// reduce/rabenseifner and allreduce/recursive_doubling over block placements, round robin
// and uneven nodes, one and two NIC ports, and small to large counts. Where nodes and their
// ranks are powers of two a step's messages leave every node together, as the formula prices
// them: within 5%. Elsewhere the fold and uneven nodes let ranks run ahead of their node's
// turns: within 0.7-1.4x.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/sim/simulator.h"

namespace optcoll {
namespace {

CostModel two_level(const Placement& placement, int ports) {
  CostModel m;
  m.per_byte = true;
  m.alpha = 5e-7;
  m.beta = 2e-11;
  m.gamma = 1e-11;
  m.inter_alpha = 2e-6;
  m.inter_beta = 1e-10;
  m.nic_ports = ports;
  m.placement = placement;
  return m;
}

struct Algorithm {
  const char* name;
  CollectiveKind kind;
};
constexpr Algorithm kButterflies[] = {
    {"reduce_scatter_block/recursive_halving", CollectiveKind::kReduceScatterBlock},
    {"allreduce/rabenseifner", CollectiveKind::kAllreduce},
    {"reduce/rabenseifner", CollectiveKind::kReduce},
    {"allreduce/recursive_doubling", CollectiveKind::kAllreduce},
};

// Each butterfly's formula over `placements` divided by its simulated time, in [low, high].
void expect_ratios(const std::vector<std::string>& placements, double low, double high) {
  for (const Algorithm& a : kButterflies) {
    const auto& info = algorithms::lookup(a.name, a.kind);
    for (const std::string& text : placements) {
      const Placement placement = parse_placement(text);
      const Rank p = placement.nranks();
      for (const int ports : {1, 2}) {
        for (const Count n : {Count{1}, Count{1000}, Count{100000}}) {
          const CostModel model = two_level(placement, ports);
          const Count count = a.kind == CollectiveKind::kReduceScatterBlock ? n / p + 1 : n;
          const auto spec =
              make_spec(a.kind, p, count, a.kind == CollectiveKind::kReduce ? p - 1 : 0);
          const auto estimate = info.estimate(spec, {}, model);
          ASSERT_TRUE(estimate.has_value()) << a.name << " under " << text;
          EXPECT_FALSE(estimate->exact);
          const auto result = simulate(algorithms::build(info, spec, {}, model), model);
          ASSERT_EQ(result.status, SimStatus::kOk) << result.deadlock;
          const double ratio = estimate->time / result.makespan;
          EXPECT_GE(ratio, low) << a.name << " under " << text << ", ports " << ports << ", count "
                                << count;
          EXPECT_LE(ratio, high) << a.name << " under " << text << ", ports " << ports << ", count "
                                 << count;
        }
      }
    }
  }
}

TEST(LevelFormula, ButterfliesOnPowerOfTwoBlocksAreWithinFivePercent) {
  expect_ratios({"1x16", "2x8", "4x4", "8x2", "16x1", "16x4", "4x16"}, 0.95, 1.05);
}

TEST(LevelFormula, ButterfliesOnOtherPlacementsAreWithinTheirBounds) {
  expect_ratios({"3x5", "5x3", "0,1,0,1,0,1,0,1,0,1,0,1", "0,0,0,1,1,2,2,2,2,3", "2x3"}, 0.7, 1.4);
}

// Any other switch in the model (here a send gap) leaves the formulas silent, as before.
TEST(LevelFormula, AnotherSwitchLeavesThemSilent) {
  CostModel model = two_level(parse_placement("4x4"), 1);
  model.send_gap = 1e-7;
  for (const Algorithm& a : kButterflies) {
    const auto& info = algorithms::lookup(a.name, a.kind);
    EXPECT_FALSE(info.estimate(make_spec(a.kind, 16, 64), {}, model).has_value()) << a.name;
  }
}

}  // namespace
}  // namespace optcoll
