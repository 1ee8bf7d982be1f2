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
constexpr patterns::LevelPhase kPhases[] = {
    {"intra", CollectiveKind::kReduce},
    {"inter", CollectiveKind::kReduce, patterns::Level::kInter}};
enum Phase : std::size_t { kIntra, kInter };

patterns::PhasePlan plan_of(const CollectiveSpec& spec, const Params& params,
                            const CostModel& model) {
  patterns::PhasePlan plan(patterns::node_levels(spec.nranks, params, model, spec.root), kPhases);
  const auto& levels = plan.levels();
  for (std::int32_t n = 0; n < levels.nodes(); ++n) {
    plan.specs(kIntra).push_back(
        patterns::level_spec(spec, CollectiveKind::kReduce, levels.size(n), spec.count,
                             levels.leader_index[static_cast<std::size_t>(n)]));
  }
  plan.specs(kInter).push_back(patterns::level_spec(spec, CollectiveKind::kReduce, levels.nodes(),
                                                    spec.count, levels.root_node));
  plan.choose(params);
  return plan;
}

}  // namespace

std::span<const ParamInfo> reduce_node_aware_params() { return kParams; }

std::optional<std::string> reduce_node_aware_why_not(const CollectiveSpec& spec,
                                                     const Params& params) {
  return patterns::levels_why_not(spec, params, kPhases);
}

Schedule build_reduce_node_aware(const CollectiveSpec& spec, const Params& params,
                                 const CostModel& model) {
  const patterns::PhasePlan plan = plan_of(spec, params, model);
  const Layout layout = Layout::borrowing(spec);
  const auto& levels = plan.levels();
  Stitcher stitcher(spec, "reduce/node_aware");
  // Each leader's partial result, between the two levels.
  std::vector<Slice> handoff;
  for (const Rank leader : levels.leaders) handoff.push_back(stitcher.scratch(leader, spec.count));
  node_aware::append_phase(stitcher, plan, kIntra, [&](std::size_t g, Rank i, Buf buf) {
    const Rank r = node_aware::member_of(plan, kIntra, g, i);
    if (buf == Buf::kInput) return node_aware::whole(layout, r, buf);
    return r == levels.leaders[g] ? handoff[g] : Slice{Buf::kOutput, 0, 0};
  });
  node_aware::append_phase(stitcher, plan, kInter, [&](std::size_t, Rank i, Buf buf) {
    const auto n = static_cast<std::size_t>(i);
    return buf == Buf::kInput ? handoff[n] : node_aware::whole(layout, levels.leaders[n], buf);
  });
  stitcher.set_params(plan.recorded());
  return std::move(stitcher).finish();
}

// Estimate: the two levels' estimates one after the other.
std::optional<Estimate> estimate_reduce_node_aware(const CollectiveSpec& spec, const Params& params,
                                                   const CostModel& model) {
  return plan_of(spec, params, model).estimate();
}

}  // namespace optcoll::algorithms
