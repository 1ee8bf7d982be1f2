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
constexpr patterns::LevelPhase kPhases[] = {
    {"up", CollectiveKind::kReduce},
    {"inter", CollectiveKind::kAllreduce, patterns::Level::kInter, "recursive_doubling"},
    {"down", CollectiveKind::kBcast}};
enum Phase : std::size_t { kUp, kInter, kDown };

patterns::PhasePlan plan_of(const CollectiveSpec& spec, const Params& params,
                            const CostModel& model) {
  patterns::PhasePlan plan(patterns::node_levels(spec.nranks, params, model), kPhases);
  const auto& levels = plan.levels();
  for (std::int32_t n = 0; n < levels.nodes(); ++n) {
    plan.specs(kUp).push_back(
        patterns::level_spec(spec, CollectiveKind::kReduce, levels.size(n), spec.count, 0));
    plan.specs(kDown).push_back(
        patterns::level_spec(spec, CollectiveKind::kBcast, levels.size(n), spec.count, 0));
  }
  plan.specs(kInter).push_back(
      patterns::level_spec(spec, CollectiveKind::kAllreduce, levels.nodes(), spec.count));
  plan.choose(params);
  return plan;
}

}  // namespace

std::span<const ParamInfo> allreduce_node_aware_params() { return kParams; }

std::optional<std::string> allreduce_node_aware_why_not(const CollectiveSpec& spec,
                                                        const Params& params) {
  return patterns::levels_why_not(spec, params, kPhases);
}

Schedule build_allreduce_node_aware(const CollectiveSpec& spec, const Params& params,
                                    const CostModel& model) {
  const patterns::PhasePlan plan = plan_of(spec, params, model);
  const Layout layout = Layout::borrowing(spec);
  const auto& levels = plan.levels();
  Stitcher stitcher(spec, "allreduce/node_aware");
  std::vector<Slice> handoff;  // each leader's node result, the leaders' allreduce input
  for (const Rank leader : levels.leaders) handoff.push_back(stitcher.scratch(leader, spec.count));
  const auto member = [&](std::size_t g, Rank i) {
    return levels.members[g][static_cast<std::size_t>(i)];
  };
  node_aware::append_phase(stitcher, plan, kUp, [&](std::size_t g, Rank i, Buf buf) {
    if (buf == Buf::kInput) return node_aware::whole(layout, member(g, i), buf);
    return i == 0 ? handoff[g] : Slice{Buf::kOutput, 0, 0};
  });
  node_aware::append_phase(stitcher, plan, kInter, [&](std::size_t, Rank i, Buf buf) {
    const auto n = static_cast<std::size_t>(i);
    return buf == Buf::kInput ? handoff[n] : node_aware::whole(layout, levels.leaders[n], buf);
  });
  node_aware::append_phase(stitcher, plan, kDown, [&](std::size_t g, Rank i, Buf buf) {
    return node_aware::whole(layout, member(g, i), buf);
  });
  stitcher.set_params(plan.recorded());
  return std::move(stitcher).finish();
}

// Estimate: the three phases' estimates one after the other.
std::optional<Estimate> estimate_allreduce_node_aware(const CollectiveSpec& spec,
                                                      const Params& params,
                                                      const CostModel& model) {
  return plan_of(spec, params, model).estimate();
}

}  // namespace optcoll::algorithms
