// SPDX-License-Identifier: Apache-2.0
// reduce/node_aware — two levels: every node reduces to its leader, then the leaders reduce
// to the root. The root leads its own node.
//
//   2 nodes x 2 ranks, root 0, binomial at both levels:
//     intra: 1 -> 0, 3 -> 2 (each combined at the leader)      inter: 2 -> 0
//
// Cost: max over nodes T_intra(m_node, n) + T_inter(N, n), each level's reduce under its own
//   alpha, beta (and gamma); the leaders' partial results cross the network once per node.
// Restrictions: commutative operator (nodes combine in node order, not rank order); nodes
//   auto or 1..p; intra and inter auto or a flat reduce of the registry.
// Reference: Open MPI coll/han (2-level reduce); MPICH's SMP-aware reduce.

#include "optcoll/algorithms/node_aware/common.h"

namespace optcoll::algorithms {
namespace {

constexpr ParamInfo kParams[] = {
    {"nodes", "auto", "auto (the model's placement) or N nodes in even blocks"},
    {"intra", "auto", "reduce within each node to its leader (auto: least estimated time)"},
    {"inter", "auto", "reduce among the nodes' leaders (auto: least estimated time)"},
};
constexpr patterns::LevelPhase kPhases[] = {{"intra", CollectiveKind::kReduce},
                                            {"inter", CollectiveKind::kReduce}};

struct Plan {
  patterns::NodeLevels levels;
  std::vector<CollectiveSpec> intra_specs;
  std::vector<CollectiveSpec> inter_spec;
  const AlgorithmInfo* intra = nullptr;
  const AlgorithmInfo* inter = nullptr;
};

Plan plan_of(const CollectiveSpec& spec, const Params& params, const CostModel& model) {
  Plan plan{patterns::node_levels(spec.nranks, params, model, spec.root), {}, {}, nullptr, nullptr};
  const auto& levels = plan.levels;
  for (std::int32_t n = 0; n < levels.nodes(); ++n) {
    plan.intra_specs.push_back(
        patterns::level_spec(spec, CollectiveKind::kReduce, levels.size(n), spec.count,
                             levels.leader_index[static_cast<std::size_t>(n)]));
  }
  plan.inter_spec.push_back(patterns::level_spec(spec, CollectiveKind::kReduce, levels.nodes(),
                                                 spec.count, levels.root_node));
  plan.intra = &patterns::level_algorithm("intra", params.get("intra"), plan.intra_specs,
                                          levels.intra, "binomial");
  plan.inter = &patterns::level_algorithm("inter", params.get("inter"), plan.inter_spec,
                                          levels.inter, "binomial");
  return plan;
}

std::string recorded(const Plan& plan) {
  return fmt::format("{},intra={},inter={}", plan.levels.nodes_param, plan.intra->short_name(),
                     plan.inter->short_name());
}

}  // namespace

std::span<const ParamInfo> reduce_node_aware_params() { return kParams; }

std::optional<std::string> reduce_node_aware_why_not(const CollectiveSpec& spec,
                                                     const Params& params) {
  return patterns::levels_why_not(spec, params, kPhases);
}

Schedule build_reduce_node_aware(const CollectiveSpec& spec, const Params& params,
                                 const CostModel& model) {
  const Plan plan = plan_of(spec, params, model);
  const Layout layout(spec);
  const auto& levels = plan.levels;
  Stitcher stitcher(spec, "reduce/node_aware");
  // Each leader's partial result, between the two levels.
  std::vector<Slice> handoff;
  for (const Rank leader : levels.leaders) handoff.push_back(stitcher.scratch(leader, spec.count));
  node_aware::append_groups(
      stitcher, *plan.intra, plan.intra_specs, levels.members, levels.intra,
      [&](std::size_t g, Rank i, Buf buf) {
        const Rank r = levels.members[g][static_cast<std::size_t>(i)];
        if (buf == Buf::kInput) return node_aware::whole(layout, r, buf);
        return r == levels.leaders[g] ? handoff[g] : Slice{Buf::kOutput, 0, 0};
      });
  stitcher.append(patterns::build_level(*plan.inter, plan.inter_spec[0], levels.inter),
                  levels.leaders, [&](Rank i, Buf buf) {
                    return buf == Buf::kInput
                               ? handoff[static_cast<std::size_t>(i)]
                               : node_aware::whole(
                                     layout, levels.leaders[static_cast<std::size_t>(i)], buf);
                  });
  stitcher.set_params(recorded(plan));
  return std::move(stitcher).finish();
}

// Estimate: the two levels' estimates one after the other.
std::optional<Estimate> estimate_reduce_node_aware(const CollectiveSpec& spec, const Params& params,
                                                   const CostModel& model) {
  const Plan plan = plan_of(spec, params, model);
  return patterns::phases_estimate({{plan.intra, plan.intra_specs, &plan.levels.intra},
                                    {plan.inter, plan.inter_spec, &plan.levels.inter}},
                                   recorded(plan));
}

}  // namespace optcoll::algorithms
