// SPDX-License-Identifier: Apache-2.0
// File: placements: which node (machine) each rank runs on. The cost model prices a transfer
// between two nodes at the inter-node level (inter_alpha, inter_beta, through the nodes'
// NICs) and one within a node at the intra-node level (alpha, beta); node-aware algorithms
// split their work by node (docs/cost_model.md, "Several nodes: the placement").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "optcoll/model/types.h"

namespace optcoll {

// node_of[r] is rank r's node, 0 <= node_of[r] < nodes(), every node holding at least one
// rank. Any placement: blocks, round robin, uneven nodes, one node, one rank per node.
struct Placement {
  std::vector<std::int32_t> node_of;

  Rank nranks() const { return static_cast<Rank>(node_of.size()); }
  std::int32_t nodes() const;  // 1 + the largest node id (0 when empty)
  bool same_node(Rank a, Rank b) const {
    return node_of[static_cast<std::size_t>(a)] == node_of[static_cast<std::size_t>(b)];
  }
  // The ranks of each node, increasing (members[node]).
  std::vector<std::vector<Rank>> members() const;
  // True when every node holds a run of consecutive ranks and nodes follow in rank order
  // (node 0 holds ranks 0..m0-1, node 1 the next, ...): reductions over nodes in node order
  // then combine in rank order.
  bool in_blocks() const;
  bool operator==(const Placement&) const = default;
};

// `nodes` nodes of `per_node` ranks each, ranks in blocks ("NxM").
Placement block_placement(std::int32_t nodes, Rank per_node);
// p ranks in blocks over `nodes` nodes as even as possible (the first p mod nodes nodes hold
// one rank more).
Placement even_block_placement(Rank p, std::int32_t nodes);

// "NxM" (N nodes of M ranks, in blocks), or a list of node ids, one per rank, separated by
// commas or white space ("0,0,1,1,2"). Throws Error(kInvalidArgument) naming what is wrong.
Placement parse_placement(std::string_view text);
// "NxM" for an even block placement, the list otherwise.
std::string to_string(const Placement& placement);

// Throws Error(kInvalidArgument) naming the rank and the entry: an id below 0, a node that
// holds no rank (ids must be 0..N-1 with each used).
void validate(const Placement& placement);
// As validate(), and the placement must have `nranks` entries.
void validate_for(const Placement& placement, Rank nranks);

}  // namespace optcoll
