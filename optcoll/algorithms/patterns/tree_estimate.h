// SPDX-License-Identifier: Apache-2.0
// File: the times of the plain tree emitters (tree_bcast_reduce.h, tree_gather_scatter.h)
// under the closed-form models (estimate.h), from a TreeShape alone, in O(p): what the tree
// algorithms' estimates share.
// One port, full duplex, no overlap: a rank sends to its children one after the other, takes
// its children's messages one after the other, and computes (copy, reduce) with no
// communication in progress.
#pragma once

#include <optional>
#include <vector>

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/params.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll::algorithms::patterns {

// emit_tree_bcast of n elements, unsegmented: a child's message starts when its parent has
// the data and has sent to the children before it (bcast_slots · (α + nβ)). Exact.
Time tree_bcast_time(const TreeShape& tree, const LinkCosts& costs, Count n);

// emit_tree_reduce of n elements, unsegmented: an inner rank (and the root) copies its
// contribution into its accumulator, then receives and reduces its children's partials in
// order, each once the child's own subtree is done: t = max(t, C(child)) + α + nβ + nγ. Exact.
Time tree_reduce_time(const TreeShape& tree, const LinkCosts& costs, Count n);

// emit_tree_gather / emit_tree_scatter of blocks[r] elements per rank, subtrees in position
// order (`positions`, as given to the emitter). Gather: an inner rank copies its own block,
// then takes its children's subtrees in the order they are ready (ties: the lower rank);
// scatter: a rank sends its children their subtrees in order, then copies its own block.
// Where a child's subtree is not one run of consecutive ranks (at the root of a relabelled
// tree), each run is a message of its own. Estimates: the simulator may order a copy and a
// transfer that are ready at once the other way.
Time tree_gather_time(const TreeShape& tree, const std::vector<Rank>& positions,
                      const std::vector<Count>& blocks, const LinkCosts& costs);
Time tree_scatter_time(const TreeShape& tree, const std::vector<Rank>& positions,
                       const std::vector<Count>& blocks, const LinkCosts& costs);

// The model's own α, β and copy per element (no closed-form check): what a builder orders
// messages by where the formulas do not describe the model.
LinkCosts base_link_costs(const CollectiveSpec& spec, const CostModel& model);

// Graham's LPT list schedule of a star's messages on `ports` ports: the non-empty blocks other
// than the root's, largest first (ties: rank order), each appended to the port whose list
// ends first under `costs` (α + m·β; ties: the lower port). Per port, its ranks in order.
std::vector<std::vector<Rank>> lpt_port_lists(const std::vector<Count>& blocks, Rank root,
                                              const LinkCosts& costs, int ports);

// The time of those lists: the longest port's Σ (α + m·β); with one port the sum of all.
Time lpt_star_messages_time(const std::vector<Count>& blocks, Rank root, const LinkCosts& costs,
                            int ports);

// A gather(v) or scatter(v) star on the model's ports with LPT lists (gather/lpt_star,
// scatter/lpt_star): the root's copy and its longest list, m_root·copy + LPT_k. Exact; nullopt
// where the closed forms do not describe the model apart from its ports.
std::optional<Estimate> lpt_star_estimate(const CollectiveSpec& spec, const CostModel& model);

// emit_pipelined_reduce (pipelined_reduce.h) over `tree` with the segments the builder picks
// (pipelined_segments for the tree's reduce slots and fanout): the inner ranks' copy of their
// contribution, then pipelined_tree_cost. An estimate; nullopt for a model the formulas do
// not describe. What pipelined_binary and pipelined_chain share.
std::optional<Estimate> pipelined_reduce_estimate(const CollectiveSpec& spec, const Params& params,
                                                  const CostModel& model, const TreeShape& tree);

// Elements the gather (or scatter) messages carry: each non-root rank's subtree once.
double tree_subtree_elements(const TreeShape& tree, const std::vector<Count>& blocks);

}  // namespace optcoll::algorithms::patterns
