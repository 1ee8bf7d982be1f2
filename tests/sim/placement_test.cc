// SPDX-License-Identifier: Apache-2.0
// File: placements (several nodes): parsing and checks, model files, the simulator's
// inter-node costs and NIC channels on hand-computed cases, the lower bounds with levels
// (never above any registry algorithm, attained where one link carries everything), and the
// node-aware algorithms: verified, simulated and run on threads over blocks, round robin,
// uneven nodes, one node and one rank per node.
#include "optcoll/model/placement.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/patterns/levels.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/model/error.h"
#include "optcoll/schedule/builder.h"
#include "optcoll/schedule/validate.h"
#include "optcoll/sim/simulator.h"
#include "optcoll/verify/verify.h"
#include "tests/exec/exec_helpers.h"
#include "tests/testing/registry_cases.h"

namespace optcoll {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

CostModel two_level(std::string_view placement, Time alpha, Time beta, Time inter_alpha,
                    Time inter_beta, int nic_ports = 1) {
  CostModel m;
  m.alpha = alpha;
  m.beta = beta;
  m.inter_alpha = inter_alpha;
  m.inter_beta = inter_beta;
  m.nic_ports = nic_ports;
  m.placement = parse_placement(placement);
  validate(m);
  return m;
}

// ---- placements and model files --------------------------------------------------------

TEST(Placement, ParsesBlocksAndLists) {
  const Placement blocks = parse_placement("3x2");
  EXPECT_EQ(blocks.node_of, (std::vector<std::int32_t>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(blocks.nodes(), 3);
  EXPECT_TRUE(blocks.in_blocks());
  EXPECT_EQ(to_string(blocks), "3x2");
  const Placement round_robin = parse_placement("0,1,2 0 1\n2");
  EXPECT_EQ(round_robin.node_of, (std::vector<std::int32_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_FALSE(round_robin.in_blocks());
  EXPECT_EQ(to_string(round_robin), "0,1,2,0,1,2");
  EXPECT_EQ(round_robin.members()[1], (std::vector<Rank>{1, 4}));
  EXPECT_EQ(parse_placement(to_string(round_robin)), round_robin);
  EXPECT_EQ(even_block_placement(7, 3).node_of, (std::vector<std::int32_t>{0, 0, 0, 1, 1, 2, 2}));
}

TEST(Placement, BadPlacementsNameTheRankAndEntry) {
  EXPECT_EQ(error_of([] { parse_placement("0,0,2,2"); }),
            "placement: node 1 holds no rank (node ids must be 0..2 with each used)");
  EXPECT_EQ(error_of([] { parse_placement("0,1,x,1"); }),
            "placement: entry 2 (rank 2) \"x\" is not a whole number");
  EXPECT_EQ(error_of([] { parse_placement("0,-1"); }),
            "placement: entry 1 (rank 1) -1 is out of range [0, 2147483646]");
  EXPECT_EQ(error_of([] { parse_placement("0x4"); }),
            "placement: node count 0 is out of range [1, 2147483647]");
  EXPECT_EQ(error_of([] { parse_placement("70000x70000"); }),
            "placement: 70000 x 70000 ranks is more than 2147483647");
  EXPECT_EQ(error_of([] { even_block_placement(3, 4); }),
            "placement: 3 ranks cannot fill 4 nodes (each node needs a rank)");
  EXPECT_EQ(error_of([] {
              validate(Placement{{0, 5}});
            }),
            "placement: rank 1 has node id 5; ids run from 0 to 1 (one rank per node at most)");
  EXPECT_EQ(error_of([] { validate(Placement{}); }),
            "placement is empty: it needs a node per rank");
  EXPECT_EQ(error_of([] { parse_placement(" "); }),
            "placement \" \" is empty: give NxM or a node id per rank");
  EXPECT_EQ(error_of([] { validate_for(parse_placement("2x2"), 5); }),
            "placement 2x2 has 4 ranks but the collective has 5");
}

TEST(Placement, ModelFilesCarryItAndRefuseStrayOrConflictingFields) {
  const CostModel m = parse_cost_model_json(
      R"({"alpha": 1, "beta": 2, "inter_alpha": 10, "inter_beta": 20, "nic_ports": 2,
          "placement": [0, 1, 0, 1]})");
  ASSERT_TRUE(m.placement.has_value());
  EXPECT_EQ(to_string(*m.placement), "0,1,0,1");
  EXPECT_FALSE(m.homogeneous());
  EXPECT_EQ(m.latency(0, 2), 1);
  EXPECT_EQ(m.latency(0, 1), 10);
  EXPECT_EQ(m.per_unit(3, 1), 2);
  EXPECT_EQ(m.per_unit(3, 2), 20);
  EXPECT_EQ(parse_cost_model_json(cost_model_to_json(m)), m);
  // Inter-node fields without a placement: kept for the MPI backend's discovered placement,
  // refused where a call is priced.
  const CostModel waiting = parse_cost_model_json(R"({"inter_beta": 1})");
  EXPECT_EQ(waiting.inter_beta, std::optional<Time>(1));
  EXPECT_EQ(error_of([&] { validate_for(waiting, 4); }),
            "model parameter inter_beta prices messages between nodes, but the model has no "
            "placement (give one: --placement NxM or @FILE, or \"placement\" in the model file; "
            "the MPI backend gives it the placement it discovers)");
  EXPECT_EQ(place_on(waiting, parse_placement("2x2")).placement, parse_placement("2x2"));
  EXPECT_EQ(place_on(CostModel{}, parse_placement("2x2")), CostModel{});
  // cores (the processors of the whole job) combines with a placement; node_beta (one
  // node's memory) does not.
  const CostModel shared = parse_cost_model_json(R"({"placement": "2x2", "cores": 2})");
  EXPECT_EQ(shared.cores, std::optional<int>(2));
  EXPECT_EQ(parse_cost_model_json(cost_model_to_json(shared)), shared);
  EXPECT_EQ(
      place_on(parse_cost_model_json(R"({"inter_beta": 1, "cores": 2})"), parse_placement("2x2"))
          .cores,
      std::optional<int>(2));
  EXPECT_EQ(error_of([] { parse_cost_model_json(R"({"placement": "2x2", "node_beta": 1})"); }),
            "model placement 2x2 cannot be combined with node_beta (the placement prices pairs "
            "by node; node_beta describes one node's memory)");
  EXPECT_EQ(error_of([] { parse_cost_model_json(R"({"placement": 4})"); }),
            "model: placement must be a string (\"4x16\") or an array of node ids");
  EXPECT_EQ(error_of([] { parse_cost_model_json(R"({"placement": [0, "a"]})"); }),
            "model: placement entry 1 (rank 1) is \"a\", not a node id (a whole number >= 0)");
  EXPECT_EQ(error_of([] { validate_for(parse_cost_model_json(R"({"placement": "2x2"})"), 6); }),
            "placement 2x2 has 4 ranks but the collective has 6");
}

// ---- the simulator: inter-node costs and NIC channels ------------------------------------

// Linear gather to rank 0 with 4 ports at the root: ranks 2 and 3 sit on the other node.
Time linear_gather(const CostModel& base, Count m) {
  CostModel model = base;
  model.ports = 4;
  const auto spec = make_spec(CollectiveKind::kGather, 4, m, 0);
  const auto result = simulate(algorithms::build("gather/linear", spec, {}, model), model);
  EXPECT_EQ(result.status, SimStatus::kOk);
  return result.makespan;
}

TEST(PlacementSimulation, MessagesBetweenNodesShareTheNodesNics) {
  // One NIC: ranks 2 and 3 take turns (2 x (inter_alpha + 10 inter_beta)); rank 1's message
  // (alpha + 10 beta) runs beside them.
  EXPECT_EQ(linear_gather(two_level("0,0,1,1", 1, 1, 5, 2), 10), 2 * (5 + 20));
  // Two NICs: both at once.
  EXPECT_EQ(linear_gather(two_level("0,0,1,1", 1, 1, 5, 2, 2), 10), 5 + 20);
  // Every rank on its own node: the root's node takes the three messages through its one
  // NIC in turn (its four ports do not help).
  EXPECT_EQ(linear_gather(two_level("0,1,2,3", 1, 1, 5, 2), 10), 3 * (5 + 20));
  // One node: the intra-node costs only.
  EXPECT_EQ(linear_gather(two_level("0,0,0,0", 1, 1, 5, 2), 10), 1 + 10);
}

TEST(PlacementSimulation, EmptyMessagesHoldNoChannel) {
  const CostModel m = two_level("0,0,1,1", 1, 1, 5, 2);
  CostModel model = m;
  model.ports = 4;
  const auto spec = make_spec_v(CollectiveKind::kGatherv, 4, {1, 1, 0, 10}, 0);
  const auto result = simulate(algorithms::build("gatherv/linear", spec, {}, model), model);
  EXPECT_EQ(result.makespan, 5 + 20);
}

// The NIC channels' queues, checked from the outside on many-to-many schedules: from every
// transfer's simulated interval alone, no port or channel ever carries more transfers than
// it may, and no transfer waits at an instant after which all four of its resources (its
// sender's send port, its receiver's receive port, the two nodes' channels) had room: a
// queue that forgot to wake a waiting transfer would leave it idle there. With overlap, so
// that computations hold no port.
struct Transfer {
  Rank from = 0;
  Rank to = 0;
  Time ready = 0;
  Time start = 0;
  Time end = 0;
};

std::vector<Transfer> transfers_of(const Schedule& schedule, const SimResult& result) {
  const auto partners = match_messages(schedule);
  std::vector<Transfer> out;
  for (Rank r = 0; r < std::ssize(schedule.ranks); ++r) {
    const auto& ops = schedule.ranks[static_cast<std::size_t>(r)].ops;
    for (OpId i = 0; i < std::ssize(ops); ++i) {
      const auto* send = std::get_if<Send>(&ops[static_cast<std::size_t>(i)].action);
      if (send == nullptr || send->src.count == 0) continue;  // empty messages hold nothing
      const OpRef recv = partners[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)];
      const OpTiming& s = result.timing[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)];
      const OpTiming& q =
          result.timing[static_cast<std::size_t>(recv.rank)][static_cast<std::size_t>(recv.op)];
      out.push_back(Transfer{r, recv.rank, std::max(s.ready, q.ready), s.start, s.end});
    }
  }
  return out;
}

// Returns how many transfers waited (and so were checked).
std::ptrdiff_t expect_channels_neither_overfilled_nor_idle(const Schedule& schedule,
                                                           const CostModel& model,
                                                           const std::string& label) {
  const SimResult result = simulate(schedule, model, SimOptions{.trace = true});
  EXPECT_EQ(result.status, SimStatus::kOk) << label;
  if (result.status != SimStatus::kOk) return 0;
  const std::vector<Transfer> transfers = transfers_of(schedule, result);
  const Placement& placement = *model.placement;
  const auto node = [&](Rank r) { return placement.node_of[static_cast<std::size_t>(r)]; };
  // The resources of a transfer: [0] send port, [1] receive port, [2] out, [3] in channel
  // (ids: rank, rank, node, node; no channels within a node), each with its capacity.
  const auto uses = [&](const Transfer& t, int resource, const Transfer& u) {
    const bool between_nodes = node(u.from) != node(u.to);
    switch (resource) {
      case 0:
        return u.from == t.from;
      case 1:
        return u.to == t.to;
      case 2:
        return between_nodes && node(u.from) == node(t.from);
      default:
        return between_nodes && node(u.to) == node(t.to);
    }
  };
  const int capacity[4] = {model.ports, model.ports, model.nic_ports, model.nic_ports};
  const auto full_at = [&](const Transfer& t, int resource, Time at) {
    if (resource >= 2 && node(t.from) == node(t.to)) return false;
    int busy = 0;
    for (const Transfer& u : transfers) {
      if (u.start <= at && at < u.end && uses(t, resource, u)) ++busy;
    }
    return busy >= capacity[resource];
  };
  int overfilled = 0;
  int idle = 0;
  for (const Transfer& t : transfers) {
    for (int resource = 0; resource < 4; ++resource) {
      int busy = 0;
      for (const Transfer& u : transfers) {
        if (u.start <= t.start && t.start < u.end && uses(t, resource, u)) ++busy;
      }
      if (resource < 2 || node(t.from) != node(t.to)) overfilled += busy > capacity[resource];
    }
    if (t.start == t.ready) continue;
    // Every instant it waited through: its ready time and each end of a transfer before its
    // start. After each, some resource of it must have been full.
    std::vector<Time> instants{t.ready};
    for (const Transfer& u : transfers) {
      if (u.end > t.ready && u.end < t.start) instants.push_back(u.end);
    }
    for (const Time at : instants) {
      bool blocked = false;
      for (int resource = 0; resource < 4 && !blocked; ++resource) {
        blocked = full_at(t, resource, at);
      }
      if (!blocked) {
        ++idle;
        ADD_FAILURE() << label << ": transfer " << t.from << " -> " << t.to << " ready at "
                      << t.ready << " started at " << t.start << " though all it needs had room at "
                      << at;
        break;
      }
    }
  }
  EXPECT_EQ(overfilled, 0) << label;
  EXPECT_EQ(idle, 0) << label;
  return std::ranges::count_if(transfers, [](const Transfer& t) { return t.start > t.ready; });
}

TEST(PlacementSimulation, NicQueuesNeitherOverfillNorLeaveATransferIdle) {
  struct Case {
    const char* placement;
    int nic_ports;
  };
  const Case cases[] = {{"4x4", 1},
                        {"0,1,2,0,1,2,0,1,2,0,1,2,0", 1},  // round robin, one rank more on node 0
                        {"0,0,0,0,0,0,0,1,1,2,2,2", 2},    // uneven nodes, two NIC ports
                        {"0,1,2,3,4,5,6,7,8", 1}};         // one rank per node
  std::mt19937 random(7);
  for (const Case& c : cases) {
    CostModel model = two_level(c.placement, 1, 1, 5, 2, c.nic_ports);
    model.overlap = true;
    const Rank p = model.placement->nranks();
    std::vector<Count> matrix(static_cast<std::size_t>(p * p));
    for (Count& count : matrix) count = random() % 4 == 0 ? 0 : 1 + random() % 20;  // zeros too
    std::vector<Count> blocks(matrix.begin(), matrix.begin() + p);
    const std::pair<const char*, CollectiveSpec> calls[] = {
        {"alltoallv/linear", make_spec_v(CollectiveKind::kAlltoallv, p, matrix)},
        {"alltoallv/pairwise", make_spec_v(CollectiveKind::kAlltoallv, p, matrix)},
        {"allgatherv/linear", make_spec_v(CollectiveKind::kAllgatherv, p, blocks)},
        {"reduce_scatter/pairwise", make_spec_v(CollectiveKind::kReduceScatter, p, blocks)},
        {"gatherv/linear", make_spec_v(CollectiveKind::kGatherv, p, blocks, p - 1)},
    };
    std::ptrdiff_t waited = 0;
    for (const auto& [algorithm, spec] : calls) {
      waited += expect_channels_neither_overfilled_nor_idle(
          algorithms::build(algorithm, spec, {}, model), model,
          std::string(algorithm) + " on " + c.placement);
    }
    EXPECT_GT(waited, 50) << c.placement << ": too few transfers waited to check the queues";
  }
}

// Shared processors (cores) across nodes, by hand, for linear_gather's schedule on nodes
// {0, 1} and {2, 3} (intra 1 + 10 = 11, inter 5 + 2 * 10 = 25): with one NIC rank 2 sends
// over [0, 25) and rank 3, idle while it waits for the NIC, over [25, 50); rank 1 over
// [0, 11). Busy (holding a port): ranks 0, 1, 2 over [0, 11), 0 and 2 over [11, 25), 0 and 3
// over [25, 50); each stretch is max(1, busy / cores).
TEST(PlacementSimulation, SharedCoresStretchTransfersBetweenNodesToo) {
  CostModel m = two_level("0,0,1,1", 1, 1, 5, 2);
  EXPECT_EQ(linear_gather(m, 10), 50);  // the placement alone: unchanged
  m.cores = 2;
  validate(m);
  EXPECT_DOUBLE_EQ(linear_gather(m, 10), 11 * 1.5 + 14 + 25);
  m.cores = 1;
  EXPECT_DOUBLE_EQ(linear_gather(m, 10), 11 * 3 + 14 * 2 + 25 * 2);
  m.cores = 4;  // a processor per rank: nothing stretches
  EXPECT_DOUBLE_EQ(linear_gather(m, 10), 50);
  // Two NICs: ranks 2 and 3 send at once over [0, 25): four busy over [0, 11), three over
  // [11, 25).
  CostModel two_nics = two_level("0,0,1,1", 1, 1, 5, 2, 2);
  two_nics.cores = 2;
  EXPECT_DOUBLE_EQ(linear_gather(two_nics, 10), 11 * 2 + 14 * 1.5);
  // cores alone (every pair at alpha + beta m): four busy over [0, 11).
  CostModel flat;
  flat.cores = 2;
  EXPECT_DOUBLE_EQ(linear_gather(flat, 10), 11 * 2);
}

// ---- lower bounds with levels --------------------------------------------------------------

struct PlacementModel {
  std::string name;
  CostModel model;
};

// Several placements of p ranks under one set of costs (the within-node level cheaper).
std::vector<PlacementModel> placement_models(Rank p) {
  std::vector<PlacementModel> out;
  CostModel base;
  base.alpha = 5;
  base.beta = 1;
  base.gamma = 1;
  base.inter_alpha = 50;
  base.inter_beta = 4;
  const auto add = [&](std::string name, Placement placement, int nic_ports) {
    CostModel m = base;
    m.placement = std::move(placement);
    m.nic_ports = nic_ports;
    out.push_back({std::move(name), std::move(m)});
  };
  add("blocks4", even_block_placement(p, (p + 3) / 4), 1);
  add("blocks4_nic2", even_block_placement(p, (p + 3) / 4), 2);
  Placement round_robin;
  for (Rank r = 0; r < p; ++r) round_robin.node_of.push_back(r % std::min<Rank>(p, 3));
  add("round_robin3", round_robin, 1);
  add("one_node", block_placement(1, p), 1);
  add("one_per_node", block_placement(p, 1), 1);
  // Fewer processors than ranks, shared across the nodes: the clock only stretches.
  out.push_back({"blocks4_cores2", out.front().model});
  out.back().model.cores = 2;
  return out;
}

class PlacementBoundRegistry : public ::testing::TestWithParam<testing::RegistryCase> {};

TEST_P(PlacementBoundRegistry, NoAlgorithmBeatsTheBound) {
  const auto& c = GetParam();
  for (const auto& [name, model] : placement_models(c.spec.nranks)) {
    const Schedule s = algorithms::build(*c.algorithm, c.spec, {}, model);
    const auto bound = lower_bound(Layout(c.spec), model);
    ASSERT_TRUE(bound.has_value()) << name;
    const SimResult result = simulate(s, model);
    ASSERT_EQ(result.status, SimStatus::kOk) << name;
    EXPECT_GE(result.makespan, *bound * (1 - 1e-9)) << name;
  }
}

std::vector<Rank> bound_ranks() {
  if (testing::kSanitizedBuild) return {1, 2, 5, 8};
  return {1, 2, 3, 5, 8, 13, 16};
}

INSTANTIATE_TEST_SUITE_P(Registry, PlacementBoundRegistry,
                         ::testing::ValuesIn(testing::registered_cases(bound_ranks(), true, false)),
                         testing::case_name);

TEST(PlacementBound, TheNicBoundIsAttainedWhereOneNicCarriesEverything) {
  // gather to rank 0 from the other node's two ranks: 2 x 10 elements through one NIC.
  const CostModel m = two_level("0,0,1,1", 0, 1, 0, 2);
  EXPECT_EQ(*lower_bound(Layout(make_spec(CollectiveKind::kGather, 4, 10, 0)), m), 40);
  EXPECT_EQ(linear_gather(m, 10), 40);
  // bcast to the other node: the message enters it once, whatever the algorithm.
  EXPECT_EQ(*lower_bound(Layout(make_spec(CollectiveKind::kBcast, 4, 10, 0)), m), 20);
  // allreduce over two nodes: n enters and leaves each node.
  EXPECT_EQ(*lower_bound(Layout(make_spec(CollectiveKind::kAllreduce, 4, 10)), m), 20);
}

// ---- node-aware algorithms -----------------------------------------------------------------

const std::vector<std::string>& node_aware_algorithms() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& info : algorithms::all_algorithms()) {
      if (algorithms::patterns::is_node_aware(info)) out.emplace_back(info.name);
    }
    return out;
  }();
  return names;
}

TEST(NodeAware, TheRegistryHasThem) {
  EXPECT_EQ(node_aware_algorithms(),
            (std::vector<std::string>{
                "bcast/node_aware", "reduce/node_aware", "scatter/node_aware",
                "scatterv/node_aware", "gather/node_aware", "gatherv/node_aware",
                "allgather/node_aware", "allgatherv/node_aware", "reduce_scatter/node_aware",
                "reduce_scatter_block/node_aware", "allreduce/node_aware",
                "allreduce/node_multileader", "scan/node_aware", "exscan/node_aware",
                "alltoall/node_aware", "alltoallv/node_aware", "barrier/node_aware"}));
}

// `count` for regular kinds; for the v-variants blocks around it, with zeros.
CollectiveSpec spec_of(CollectiveKind kind, Rank p, Count count, Rank root) {
  if (kind == CollectiveKind::kBarrier) return make_spec(kind, p, 0);
  if (!takes_counts(kind)) return make_spec(kind, p, count, root);
  if (kind == CollectiveKind::kAlltoallv) {  // p x p, row = sender
    std::vector<Count> counts(static_cast<std::size_t>(p * p));
    for (std::size_t k = 0; k < counts.size(); ++k) {
      counts[k] = (k * 5 + static_cast<std::size_t>(count)) % 7 == 2 ? 0 : count + k % 4;
    }
    return make_spec_v(kind, p, counts, root);
  }
  std::vector<Count> counts(static_cast<std::size_t>(p));
  for (Rank r = 0; r < p; ++r) {
    counts[static_cast<std::size_t>(r)] = (r * 3 + count) % 4 == 1 ? 0 : count + r % 3;
  }
  return make_spec_v(kind, p, counts, root);
}

std::vector<std::string> placements_of(Rank p) {
  std::vector<std::string> out{std::string(fmt::format("1x{}", p)), fmt::format("{}x1", p)};
  if (p >= 4) out.push_back(to_string(even_block_placement(p, 3)));  // uneven blocks
  if (p >= 3) {
    Placement rr;
    for (Rank r = 0; r < p; ++r) rr.node_of.push_back((r * 2 + r / 3) % 3);
    if (rr.nodes() == 3) {
      try {
        validate(rr);
        out.push_back(to_string(rr));
      } catch (const Error&) {
      }
    }
    Placement round_robin;
    for (Rank r = 0; r < p; ++r) round_robin.node_of.push_back(r % 3);
    out.push_back(to_string(round_robin));
  }
  return out;
}

TEST(NodeAware, VerifiedSimulatedAndRunOverPlacements) {
  using namespace testing;  // NOLINT(google-build-using-namespace)
  const Datatype type = Datatype::int64();
  const ReduceOp op = ReduceOp::builtin("sum", type);
  const std::vector<Rank> ranks = kSanitizedBuild
                                      ? std::vector<Rank>{1, 2, 5, 8}
                                      : std::vector<Rank>{1, 2, 3, 4, 5, 7, 8, 11, 16, 17, 33};
  for (const std::string& name : node_aware_algorithms()) {
    const auto& info = *algorithms::find_algorithm(name);
    for (const Rank p : ranks) {
      for (const std::string& placement : placements_of(p)) {
        CostModel model = two_level(placement, 1, 1, 10, 4);
        for (const Count count : {0, 1, 7, 100}) {
          for (const Rank root : std::vector<Rank>{0, p - 1, p / 2}) {
            if (!is_rooted(info.collective) && root != 0) continue;
            const auto spec = spec_of(info.collective, p, count, root);
            const std::string where = fmt::format("{} p={} placement {} count {} root {}", name, p,
                                                  placement, count, root);
            const Schedule schedule = algorithms::build(info, spec, {}, model);
            ASSERT_TRUE(verify(schedule).ok()) << where << ": " << verify(schedule).summary();
            const auto result = simulate(schedule, model);
            ASSERT_EQ(result.status, SimStatus::kOk) << where;
            EXPECT_GE(result.makespan, *lower_bound(Layout(spec), model) * (1 - 1e-9)) << where;
            if (count != 7) continue;  // run one count on threads
            const auto inputs =
                make_contributions(spec, type.bytes, fill_integers<std::int64_t>(3));
            const auto expected =
                reference_outputs(spec, type.bytes, inputs, combine_sum<std::int64_t>());
            const auto outputs = run_schedule(shared_world(p), schedule, type, op, inputs);
            for (Rank r = 0; r < p; ++r) {
              const auto i = static_cast<std::size_t>(r);
              ASSERT_EQ(first_difference(outputs[i], expected[i], type.bytes), "")
                  << where << " rank " << r;
            }
          }
        }
      }
    }
  }
}

TEST(NodeAware, PhasesAreNamedAndRecorded) {
  const CostModel m = two_level("2x4", 1, 1, 10, 4);
  const auto spec = make_spec(CollectiveKind::kAllreduce, 8, 64);
  const Schedule s =
      algorithms::build("allreduce/node_aware", spec,
                        algorithms::Params::parse("up=linear,inter=ring,down=linear"), m);
  EXPECT_EQ(s.params, "nodes=2,up=linear,inter=ring,down=linear");
  const Schedule multi =
      algorithms::build("allreduce/node_multileader", spec,
                        algorithms::Params::parse("leaders=2,nodes=4"), CostModel{});
  EXPECT_TRUE(multi.params.starts_with("nodes=4,leaders=2,")) << multi.params;
  EXPECT_EQ(error_of([&] {
              algorithms::build("allreduce/node_multileader", spec,
                                algorithms::Params::parse("leaders=3"),
                                two_level("0,0,0,1,1,1,2,2", 1, 1, 1, 1));
            }),
            "leaders=3 must be auto or 1..2 (the smallest node's ranks)");
  const auto& info = algorithms::lookup("node_aware", CollectiveKind::kAllreduce);
  EXPECT_EQ(algorithms::why_not(
                info, spec,
                algorithms::resolve_params(info, algorithms::Params::parse("inter=node_aware")))
                .value_or(""),
            "inter=node_aware is not a allreduce algorithm of the registry (auto, or one of "
            "optcoll list allreduce that is not node-aware)");
  EXPECT_EQ(algorithms::why_not(
                info, spec, algorithms::resolve_params(info, algorithms::Params::parse("nodes=9")))
                .value_or(""),
            "nodes=9 must be auto or a number of nodes from 1 to p = 8");
  auto noncommutative = spec;
  noncommutative.commutative = false;
  EXPECT_EQ(
      algorithms::why_not(info, noncommutative, algorithms::resolve_params(info, {})).value_or(""),
      "needs a commutative operator (the levels combine node by node)");
}

// scan/exscan combine run by run (runs of consecutive ranks on one node), which is rank
// order whatever the placement: a non-commutative operator (2x2 integer matrix products)
// gives each rank M0 ... Mr (exscan M0 ... M(r-1)), computed here by hand, over blocks,
// uneven blocks, interleaved runs and round robin. The verifier proves the order too.
TEST(NodeAware, PrefixReductionsKeepRankOrderOverAnyPlacement) {
  using testing::Bytes;
  using testing::run_schedule;
  using testing::shared_world;
  using Mat = std::array<std::int64_t, 4>;  // row-major
  const auto multiply = [](const Mat& a, const Mat& b) {
    return Mat{a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
               a[2] * b[1] + a[3] * b[3]};
  };
  const auto matrix = [](Rank r, Count e) {
    return (r + e) % 2 == 0 ? Mat{1, r + e + 1, 0, 1} : Mat{1, 0, r - e, 1};
  };
  const Datatype type = Datatype::user("mat2x2", sizeof(Mat));
  const ReduceOp op = ReduceOp::user(
      "matmul2", false, [&](const std::byte* l, const std::byte* r, std::byte* out, Count n) {
        for (Count i = 0; i < n; ++i) {
          Mat a;
          Mat b;
          std::memcpy(a.data(), l + i * sizeof(Mat), sizeof(Mat));
          std::memcpy(b.data(), r + i * sizeof(Mat), sizeof(Mat));
          const Mat c = multiply(a, b);
          std::memcpy(out + i * sizeof(Mat), c.data(), sizeof(Mat));
        }
      });
  const Count count = 3;
  for (const std::string placement :
       {"0,0,0,1,1,1", "0,0,1,1,1,1,1,2", "0,0,1,1,0,0,2", "0,1,2,0,1,2,0", "0,0,0,0,0"}) {
    const CostModel model = two_level(placement, 1, 1, 10, 4);
    const Rank p = model.placement->nranks();
    for (const auto kind : {CollectiveKind::kScan, CollectiveKind::kExscan}) {
      auto spec = make_spec(kind, p, count);
      spec.commutative = false;
      spec.elem_bytes = sizeof(Mat);
      const auto& info = algorithms::lookup("node_aware", kind);
      const Schedule schedule = algorithms::build(info, spec, {}, model);
      const std::string where = fmt::format("{} placement {}", info.name, placement);
      ASSERT_TRUE(verify(schedule).ok()) << where << ": " << verify(schedule).summary();
      std::vector<Bytes> inputs(static_cast<std::size_t>(p));
      for (Rank r = 0; r < p; ++r) {
        for (Count e = 0; e < count; ++e) {
          const Mat m = matrix(r, e);
          const auto* b = reinterpret_cast<const std::byte*>(m.data());
          inputs[static_cast<std::size_t>(r)].insert(inputs[static_cast<std::size_t>(r)].end(), b,
                                                     b + sizeof(Mat));
        }
      }
      const auto outputs = run_schedule(shared_world(p), schedule, type, op, inputs);
      for (Rank r = kind == CollectiveKind::kExscan ? 1 : 0; r < p; ++r) {
        const Rank last = kind == CollectiveKind::kScan ? r : r - 1;
        for (Count e = 0; e < count; ++e) {
          Mat expected = matrix(0, e);
          for (Rank q = 1; q <= last; ++q) expected = multiply(expected, matrix(q, e));
          Mat got;
          std::memcpy(got.data(), outputs[static_cast<std::size_t>(r)].data() + e * sizeof(Mat),
                      sizeof(Mat));
          EXPECT_EQ(got, expected) << where << " rank " << r << " element " << e;
        }
      }
    }
  }
  // Runs, not nodes: "0,0,1,1,0,0,2" has four runs, led by their last ranks.
  const auto levels = algorithms::patterns::run_levels(
      7, algorithms::resolve_params(algorithms::lookup("node_aware", CollectiveKind::kScan), {}),
      two_level("0,0,1,1,0,0,2", 1, 1, 10, 4));
  EXPECT_EQ(levels.members, (std::vector<std::vector<Rank>>{{0, 1}, {2, 3}, {4, 5}, {6}}));
  EXPECT_EQ(levels.leaders, (std::vector<Rank>{1, 3, 5, 6}));
}

// Node-aware algorithms move a node's data across the network once; the flat ring on a
// round-robin placement sends every step between nodes. With one NIC per node the
// multi-leader variant moves as much through each NIC as the single-leader one; with a NIC
// per leader its slices cross at once.
TEST(NodeAware, BeatFlatAlgorithmsWhereTheNetworkIsTheBottleneck) {
  const auto spec = make_spec(CollectiveKind::kAllreduce, 16, 4096);
  const auto time = [&](const char* name, int nic_ports) {
    const CostModel m = two_level("0,1,2,3,0,1,2,3,0,1,2,3,0,1,2,3", 1, 1, 100, 50, nic_ports);
    return simulate(algorithms::build(name, spec, {}, m), m).makespan;
  };
  EXPECT_LT(time("allreduce/node_aware", 1), 0.5 * time("allreduce/ring", 1));
  EXPECT_LT(time("allreduce/node_multileader", 4), 0.5 * time("allreduce/node_aware", 4));
  // A prefix crosses the network once per node instead of in every step (recursive
  // doubling) or along the whole chain (linear).
  for (const auto kind : {CollectiveKind::kScan, CollectiveKind::kExscan}) {
    const auto prefix = make_spec(kind, 32, 1000);
    const CostModel blocks = two_level("8x4", 1, 0.001, 100, 0.01);
    const auto prefix_time = [&](const char* name) {
      return simulate(algorithms::build(algorithms::lookup(name, kind), prefix, {}, blocks), blocks)
          .makespan;
    };
    EXPECT_LT(prefix_time("node_aware"), 0.6 * prefix_time("linear")) << collective_name(kind);
    EXPECT_LT(prefix_time("node_aware"), 0.6 * prefix_time("recursive_doubling"))
        << collective_name(kind);
  }
}

}  // namespace
}  // namespace optcoll
