// SPDX-License-Identifier: Apache-2.0
// allgather(v)/node_aware — three phases: every node gathers its ranks' blocks at its leader
// (its first rank), the leaders allgather the nodes' blocks among themselves (each node's
// blocks cross the network once per other node, in one message), every leader broadcasts the
// whole result within its node. Where the nodes are not blocks of consecutive ranks, the
// leaders receive in node order into a staging area and copy each block into its place.
//
//   2 nodes x 2 ranks: intra gather 1 -> 0, 3 -> 2; inter allgatherv 0 <-> 2;
//                      intra bcast 0 -> 1, 2 -> 3
//
// Cost: max T_gatherv(m_node, the node's blocks) + T_allgatherv(N, the nodes' totals)
//   + max T_bcast(m_node, n) (+ the leaders' copies for other placements).
// Restrictions: nodes auto or 1..p; up (gatherv), inter (allgatherv) and down (bcast) auto
//   or flat registry algorithms of those kinds.
// Reference: Open MPI coll/han (allgather: gather, allgather, bcast); MPICH's SMP-aware
//   allgather; Kandalla et al., IPDPS 2009.

#include "optcoll/algorithms/node_aware/common.h"

namespace optcoll::algorithms {
namespace {

constexpr ParamInfo kParams[] = {
    {"nodes", "auto", "auto (the model's placement) or N nodes in even blocks"},
    {"up", "auto", "gatherv within each node to its leader"},
    {"inter", "auto", "allgatherv of the nodes' blocks among the leaders"},
    {"down", "auto", "bcast of the result within each node"},
};
constexpr patterns::LevelPhase kPhases[] = {
    {"up", CollectiveKind::kGatherv},
    {"inter", CollectiveKind::kAllgatherv, patterns::Level::kInter, "ring"},
    {"down", CollectiveKind::kBcast}};
enum Phase : std::size_t { kUp, kInter, kDown };

struct Plan {
  patterns::PhasePlan phases;
  node_aware::NodeOrder order;
};

Plan plan_of(const CollectiveSpec& spec, const Params& params, const CostModel& model) {
  const Layout layout = Layout::borrowing(spec);
  Plan plan{{patterns::node_levels(spec.nranks, params, model), kPhases}, {}};
  const auto& levels = plan.phases.levels();
  plan.order = node_aware::node_order(levels, layout);
  for (std::size_t g = 0; g < levels.members.size(); ++g) {
    const Rank size = levels.size(static_cast<std::int32_t>(g));
    plan.phases.specs(kUp).push_back(patterns::level_spec(
        spec, CollectiveKind::kGatherv, size, 0, 0, node_aware::member_blocks(levels, layout, g)));
    plan.phases.specs(kDown).push_back(
        patterns::level_spec(spec, CollectiveKind::kBcast, size, layout.total(), 0));
  }
  plan.phases.specs(kInter).push_back(patterns::level_spec(
      spec, CollectiveKind::kAllgatherv, levels.nodes(), 0, 0, plan.order.node_total));
  plan.phases.choose(params);
  return plan;
}

}  // namespace

std::span<const ParamInfo> allgather_node_aware_params() { return kParams; }

std::optional<std::string> allgather_node_aware_why_not(const CollectiveSpec& spec,
                                                        const Params& params) {
  return patterns::levels_why_not(spec, params, kPhases);
}

Schedule build_allgather_node_aware(const CollectiveSpec& spec, const Params& params,
                                    const CostModel& model) {
  const Plan plan = plan_of(spec, params, model);
  const Layout layout = Layout::borrowing(spec);
  const auto& levels = plan.phases.levels();
  Stitcher stitcher(spec, std::string(collective_name(spec.kind)) + "/node_aware");
  const bool staged = !plan.order.same_as_rank_order;
  std::vector<Slice> handoff;  // each leader's node blocks
  std::vector<Slice> staging;  // each leader's copy of all blocks in node order
  for (std::size_t g = 0; g < levels.leaders.size(); ++g) {
    const Rank leader = levels.leaders[g];
    handoff.push_back(stitcher.scratch(leader, plan.order.node_total[g]));
    staging.push_back(staged ? stitcher.scratch(leader, layout.total())
                             : node_aware::whole(layout, leader, Buf::kOutput));
  }
  const auto member = [&](std::size_t g, Rank i) {
    return levels.members[g][static_cast<std::size_t>(i)];
  };
  node_aware::append_phase(stitcher, plan.phases, kUp, [&](std::size_t g, Rank i, Buf buf) {
    if (buf == Buf::kInput) return node_aware::whole(layout, member(g, i), buf);
    return i == 0 ? handoff[g] : Slice{Buf::kOutput, 0, 0};
  });
  node_aware::append_phase(stitcher, plan.phases, kInter, [&](std::size_t, Rank i, Buf buf) {
    const auto g = static_cast<std::size_t>(i);
    return buf == Buf::kInput ? handoff[g] : staging[g];
  });
  if (staged) {
    for (std::size_t g = 0; g < levels.leaders.size(); ++g) {
      for (Rank r = 0; r < spec.nranks; ++r) {
        const Count b = layout.block(r);
        stitcher.copy(
            levels.leaders[g],
            Slice{Buf::kScratch,
                  staging[g].offset + plan.order.staged_displ[static_cast<std::size_t>(r)], b},
            Slice{Buf::kOutput, layout.displ(r), b});
      }
    }
  }
  node_aware::append_phase(stitcher, plan.phases, kDown, [&](std::size_t g, Rank i, Buf buf) {
    return node_aware::whole(layout, member(g, i), buf);
  });
  stitcher.set_params(plan.phases.recorded());
  return std::move(stitcher).finish();
}

// Estimate: the three phases' estimates one after the other (the leaders' copies for
// placements not in blocks are not in it).
std::optional<Estimate> estimate_allgather_node_aware(const CollectiveSpec& spec,
                                                      const Params& params,
                                                      const CostModel& model) {
  return plan_of(spec, params, model).phases.estimate();
}

}  // namespace optcoll::algorithms
