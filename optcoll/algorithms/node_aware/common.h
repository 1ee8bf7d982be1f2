// SPDX-License-Identifier: Apache-2.0
// File: what the node-aware algorithm files share: the parameters of two levels, whole
// buffers of the call, and building a phase once per distinct (size, root) of its groups.
#pragma once

#include <algorithm>
#include <map>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "optcoll/algorithms/patterns/levels.h"
#include "optcoll/schedule/builder.h"
#include "optcoll/schedule/stitch.h"

namespace optcoll::algorithms::node_aware {

// Rank r's whole buffer `buf` of the call.
inline Slice whole(const Layout& layout, Rank r, Buf buf) {
  return {buf, 0, buf == Buf::kInput ? layout.input_count(r) : layout.output_count(r)};
}

// A gathered buffer (the blocks of every rank, in rank order in the call's buffers) as the
// levels hold it: node by node, each node's members in rank order. Where the nodes are
// blocks of consecutive ranks in order, the two orders are the same and no staging is needed.
struct NodeOrder {
  bool same_as_rank_order = true;
  std::vector<Count> node_total;    // per node: its ranks' blocks together
  std::vector<Count> staged_displ;  // per rank: where its block sits in node order
};

inline NodeOrder node_order(const patterns::NodeLevels& levels, const Layout& layout) {
  NodeOrder order;
  order.staged_displ.assign(static_cast<std::size_t>(layout.nranks()), 0);
  Count at = 0;
  Rank expected = 0;
  for (const auto& members : levels.members) {
    Count total = 0;
    for (const Rank r : members) {
      order.same_as_rank_order = order.same_as_rank_order && r == expected++;
      order.staged_displ[static_cast<std::size_t>(r)] = at + total;
      total += layout.block(r);
    }
    order.node_total.push_back(total);
    at += total;
  }
  return order;
}

// The blocks of node g's members, in member order (a gatherv's or scatterv's counts).
inline std::vector<Count> member_blocks(const patterns::NodeLevels& levels, const Layout& layout,
                                        std::size_t g) {
  std::vector<Count> counts;
  for (const Rank r : levels.members[g]) counts.push_back(layout.block(r));
  return counts;
}

// The nodes of more than one rank, and their members: a node of one rank needs no intra-node
// phase (its rank's own buffer is the node's hand-off, saving a copy of its block).
struct SharedNodes {
  std::vector<std::size_t> index;          // into levels.members
  std::vector<std::vector<Rank>> members;  // members[index[j]]
};
inline SharedNodes shared_nodes(const patterns::NodeLevels& levels) {
  SharedNodes shared;
  for (std::size_t g = 0; g < levels.members.size(); ++g) {
    if (levels.members[g].size() < 2) continue;
    shared.index.push_back(g);
    shared.members.push_back(levels.members[g]);
  }
  return shared;
}

// A rooted two-level gatherv or scatterv: an intra-node phase on the nodes of more than one
// rank (its j-th spec: the blocks of node intra.index[j]'s members, to or from its leader) and
// an inter-node phase among the leaders (each node's blocks together, to or from the root's
// node). `intra` and `inter` index `phases`, whose kinds are the phases' collectives.
struct RootedPlan {
  patterns::PhasePlan phases;
  NodeOrder order;
  SharedNodes intra;  // the nodes that run the intra-node phase
};
inline RootedPlan rooted_plan(const CollectiveSpec& spec, const Params& params,
                              const CostModel& model, std::span<const patterns::LevelPhase> phases,
                              std::size_t intra, std::size_t inter) {
  const Layout layout = Layout::borrowing(spec);
  RootedPlan plan{{patterns::node_levels(spec.nranks, params, model, spec.root), phases}, {}, {}};
  const auto& levels = plan.phases.levels();
  plan.order = node_order(levels, layout);
  plan.intra = shared_nodes(levels);
  for (const std::size_t g : plan.intra.index) {
    plan.phases.specs(intra).push_back(
        patterns::level_spec(spec, phases[intra].kind, levels.size(static_cast<std::int32_t>(g)), 0,
                             levels.leader_index[g], member_blocks(levels, layout, g)));
  }
  plan.phases.specs(inter).push_back(patterns::level_spec(
      spec, phases[inter].kind, levels.nodes(), 0, levels.root_node, plan.order.node_total));
  plan.phases.choose(params);
  return plan;
}

// Each leader's hand-off in a rooted two-level call: its node's blocks in node order, in
// scratch; a node of one rank hands off through that rank's own buffer `own`.
inline std::vector<Slice> leader_handoffs(Stitcher& stitcher, const RootedPlan& plan,
                                          const Layout& layout, Buf own) {
  const auto& levels = plan.phases.levels();
  std::vector<Slice> handoff;
  for (std::size_t g = 0; g < levels.leaders.size(); ++g) {
    const Rank leader = levels.leaders[g];
    handoff.push_back(levels.members[g].size() == 1
                          ? whole(layout, leader, own)
                          : stitcher.scratch(leader, plan.order.node_total[g]));
  }
  return handoff;
}

// Appends one phase run by several groups (specs[g] on members[g]), each group's buffers
// placed by place(group, part_rank, buf); groups with the same regular spec share one build.
// Building for one rank (OneRankBuild), only the group that holds it is built, for its
// place in the group.
template <typename PlaceFn>
void append_groups(Stitcher& stitcher, const AlgorithmInfo& info,
                   const std::vector<CollectiveSpec>& specs,
                   const std::vector<std::vector<Rank>>& members, const CostModel& model,
                   PlaceFn place) {
  if (const Rank kept = OneRankBuild::current(); kept != kNoRank) {
    for (std::size_t g = 0; g < specs.size(); ++g) {
      const auto it = std::find(members[g].begin(), members[g].end(), kept);
      if (it == members[g].end()) continue;
      const OneRankBuild in_group(static_cast<Rank>(it - members[g].begin()));
      const Schedule part = patterns::build_level(info, specs[g], model);
      stitcher.append(part, members[g], [&](Rank i, Buf buf) { return place(g, i, buf); });
    }
    return;
  }
  std::map<std::tuple<Rank, Rank, Count>, Schedule> built;  // (ranks, root, count) -> schedule
  for (std::size_t g = 0; g < specs.size(); ++g) {
    const CollectiveSpec& s = specs[g];
    const bool shareable = s.counts.empty();
    Schedule local;
    const Schedule* schedule = &local;
    if (shareable) {
      auto [it, fresh] = built.try_emplace({s.nranks, s.root, s.count});
      if (fresh) it->second = patterns::build_level(info, s, model);
      schedule = &it->second;
    } else {
      local = patterns::build_level(info, s, model);
    }
    stitcher.append(*schedule, members[g], [&](Rank i, Buf buf) { return place(g, i, buf); });
  }
}

// The rank that plays rank i of group g in phase `phase` of `plan` (intra: node g's i-th
// member; inter: node i's leader).
inline Rank member_of(const patterns::PhasePlan& plan, std::size_t phase, std::size_t g, Rank i) {
  const auto& levels = plan.levels();
  const auto k = static_cast<std::size_t>(i);
  return plan.level(phase) == patterns::Level::kIntra ? levels.members[g][k] : levels.leaders[k];
}

// A place function (append_phase) that maps every part rank's buffers to its member's whole
// buffers of the call.
inline auto whole_buffers(const Layout& layout, const patterns::PhasePlan& plan,
                          std::size_t phase) {
  return [&layout, &plan, phase](std::size_t g, Rank i, Buf buf) {
    return whole(layout, member_of(plan, phase, g, i), buf);
  };
}

// Appends phase `phase` of `plan`, its g-th spec run by groups[g].
template <typename PlaceFn>
void append_phase(Stitcher& stitcher, const patterns::PhasePlan& plan, std::size_t phase,
                  const std::vector<std::vector<Rank>>& groups, PlaceFn place) {
  append_groups(stitcher, plan.algorithm(phase), plan.specs(phase), groups, plan.model(phase),
                place);
}

// As above with the groups of the phase's level: every node's members (intra), or the
// nodes' leaders (inter: place's group is 0).
template <typename PlaceFn>
void append_phase(Stitcher& stitcher, const patterns::PhasePlan& plan, std::size_t phase,
                  PlaceFn place) {
  const auto& levels = plan.levels();
  if (plan.level(phase) == patterns::Level::kIntra) {
    append_phase(stitcher, plan, phase, levels.members, place);
  } else {
    append_phase(stitcher, plan, phase, std::vector<std::vector<Rank>>{levels.leaders}, place);
  }
}

}  // namespace optcoll::algorithms::node_aware
