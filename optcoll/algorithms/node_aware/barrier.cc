// SPDX-License-Identifier: Apache-2.0
// barrier/node_aware — three phases: a barrier within every node, a barrier among the nodes'
// leaders (their first ranks), a barrier within every node again. A rank leaves the last
// phase only after its leader left the second, which every leader entered only after its
// whole node entered the first: every rank has arrived.
//
//   2 nodes x 2 ranks: intra {0,1}, {2,3}; inter {0,2}; intra {0,1}, {2,3}
//
// Cost: 2 max T_intra(m_node) + T_inter(N): one inter-node barrier of N leaders instead of
//   one of p ranks.
// Restrictions: nodes auto or 1..p; intra and inter auto or flat barrier algorithms.
// Reference: Open MPI coll/han's barrier; MPICH's SMP-aware barrier.

#include "optcoll/algorithms/node_aware/common.h"

namespace optcoll::algorithms {
namespace {

constexpr ParamInfo kParams[] = {
    {"nodes", "auto", "auto (the model's placement) or N nodes in even blocks"},
    {"intra", "auto", "barrier within each node (both times)"},
    {"inter", "auto", "barrier among the nodes' leaders"},
};
constexpr patterns::LevelPhase kPhases[] = {
    {"intra", CollectiveKind::kBarrier, patterns::Level::kIntra, "dissemination", 2},
    {"inter", CollectiveKind::kBarrier, patterns::Level::kInter, "dissemination"}};
enum Phase : std::size_t { kIntra, kInter };

patterns::PhasePlan plan_of(const CollectiveSpec& spec, const Params& params,
                            const CostModel& model) {
  patterns::PhasePlan plan(patterns::node_levels(spec.nranks, params, model), kPhases);
  const auto& levels = plan.levels();
  for (std::int32_t n = 0; n < levels.nodes(); ++n) {
    plan.specs(kIntra).push_back(
        patterns::level_spec(spec, CollectiveKind::kBarrier, levels.size(n), 0));
  }
  plan.specs(kInter).push_back(
      patterns::level_spec(spec, CollectiveKind::kBarrier, levels.nodes(), 0));
  plan.choose(params);
  return plan;
}

}  // namespace

std::span<const ParamInfo> barrier_node_aware_params() { return kParams; }

std::optional<std::string> barrier_node_aware_why_not(const CollectiveSpec& spec,
                                                      const Params& params) {
  return patterns::levels_why_not(spec, params, kPhases);
}

Schedule build_barrier_node_aware(const CollectiveSpec& spec, const Params& params,
                                  const CostModel& model) {
  const patterns::PhasePlan plan = plan_of(spec, params, model);
  Stitcher stitcher(spec, "barrier/node_aware");
  const auto nothing = [](auto&&...) { return Slice{Buf::kInput, 0, 0}; };
  node_aware::append_phase(stitcher, plan, kIntra, nothing);
  node_aware::append_phase(stitcher, plan, kInter, nothing);
  node_aware::append_phase(stitcher, plan, kIntra, nothing);
  stitcher.set_params(plan.recorded());
  return std::move(stitcher).finish();
}

// Estimate: the intra-node barrier twice and the leaders' once.
std::optional<Estimate> estimate_barrier_node_aware(const CollectiveSpec& spec,
                                                    const Params& params, const CostModel& model) {
  return plan_of(spec, params, model).estimate();
}

}  // namespace optcoll::algorithms
