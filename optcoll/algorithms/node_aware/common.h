// SPDX-License-Identifier: Apache-2.0
// File: what the node-aware algorithm files share: the parameters of two levels, whole
// buffers of the call, and building a phase once per distinct (size, root) of its groups.
#pragma once

#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "optcoll/algorithms/patterns/levels.h"
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

// Appends one phase run by several groups (specs[g] on members[g]), each group's buffers
// placed by place(group, part_rank, buf); groups with the same regular spec share one build.
template <typename PlaceFn>
void append_groups(Stitcher& stitcher, const AlgorithmInfo& info,
                   const std::vector<CollectiveSpec>& specs,
                   const std::vector<std::vector<Rank>>& members, const CostModel& model,
                   PlaceFn place) {
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

}  // namespace optcoll::algorithms::node_aware
