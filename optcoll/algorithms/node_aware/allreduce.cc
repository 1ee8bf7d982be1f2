// SPDX-License-Identifier: Apache-2.0
// allreduce/node_aware — three phases: every node reduces to its leader, the leaders
// allreduce among themselves, every leader broadcasts the result within its node.
//
//   2 nodes x 2 ranks: intra reduce 1 -> 0, 3 -> 2; inter allreduce 0 <-> 2;
//                      intra bcast 0 -> 1, 2 -> 3
//
// Cost: max T_reduce(m_node, n) + T_allreduce(N, n) + max T_bcast(m_node, n), each under its
//   level's model; n crosses each NIC about twice (the inter algorithm's traffic, one leader
//   per node).
// Restrictions: commutative operator; nodes auto or 1..p; up (intra reduce), inter
//   (allreduce) and down (intra bcast) auto or flat registry algorithms of those kinds.
// Reference: Open MPI coll/han (allreduce: reduce, allreduce, bcast); MPICH's SMP-aware
//   allreduce.

#include "optcoll/algorithms/node_aware/common.h"

namespace optcoll::algorithms {
namespace {

constexpr ParamInfo kParams[] = {
    {"nodes", "auto", "auto (the model's placement) or N nodes in even blocks"},
    {"up", "auto", "reduce within each node to its leader"},
    {"inter", "auto", "allreduce among the nodes' leaders"},
    {"down", "auto", "bcast within each node from its leader"},
};
constexpr patterns::LevelPhase kPhases[] = {{"up", CollectiveKind::kReduce},
                                            {"inter", CollectiveKind::kAllreduce},
                                            {"down", CollectiveKind::kBcast}};

struct Plan {
  patterns::NodeLevels levels;
  std::vector<CollectiveSpec> up_specs;
  std::vector<CollectiveSpec> inter_spec;
  std::vector<CollectiveSpec> down_specs;
  const AlgorithmInfo* up = nullptr;
  const AlgorithmInfo* inter = nullptr;
  const AlgorithmInfo* down = nullptr;
};

Plan plan_of(const CollectiveSpec& spec, const Params& params, const CostModel& model) {
  Plan plan{
      patterns::node_levels(spec.nranks, params, model), {}, {}, {}, nullptr, nullptr, nullptr};
  const auto& levels = plan.levels;
  for (std::int32_t n = 0; n < levels.nodes(); ++n) {
    plan.up_specs.push_back(
        patterns::level_spec(spec, CollectiveKind::kReduce, levels.size(n), spec.count, 0));
    plan.down_specs.push_back(
        patterns::level_spec(spec, CollectiveKind::kBcast, levels.size(n), spec.count, 0));
  }
  plan.inter_spec.push_back(
      patterns::level_spec(spec, CollectiveKind::kAllreduce, levels.nodes(), spec.count));
  plan.up =
      &patterns::level_algorithm("up", params.get("up"), plan.up_specs, levels.intra, "binomial");
  plan.inter = &patterns::level_algorithm("inter", params.get("inter"), plan.inter_spec,
                                          levels.inter, "recursive_doubling");
  plan.down = &patterns::level_algorithm("down", params.get("down"), plan.down_specs, levels.intra,
                                         "binomial");
  return plan;
}

std::string recorded(const Plan& plan) {
  return fmt::format("{},up={},inter={},down={}", plan.levels.nodes_param, plan.up->short_name(),
                     plan.inter->short_name(), plan.down->short_name());
}

}  // namespace

std::span<const ParamInfo> allreduce_node_aware_params() { return kParams; }

std::optional<std::string> allreduce_node_aware_why_not(const CollectiveSpec& spec,
                                                        const Params& params) {
  return patterns::levels_why_not(spec, params, kPhases);
}

Schedule build_allreduce_node_aware(const CollectiveSpec& spec, const Params& params,
                                    const CostModel& model) {
  const Plan plan = plan_of(spec, params, model);
  const Layout layout(spec);
  const auto& levels = plan.levels;
  Stitcher stitcher(spec, "allreduce/node_aware");
  std::vector<Slice> handoff;  // each leader's node result, the leaders' allreduce input
  for (const Rank leader : levels.leaders) handoff.push_back(stitcher.scratch(leader, spec.count));
  const auto member = [&](std::size_t g, Rank i) {
    return levels.members[g][static_cast<std::size_t>(i)];
  };
  node_aware::append_groups(stitcher, *plan.up, plan.up_specs, levels.members, levels.intra,
                            [&](std::size_t g, Rank i, Buf buf) {
                              if (buf == Buf::kInput)
                                return node_aware::whole(layout, member(g, i), buf);
                              return i == 0 ? handoff[g] : Slice{Buf::kOutput, 0, 0};
                            });
  stitcher.append(patterns::build_level(*plan.inter, plan.inter_spec[0], levels.inter),
                  levels.leaders, [&](Rank i, Buf buf) {
                    const auto n = static_cast<std::size_t>(i);
                    return buf == Buf::kInput ? handoff[n]
                                              : node_aware::whole(layout, levels.leaders[n], buf);
                  });
  node_aware::append_groups(
      stitcher, *plan.down, plan.down_specs, levels.members, levels.intra,
      [&](std::size_t g, Rank i, Buf buf) { return node_aware::whole(layout, member(g, i), buf); });
  stitcher.set_params(recorded(plan));
  return std::move(stitcher).finish();
}

// Estimate: the three phases' estimates one after the other.
std::optional<Estimate> estimate_allreduce_node_aware(const CollectiveSpec& spec,
                                                      const Params& params,
                                                      const CostModel& model) {
  const Plan plan = plan_of(spec, params, model);
  return patterns::phases_estimate({{plan.up, plan.up_specs, &plan.levels.intra},
                                    {plan.inter, plan.inter_spec, &plan.levels.inter},
                                    {plan.down, plan.down_specs, &plan.levels.intra}},
                                   recorded(plan));
}

}  // namespace optcoll::algorithms
