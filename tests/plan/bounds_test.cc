// SPDX-License-Identifier: Apache-2.0
// File: the registry's lower bounds (OPTCOLL_BOUND, optcoll/algorithms/bounds.h) against the
// simulator: for every algorithm that has one, over rank counts, roots, counts (zeros,
// fewer elements than ranks, irregular v-counts), parameter values and cost models (unit,
// latency-bound, per byte, k ports, half duplex with overlap, non-homogeneous pairs, tori),
// the bound never exceeds the simulated time of the schedule the builder makes. A bound that
// did would let `auto` skip an algorithm that could win.
#include "optcoll/algorithms/bounds.h"

#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/placement.h"
#include "optcoll/model/topology.h"
#include "optcoll/sim/simulator.h"
#include "tests/testing/registry_cases.h"
#include "tests/testing/textbook_model.h"

namespace optcoll {
namespace {

struct NamedModel {
  std::string name;
  CostModel model;
};

// Random pair matrices: alpha in [1, 10], beta in [0.5, 2] per ordered pair.
CostModel pair_model(Rank p) {
  std::mt19937 rng(static_cast<std::uint32_t>(p) * 7919u);
  std::uniform_real_distribution<Time> alpha(1, 10);
  std::uniform_real_distribution<Time> beta(0.5, 2);
  CostModel m = testing::abstract_model(1, 1, 0.3, 0.1);
  m.pair_nranks = p;
  for (Rank i = 0; i < p * p; ++i) {
    m.pair_alpha.push_back(alpha(rng));
    m.pair_beta.push_back(beta(rng));
  }
  return m;
}

// A torus with p nodes for the p that have one here.
std::optional<std::string> torus_for(Rank p) {
  switch (p) {
    case 4:
      return "torus:2x2:bi";
    case 8:
      return "torus:2x4:uni";
    case 16:
      return "torus:4x4:bi";
    case 64:
      return "torus:4x4x4:bi";
    default:
      return std::nullopt;
  }
}

std::vector<NamedModel> models_for(Rank p) {
  std::vector<NamedModel> models;
  models.push_back({"unit", testing::abstract_model(1, 1, 0, 0)});
  models.push_back({"latency", testing::abstract_model(1000, 1, 0.5, 0.25)});
  models.push_back({"per_byte", reference_cluster_model()});
  CostModel two_half = testing::abstract_model(3, 1, 2, 1);
  two_half.ports = 2;
  two_half.duplex = Duplex::kHalf;
  two_half.overlap = true;
  models.push_back({"two_ports_half_duplex_overlap", two_half});
  CostModel three = testing::abstract_model(5, 0.5, 1, 0);
  three.ports = 3;
  models.push_back({"three_ports", three});
  CostModel shared = testing::abstract_model(4, 1, 0.5, 0.25);
  shared.send_mode = SendMode::kShared;
  shared.send_mode_min_bytes = 0;  // identical sends in progress share the sender's port
  models.push_back({"shared_sends", shared});
  CostModel receiver = testing::abstract_model(4, 1, 0.5, 0.25);
  receiver.send_mode = SendMode::kReceiver;  // the receiver copies: the sender holds nothing
  models.push_back({"receiver_sends", receiver});
  CostModel node = receiver;
  node.node_beta = 0.5;  // the node's memory moves 2 units per time unit, all ranks together
  node.cores = 2;
  node.send_gap = 1;
  models.push_back({"node", node});
  CostModel helped = testing::abstract_model(4, 1, 0.5, 0.25);
  helped.helped_bytes = 1;  // an idle sender copies half of every message
  helped.folds_copies = true;
  models.push_back({"helped", helped});
  CostModel in_place = testing::abstract_model(4, 1, 0.5, 0.25);
  in_place.combines_in_place = true;  // a receive-reduce takes 4 + 0.5 m, not 4 + m (+ 0.5 m)
  models.push_back({"in_place", in_place});
  in_place.helped_bytes = 1;
  in_place.receive_gap = 1;
  models.push_back({"in_place_helped_receive_gap", in_place});
  CostModel node_helped = node;
  node_helped.helped_bytes = 64;
  models.push_back({"node_helped", node_helped});
  CostModel gap = testing::abstract_model(20, 1, 0.5, 0.25);
  gap.send_gap = 2;  // a sender's port is free after 2 + m; its message arrives after 20 + m
  models.push_back({"send_gap", gap});
  CostModel receive_gap = testing::abstract_model(20, 1, 0.5, 0.25);
  receive_gap.receive_gap = 2;  // a receiver's port is free after 2 + m, its data there at 20 + m
  models.push_back({"receive_gap", receive_gap});
  CostModel both_gaps = testing::abstract_model(20, 1, 0.5, 0.25);
  both_gaps.send_gap = 1;
  both_gaps.receive_gap = 3;
  models.push_back({"both_gaps", both_gaps});
  if (p >= 2) models.push_back({"pairs", pair_model(p)});
  if (const auto torus = torus_for(p)) {
    models.push_back(
        {*torus, with_topology(testing::abstract_model(2, 1, 0.5, 0), parse_topology(*torus))});
  }
  return models;
}

// The defaults, and other values of the parameters the bounded algorithms declare.
std::vector<algorithms::Params> params_for(const algorithms::AlgorithmInfo& info) {
  std::vector<algorithms::Params> all{algorithms::Params{}};
  for (const auto& param : info.params()) {
    std::vector<std::string> values;
    if (param.name == "segment") values = {"2", "97"};
    if (param.name == "pieces") values = {"2", "3"};
    if (param.name == "directions") values = {"2"};
    if (param.name == "sync") values = {"1"};
    for (const auto& value : values) {
      algorithms::Params p;
      p.set(std::string(param.name), value);
      all.push_back(std::move(p));
    }
  }
  return all;
}

std::vector<const algorithms::AlgorithmInfo*> bounded_algorithms() {
  std::vector<const algorithms::AlgorithmInfo*> bounded;
  for (const auto& info : algorithms::all_algorithms()) {
    if (info.bound != nullptr) bounded.push_back(&info);
  }
  return bounded;
}

TEST(Bounds, TheRegistryHasBoundsForItsLargestSchedules) {
  std::vector<std::string> names;
  for (const auto* info : bounded_algorithms()) names.emplace_back(info->name);
  for (const char* expected : {"allreduce/ring", "allreduce/reproducible", "allgather/ring",
                               "reduce_scatter_block/ring", "bcast/scatter_ring_allgather"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  }
}

TEST(Bounds, NeverExceedTheSimulatedTime) {
  // The sanitizer builds stop at p = 8 (a prime, a power of two and their neighbours below
  // it): this grid is arithmetic over 16 models, whose code paths the smaller rank counts
  // reach as well; without p = 17 it takes 19 s instead of 40 under AddressSanitizer.
  const std::vector<Rank> ranks = testing::kSanitizedBuild
                                      ? std::vector<Rank>{1, 2, 3, 4, 5, 7, 8}
                                      : std::vector<Rank>{1, 2, 3, 4, 5, 7, 8, 13, 16, 17, 64};
  const std::vector<testing::CountPattern> patterns{
      testing::CountPattern::kZero, testing::CountPattern::kOne, testing::CountPattern::kFive,
      testing::CountPattern::kThousand, testing::CountPattern::kIrregular};
  int checked = 0;
  int positive = 0;
  for (const auto* info : bounded_algorithms()) {
    for (const Rank p : ranks) {
      const auto models = models_for(p);
      for (const auto pattern : patterns) {
        // Fewer patterns at the larger rank counts (the time goes to their rings): fewer
        // elements than ranks, many per rank, and irregular counts with zeros.
        const bool few =
            pattern == testing::CountPattern::kFive || pattern == testing::CountPattern::kThousand;
        if (p >= 16 && !few && pattern != testing::CountPattern::kIrregular) continue;
        if (p == 64 && pattern != testing::CountPattern::kThousand) continue;
        const Rank root = is_rooted(info->collective) ? p / 2 : 0;
        const CollectiveSpec spec = testing::grid_spec(info->collective, p, root, pattern);
        for (const auto& given : params_for(*info)) {
          if (p == 64 && !given.empty()) continue;  // the defaults only at the largest p
          const auto params = algorithms::resolve_params(*info, given);
          if (algorithms::why_not(*info, spec, params)) continue;
          for (const auto& [model_name, model] : models) {
            const std::optional<Time> bound = info->bound(spec, model);
            if (!bound) continue;
            const Schedule schedule = algorithms::build(*info, spec, given, model);
            const SimResult result = simulate(schedule, model);
            ASSERT_EQ(result.status, SimStatus::kOk);
            EXPECT_LE(*bound, result.makespan * (1 + 1e-9) + 1e-12)
                << info->name << " p=" << p << " " << testing::pattern_name(pattern) << " "
                << given.to_string() << " model " << model_name;
            ++checked;
            if (*bound > 0) ++positive;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
  // Bounds that are all zero would be sound and useless.
  EXPECT_GT(positive, checked / 2);
}

// Where the bound is exact: a ring allreduce of p pieces of m elements under the unit model,
// one port, full duplex, no computation cost: 2(p-1)(1 + m) both ways.
TEST(Bounds, RingAllreduceBoundIsTightInTheUnitModel) {
  for (const Rank p : {2, 5, 16}) {
    const CollectiveSpec spec = make_spec(CollectiveKind::kAllreduce, p, 10 * p);
    const CostModel model = testing::abstract_model(1, 1, 0, 0);
    const auto& info = algorithms::lookup("ring", spec.kind);
    const Time expected = 2.0 * (p - 1) * (1 + 10);
    EXPECT_EQ(*info.bound(spec, model), expected);
    EXPECT_EQ(simulate(algorithms::build(info, spec), model).makespan, expected);
  }
}

TEST(Bounds, BuildingBlocks) {
  const CollectiveSpec spec = make_spec(CollectiveKind::kAllgather, 4, 8);
  CostModel model = testing::abstract_model(2, 0.5, 0, 0);
  EXPECT_EQ(algorithms::least_transfer_time(spec, model, 0), 0);
  EXPECT_EQ(algorithms::least_transfer_time(spec, model, 8), 2 + 4);
  EXPECT_EQ(algorithms::chain_bound(spec, model, 3, 8), 3 * 6);
  model.ports = 2;
  EXPECT_EQ(algorithms::fan_in_bound(spec, model, 3, 8), 2 * 6);  // ceil(3 / 2) rounds
  // Non-homogeneous: the cheapest pair.
  model = pair_model(4);
  Time least = 1e300;
  for (Rank i = 0; i < 4; ++i) {
    for (Rank j = 0; j < 4; ++j) {
      if (i != j)
        least = std::min(least, model.pair_alpha[i * 4 + j] + 8 * model.pair_beta[i * 4 + j]);
    }
  }
  EXPECT_DOUBLE_EQ(algorithms::least_transfer_time(spec, model, 8), least);
  EXPECT_EQ(algorithms::largest_block(make_spec_v(CollectiveKind::kAllgatherv, 3, {2, 9, 0})), 9);
}

// Under a placement the bounds look at one pair of each kind (on one node, across nodes):
// the least over every pair, whichever kind is cheaper and whether or not both exist.
TEST(Bounds, ThePlacementsCheapestPairIsTheLeastOverAllPairs) {
  const CollectiveSpec spec = make_spec(CollectiveKind::kAllgather, 7, 8);
  for (const char* placement : {"1x7", "7x1", "0,1,2,0,1,2,0", "3,3,0,1,2,2,2", "0,1,1,1,1,1,1"}) {
    for (const auto& [inter_alpha, inter_beta] : {std::pair{10.0, 4.0}, std::pair{0.5, 0.1}}) {
      CostModel model = testing::abstract_model(2, 0.5, 0, 0);
      model.placement = parse_placement(placement);
      model.inter_alpha = inter_alpha;
      model.inter_beta = inter_beta;
      Time least = 1e300;
      for (Rank i = 0; i < 7; ++i) {
        for (Rank j = 0; j < 7; ++j) {
          if (i != j) least = std::min(least, model.transfer_time(i, j, 8, spec.elem_bytes));
        }
      }
      EXPECT_DOUBLE_EQ(algorithms::least_transfer_time(spec, model, 8), least)
          << placement << " inter_alpha " << inter_alpha;
    }
  }
}

}  // namespace
}  // namespace optcoll
