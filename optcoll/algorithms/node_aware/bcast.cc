// SPDX-License-Identifier: Apache-2.0
// bcast/node_aware — two levels: the root broadcasts to one leader per node (among the
// leaders), then every leader broadcasts within its node. The root leads its own node.
//
//   2 nodes x 3 ranks, root 1, binomial at both levels:
//     inter: 1 -> 3            intra: 1 -> 0, 1 -> 2;  3 -> 4, 3 -> 5
//
// Cost: T_inter(N, n) + max over nodes T_intra(m_node, n), each level's bcast under its own
//   alpha and beta (inter_alpha, inter_beta between the N nodes; alpha, beta within a node of
//   m_node ranks). The message crosses each NIC once.
// Restrictions: nodes auto (the model's placement; one rank per node without one) or 1..p;
//   inter and intra auto or a flat bcast of the registry.
// Reference: Open MPI coll/han (2-level bcast); MPICH's SMP-aware bcast; Träff, "SMP-aware
//   message passing programming" (2003).

#include "optcoll/algorithms/node_aware/common.h"

namespace optcoll::algorithms {
namespace {

constexpr ParamInfo kParams[] = {
    {"nodes", "auto", "auto (the model's placement) or N nodes in even blocks"},
    {"inter", "auto", "bcast among the nodes' leaders (auto: least estimated time)"},
    {"intra", "auto", "bcast within each node (auto: least estimated time)"},
};
constexpr patterns::LevelPhase kPhases[] = {
    {"inter", CollectiveKind::kBcast, patterns::Level::kInter}, {"intra", CollectiveKind::kBcast}};
enum Phase : std::size_t { kInter, kIntra };

patterns::PhasePlan plan_of(const CollectiveSpec& spec, const Params& params,
                            const CostModel& model) {
  patterns::PhasePlan plan(patterns::node_levels(spec.nranks, params, model, spec.root), kPhases);
  const auto& levels = plan.levels();
  plan.specs(kInter).push_back(patterns::level_spec(spec, CollectiveKind::kBcast, levels.nodes(),
                                                    spec.count, levels.root_node));
  for (std::int32_t n = 0; n < levels.nodes(); ++n) {
    plan.specs(kIntra).push_back(
        patterns::level_spec(spec, CollectiveKind::kBcast, levels.size(n), spec.count,
                             levels.leader_index[static_cast<std::size_t>(n)]));
  }
  plan.choose(params);
  return plan;
}

}  // namespace

std::span<const ParamInfo> bcast_node_aware_params() { return kParams; }

std::optional<std::string> bcast_node_aware_why_not(const CollectiveSpec& spec,
                                                    const Params& params) {
  return patterns::levels_why_not(spec, params, kPhases);
}

Schedule build_bcast_node_aware(const CollectiveSpec& spec, const Params& params,
                                const CostModel& model) {
  const patterns::PhasePlan plan = plan_of(spec, params, model);
  const Layout layout = Layout::borrowing(spec);
  Stitcher stitcher(spec, "bcast/node_aware");
  node_aware::append_phase(stitcher, plan, kInter, node_aware::whole_buffers(layout, plan, kInter));
  node_aware::append_phase(stitcher, plan, kIntra, node_aware::whole_buffers(layout, plan, kIntra));
  stitcher.set_params(plan.recorded());
  return std::move(stitcher).finish();
}

// Estimate: the two levels' estimates one after the other (each under its level's model;
// NIC sharing does not arise: one rank per node talks between nodes).
std::optional<Estimate> estimate_bcast_node_aware(const CollectiveSpec& spec, const Params& params,
                                                  const CostModel& model) {
  return plan_of(spec, params, model).estimate();
}

}  // namespace optcoll::algorithms
