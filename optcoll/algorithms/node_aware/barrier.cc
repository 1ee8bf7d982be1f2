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
constexpr patterns::LevelPhase kPhases[] = {{"intra", CollectiveKind::kBarrier},
                                            {"inter", CollectiveKind::kBarrier}};

struct Plan {
  patterns::NodeLevels levels;
  std::vector<CollectiveSpec> intra_specs;
  std::vector<CollectiveSpec> inter_spec;
  const AlgorithmInfo* intra = nullptr;
  const AlgorithmInfo* inter = nullptr;
};

Plan plan_of(const CollectiveSpec& spec, const Params& params, const CostModel& model) {
  Plan plan{patterns::node_levels(spec.nranks, params, model), {}, {}, nullptr, nullptr};
  const auto& levels = plan.levels;
  for (std::int32_t n = 0; n < levels.nodes(); ++n) {
    plan.intra_specs.push_back(
        patterns::level_spec(spec, CollectiveKind::kBarrier, levels.size(n), 0));
  }
  plan.inter_spec.push_back(
      patterns::level_spec(spec, CollectiveKind::kBarrier, levels.nodes(), 0));
  plan.intra = &patterns::level_algorithm("intra", params.get("intra"), plan.intra_specs,
                                          levels.intra, "dissemination");
  plan.inter = &patterns::level_algorithm("inter", params.get("inter"), plan.inter_spec,
                                          levels.inter, "dissemination");
  return plan;
}

std::string recorded(const Plan& plan) {
  return fmt::format("{},intra={},inter={}", plan.levels.nodes_param, plan.intra->short_name(),
                     plan.inter->short_name());
}

}  // namespace

std::span<const ParamInfo> barrier_node_aware_params() { return kParams; }

std::optional<std::string> barrier_node_aware_why_not(const CollectiveSpec& spec,
                                                      const Params& params) {
  return patterns::levels_why_not(spec, params, kPhases);
}

Schedule build_barrier_node_aware(const CollectiveSpec& spec, const Params& params,
                                  const CostModel& model) {
  const Plan plan = plan_of(spec, params, model);
  const auto& levels = plan.levels;
  Stitcher stitcher(spec, "barrier/node_aware");
  const auto nothing = [](auto&&...) { return Slice{Buf::kInput, 0, 0}; };
  node_aware::append_groups(stitcher, *plan.intra, plan.intra_specs, levels.members, levels.intra,
                            nothing);
  stitcher.append(patterns::build_level(*plan.inter, plan.inter_spec[0], levels.inter),
                  levels.leaders, nothing);
  node_aware::append_groups(stitcher, *plan.intra, plan.intra_specs, levels.members, levels.intra,
                            nothing);
  stitcher.set_params(recorded(plan));
  return std::move(stitcher).finish();
}

// Estimate: the three phases' estimates one after the other.
std::optional<Estimate> estimate_barrier_node_aware(const CollectiveSpec& spec,
                                                    const Params& params, const CostModel& model) {
  const Plan plan = plan_of(spec, params, model);
  return patterns::phases_estimate({{plan.intra, plan.intra_specs, &plan.levels.intra, 2},
                                    {plan.inter, plan.inter_spec, &plan.levels.inter}},
                                   recorded(plan));
}

}  // namespace optcoll::algorithms
