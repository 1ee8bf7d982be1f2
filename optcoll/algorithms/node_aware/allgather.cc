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
constexpr patterns::LevelPhase kPhases[] = {{"up", CollectiveKind::kGatherv},
                                            {"inter", CollectiveKind::kAllgatherv},
                                            {"down", CollectiveKind::kBcast}};

struct Plan {
  patterns::NodeLevels levels;
  node_aware::NodeOrder order;
  std::vector<CollectiveSpec> up_specs;
  std::vector<CollectiveSpec> inter_spec;
  std::vector<CollectiveSpec> down_specs;
  const AlgorithmInfo* up = nullptr;
  const AlgorithmInfo* inter = nullptr;
  const AlgorithmInfo* down = nullptr;
};

Plan plan_of(const CollectiveSpec& spec, const Params& params, const CostModel& model) {
  const Layout layout(spec);
  Plan plan{
      patterns::node_levels(spec.nranks, params, model), {}, {}, {}, {}, nullptr, nullptr, nullptr};
  const auto& levels = plan.levels;
  plan.order = node_aware::node_order(levels, layout);
  for (std::size_t g = 0; g < levels.members.size(); ++g) {
    const Rank size = levels.size(static_cast<std::int32_t>(g));
    plan.up_specs.push_back(patterns::level_spec(spec, CollectiveKind::kGatherv, size, 0, 0,
                                                 node_aware::member_blocks(levels, layout, g)));
    plan.down_specs.push_back(
        patterns::level_spec(spec, CollectiveKind::kBcast, size, layout.total(), 0));
  }
  plan.inter_spec.push_back(patterns::level_spec(spec, CollectiveKind::kAllgatherv, levels.nodes(),
                                                 0, 0, plan.order.node_total));
  plan.up =
      &patterns::level_algorithm("up", params.get("up"), plan.up_specs, levels.intra, "binomial");
  plan.inter = &patterns::level_algorithm("inter", params.get("inter"), plan.inter_spec,
                                          levels.inter, "ring");
  plan.down = &patterns::level_algorithm("down", params.get("down"), plan.down_specs, levels.intra,
                                         "binomial");
  return plan;
}

std::string recorded(const Plan& plan) {
  return fmt::format("{},up={},inter={},down={}", plan.levels.nodes_param, plan.up->short_name(),
                     plan.inter->short_name(), plan.down->short_name());
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
  const Layout layout(spec);
  const auto& levels = plan.levels;
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
  node_aware::append_groups(stitcher, *plan.up, plan.up_specs, levels.members, levels.intra,
                            [&](std::size_t g, Rank i, Buf buf) {
                              if (buf == Buf::kInput)
                                return node_aware::whole(layout, member(g, i), buf);
                              return i == 0 ? handoff[g] : Slice{Buf::kOutput, 0, 0};
                            });
  stitcher.append(patterns::build_level(*plan.inter, plan.inter_spec[0], levels.inter),
                  levels.leaders, [&](Rank i, Buf buf) {
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
  node_aware::append_groups(
      stitcher, *plan.down, plan.down_specs, levels.members, levels.intra,
      [&](std::size_t g, Rank i, Buf buf) { return node_aware::whole(layout, member(g, i), buf); });
  stitcher.set_params(recorded(plan));
  return std::move(stitcher).finish();
}

// Estimate: the three phases' estimates one after the other (the leaders' copies for
// placements not in blocks are not in it).
std::optional<Estimate> estimate_allgather_node_aware(const CollectiveSpec& spec,
                                                      const Params& params,
                                                      const CostModel& model) {
  const Plan plan = plan_of(spec, params, model);
  return patterns::phases_estimate({{plan.up, plan.up_specs, &plan.levels.intra},
                                    {plan.inter, plan.inter_spec, &plan.levels.inter},
                                    {plan.down, plan.down_specs, &plan.levels.intra}},
                                   recorded(plan));
}

}  // namespace optcoll::algorithms
