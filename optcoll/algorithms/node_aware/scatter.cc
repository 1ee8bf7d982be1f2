// SPDX-License-Identifier: Apache-2.0
// scatter(v)/node_aware — two levels: the root scatters each node's blocks to the node's
// leader (the root leads its own node), then every leader scatters within its node. Where
// the nodes are not blocks of consecutive ranks, the root first copies the blocks into node
// order in a staging area.
//
//   2 nodes x 2 ranks, root 0: inter 0 -> 2 (blocks of 2 and 3); intra 0 -> 1, 2 -> 3
//
// Cost: T_inter(N, the nodes' totals) + max over nodes T_intra(m_node, the node's blocks)
//   (+ the root's copies into the staging area for other placements); every block crosses
//   the network at most once, in one message per node.
// Restrictions: nodes auto or 1..p; inter and intra auto or flat scatterv algorithms.
// Reference: Open MPI coll/han (2-level scatter); Träff, "Hierarchical gather/scatter
//   algorithms with graceful degradation" (IPDPS 2004).

#include "optcoll/algorithms/node_aware/common.h"

namespace optcoll::algorithms {
namespace {

constexpr ParamInfo kParams[] = {
    {"nodes", "auto", "auto (the model's placement) or N nodes in even blocks"},
    {"inter", "auto", "scatterv from the root among the nodes' leaders"},
    {"intra", "auto", "scatterv within each node from its leader"},
};
constexpr patterns::LevelPhase kPhases[] = {
    {"inter", CollectiveKind::kScatterv, patterns::Level::kInter},
    {"intra", CollectiveKind::kScatterv}};
enum Phase : std::size_t { kInter, kIntra };

}  // namespace

std::span<const ParamInfo> scatter_node_aware_params() { return kParams; }

std::optional<std::string> scatter_node_aware_why_not(const CollectiveSpec& spec,
                                                      const Params& params) {
  return patterns::levels_why_not(spec, params, kPhases);
}

Schedule build_scatter_node_aware(const CollectiveSpec& spec, const Params& params,
                                  const CostModel& model) {
  const auto plan = node_aware::rooted_plan(spec, params, model, kPhases, kIntra, kInter);
  const Layout layout = Layout::borrowing(spec);
  const auto& levels = plan.phases.levels();
  Stitcher stitcher(spec, std::string(collective_name(spec.kind)) + "/node_aware");
  const std::vector<Slice> handoff =
      node_aware::leader_handoffs(stitcher, plan, layout, Buf::kOutput);
  const bool staged = !plan.order.same_as_rank_order;
  const Slice staging = staged ? stitcher.scratch(spec.root, layout.total())
                               : node_aware::whole(layout, spec.root, Buf::kInput);
  if (staged) {
    for (Rank r = 0; r < spec.nranks; ++r) {
      const Count b = layout.block(r);
      stitcher.copy(
          spec.root, Slice{Buf::kInput, layout.displ(r), b},
          Slice{Buf::kScratch,
                staging.offset + plan.order.staged_displ[static_cast<std::size_t>(r)], b});
    }
  }
  node_aware::append_phase(stitcher, plan.phases, kInter, [&](std::size_t, Rank i, Buf buf) {
    const auto g = static_cast<std::size_t>(i);
    if (buf == Buf::kOutput) return handoff[g];
    return levels.leaders[g] == spec.root ? staging : Slice{Buf::kInput, 0, 0};
  });
  node_aware::append_phase(stitcher, plan.phases, kIntra, plan.intra.members,
                           [&](std::size_t j, Rank i, Buf buf) {
                             const std::size_t g = plan.intra.index[j];
                             const Rank r = levels.members[g][static_cast<std::size_t>(i)];
                             if (buf == Buf::kOutput) return node_aware::whole(layout, r, buf);
                             return r == levels.leaders[g] ? handoff[g] : Slice{Buf::kInput, 0, 0};
                           });
  stitcher.set_params(plan.phases.recorded());
  return std::move(stitcher).finish();
}

// Estimate: the two levels' estimates one after the other (the root's staging copies, for
// placements not in blocks, are not in it).
std::optional<Estimate> estimate_scatter_node_aware(const CollectiveSpec& spec,
                                                    const Params& params, const CostModel& model) {
  return node_aware::rooted_plan(spec, params, model, kPhases, kIntra, kInter).phases.estimate();
}

}  // namespace optcoll::algorithms
