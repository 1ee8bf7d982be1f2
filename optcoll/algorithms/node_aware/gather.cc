// SPDX-License-Identifier: Apache-2.0
// gather(v)/node_aware — two levels: every node gathers its ranks' blocks at its leader, then
// the leaders gather the nodes' blocks at the root (which leads its own node). Where the
// nodes are not blocks of consecutive ranks, the root receives the blocks in node order into
// a staging area and copies each into its place.
//
//   2 nodes x 2 ranks, root 0: intra 1 -> 0, 3 -> 2 (blocks of 2, 3 at 2); inter 2 -> 0
//
// Cost: max over nodes T_intra(m_node, the node's blocks) + T_inter(N, the nodes' totals)
//   (+ the root's copies out of the staging area for other placements); every block crosses
//   the network at most once, in one message per node.
// Restrictions: nodes auto or 1..p; intra and inter auto or flat gatherv algorithms.
// Reference: Open MPI coll/han (2-level gather); Träff, "Hierarchical gather/scatter
//   algorithms with graceful degradation" (IPDPS 2004).

#include "optcoll/algorithms/node_aware/common.h"

namespace optcoll::algorithms {
namespace {

constexpr ParamInfo kParams[] = {
    {"nodes", "auto", "auto (the model's placement) or N nodes in even blocks"},
    {"intra", "auto", "gatherv within each node to its leader"},
    {"inter", "auto", "gatherv among the nodes' leaders to the root"},
};
constexpr patterns::LevelPhase kPhases[] = {
    {"intra", CollectiveKind::kGatherv},
    {"inter", CollectiveKind::kGatherv, patterns::Level::kInter}};
enum Phase : std::size_t { kIntra, kInter };

}  // namespace

std::span<const ParamInfo> gather_node_aware_params() { return kParams; }

std::optional<std::string> gather_node_aware_why_not(const CollectiveSpec& spec,
                                                     const Params& params) {
  return patterns::levels_why_not(spec, params, kPhases);
}

Schedule build_gather_node_aware(const CollectiveSpec& spec, const Params& params,
                                 const CostModel& model) {
  const auto plan = node_aware::rooted_plan(spec, params, model, kPhases, kIntra, kInter);
  const Layout layout = Layout::borrowing(spec);
  const auto& levels = plan.phases.levels();
  Stitcher stitcher(spec, std::string(collective_name(spec.kind)) + "/node_aware");
  const std::vector<Slice> handoff =
      node_aware::leader_handoffs(stitcher, plan, layout, Buf::kInput);
  const bool staged = !plan.order.same_as_rank_order;
  const Slice staging = staged ? stitcher.scratch(spec.root, layout.total())
                               : node_aware::whole(layout, spec.root, Buf::kOutput);
  node_aware::append_phase(stitcher, plan.phases, kIntra, plan.intra.members,
                           [&](std::size_t j, Rank i, Buf buf) {
                             const std::size_t g = plan.intra.index[j];
                             const Rank r = levels.members[g][static_cast<std::size_t>(i)];
                             if (buf == Buf::kInput) return node_aware::whole(layout, r, buf);
                             return r == levels.leaders[g] ? handoff[g] : Slice{Buf::kOutput, 0, 0};
                           });
  node_aware::append_phase(stitcher, plan.phases, kInter, [&](std::size_t, Rank i, Buf buf) {
    const auto g = static_cast<std::size_t>(i);
    if (buf == Buf::kInput) return handoff[g];
    return levels.leaders[g] == spec.root ? staging : Slice{Buf::kOutput, 0, 0};
  });
  if (staged) {
    for (Rank r = 0; r < spec.nranks; ++r) {
      const Count b = layout.block(r);
      stitcher.copy(spec.root,
                    Slice{Buf::kScratch,
                          staging.offset + plan.order.staged_displ[static_cast<std::size_t>(r)], b},
                    Slice{Buf::kOutput, layout.displ(r), b});
    }
  }
  stitcher.set_params(plan.phases.recorded());
  return std::move(stitcher).finish();
}

// Estimate: the two levels' estimates one after the other (the root's copies out of the
// staging area, for placements not in blocks, are not in it).
std::optional<Estimate> estimate_gather_node_aware(const CollectiveSpec& spec, const Params& params,
                                                   const CostModel& model) {
  return node_aware::rooted_plan(spec, params, model, kPhases, kIntra, kInter).phases.estimate();
}

}  // namespace optcoll::algorithms
