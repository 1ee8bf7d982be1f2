// SPDX-License-Identifier: Apache-2.0
// reduce_scatter(_block)/node_aware — three phases: every node reduces the whole vector to
// its leader (its first rank), the leaders reduce-scatter the nodes' parts among themselves
// (node g keeps the blocks of its ranks), every leader scatters its part within its node.
// Where the nodes are not blocks of consecutive ranks, each leader first copies its vector
// into node order.
//
//   2 nodes x 2 ranks: intra reduce 1 -> 0, 3 -> 2; inter reduce-scatter 0 <-> 2 (node 0
//   keeps blocks 0-1, node 1 blocks 2-3); intra scatter 0 -> 1, 2 -> 3
//
// Cost: max T_reduce(m_node, n) + T_reduce_scatter(N, the nodes' totals) + max
//   T_scatterv(m_node, the node's blocks) (+ the leaders' copies for other placements).
// Restrictions: commutative operator; nodes auto or 1..p; up (reduce), inter (reduce_scatter)
//   and down (scatterv) auto or flat registry algorithms of those kinds.
// Reference: Open MPI coll/han's two-level structure; Träff, "SMP-aware message passing
//   programming" (2003).

#include "optcoll/algorithms/node_aware/common.h"

namespace optcoll::algorithms {
namespace {

constexpr ParamInfo kParams[] = {
    {"nodes", "auto", "auto (the model's placement) or N nodes in even blocks"},
    {"up", "auto", "reduce within each node to its leader"},
    {"inter", "auto", "reduce_scatter of the nodes' parts among the leaders"},
    {"down", "auto", "scatterv within each node from its leader"},
};
constexpr patterns::LevelPhase kPhases[] = {
    {"up", CollectiveKind::kReduce},
    {"inter", CollectiveKind::kReduceScatter, patterns::Level::kInter, "ring"},
    {"down", CollectiveKind::kScatterv}};
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
    plan.phases.specs(kUp).push_back(
        patterns::level_spec(spec, CollectiveKind::kReduce, size, layout.total(), 0));
    plan.phases.specs(kDown).push_back(patterns::level_spec(
        spec, CollectiveKind::kScatterv, size, 0, 0, node_aware::member_blocks(levels, layout, g)));
  }
  plan.phases.specs(kInter).push_back(patterns::level_spec(
      spec, CollectiveKind::kReduceScatter, levels.nodes(), 0, 0, plan.order.node_total));
  plan.phases.choose(params);
  return plan;
}

}  // namespace

std::span<const ParamInfo> reduce_scatter_node_aware_params() { return kParams; }

std::optional<std::string> reduce_scatter_node_aware_why_not(const CollectiveSpec& spec,
                                                             const Params& params) {
  return patterns::levels_why_not(spec, params, kPhases);
}

Schedule build_reduce_scatter_node_aware(const CollectiveSpec& spec, const Params& params,
                                         const CostModel& model) {
  const Plan plan = plan_of(spec, params, model);
  const Layout layout = Layout::borrowing(spec);
  const auto& levels = plan.phases.levels();
  Stitcher stitcher(spec, std::string(collective_name(spec.kind)) + "/node_aware");
  const bool staged = !plan.order.same_as_rank_order;
  std::vector<Slice> reduced;  // each leader's node sum, in rank order
  std::vector<Slice> ordered;  // the same in node order (where that differs)
  std::vector<Slice> part;     // each leader's node part, reduced over all nodes
  for (std::size_t g = 0; g < levels.leaders.size(); ++g) {
    const Rank leader = levels.leaders[g];
    reduced.push_back(stitcher.scratch(leader, layout.total()));
    ordered.push_back(staged ? stitcher.scratch(leader, layout.total()) : reduced.back());
    part.push_back(stitcher.scratch(leader, plan.order.node_total[g]));
  }
  const auto member = [&](std::size_t g, Rank i) {
    return levels.members[g][static_cast<std::size_t>(i)];
  };
  node_aware::append_phase(stitcher, plan.phases, kUp, [&](std::size_t g, Rank i, Buf buf) {
    if (buf == Buf::kInput) {
      return node_aware::whole(layout, member(g, i), buf);
    }
    return i == 0 ? reduced[g] : Slice{Buf::kOutput, 0, 0};
  });
  if (staged) {
    for (std::size_t g = 0; g < levels.leaders.size(); ++g) {
      for (Rank r = 0; r < spec.nranks; ++r) {
        const Count b = layout.block(r);
        stitcher.copy(
            levels.leaders[g], Slice{Buf::kScratch, reduced[g].offset + layout.displ(r), b},
            Slice{Buf::kScratch,
                  ordered[g].offset + plan.order.staged_displ[static_cast<std::size_t>(r)], b});
      }
    }
  }
  node_aware::append_phase(stitcher, plan.phases, kInter, [&](std::size_t, Rank i, Buf buf) {
    const auto g = static_cast<std::size_t>(i);
    return buf == Buf::kInput ? ordered[g] : part[g];
  });
  node_aware::append_phase(stitcher, plan.phases, kDown, [&](std::size_t g, Rank i, Buf buf) {
    if (buf == Buf::kOutput) {
      return node_aware::whole(layout, member(g, i), buf);
    }
    return i == 0 ? part[g] : Slice{Buf::kInput, 0, 0};
  });
  stitcher.set_params(plan.phases.recorded());
  return std::move(stitcher).finish();
}

// Estimate: the three phases' estimates one after the other (the leaders' copies for
// placements not in blocks are not in it).
std::optional<Estimate> estimate_reduce_scatter_node_aware(const CollectiveSpec& spec,
                                                           const Params& params,
                                                           const CostModel& model) {
  return plan_of(spec, params, model).phases.estimate();
}

}  // namespace optcoll::algorithms
