// SPDX-License-Identifier: Apache-2.0
// File: the positioned gather and scatter emitters: Träff's item order (as in
// tree_ordered_gather_scatter.h) over a tree whose subtrees are runs of a permutation
// `positions` rather than rank ranges, with the root placing segments that are not one slice
// of its buffer by copies.
//
//   p = 4, positions {2, 3, 0, 1} (order by position: ranks 2, 3, 0, 1), root 2 with children
//   3 and 0, child 1 under 0. Gather: 0 holds ranks 0, 1 in scratch; the root receives 3's
//   block in place at out[displ(3)], and 0's two blocks in place at out[displ(0)] (ranks 0, 1
//   are consecutive there). With positions {1, 2, 0, 3} (order: ranks 2, 0, 1, 3), root 1
//   with children 2 and 3, child 0 under 2: 2's subtree holds ranks 2 then 0, not one slice of
//   the root's buffer, so the root receives it into scratch in one message, then copies
//   block 2 and block 0 into place.
//
// Cost: Träff's Definition 2 time of the tree (a node's items one at a time, chained), plus,
//   for each child of the root whose non-empty blocks are not consecutive in rank order,
//   copy·|T_c| right after its message (scatter: before). planners/two_block.h's
//   positioned_completion_time charges the same, so planned == simulated exactly.
// Restrictions: `positions` a permutation of 0..p-1, every subtree a contiguous run of it
//   (InternalError otherwise); copy_slot one entry per rank.
// When to use: the joined two-class trees of gatherv/scatterv two_block (planners/two_block.cc).
//   For a tree of rank ranges emit_ordered_gather/_scatter is the same without the root's
//   copies; for a fixed-shape tree with no planned item order, emit_tree_gather/_scatter.
// Reference: Träff, "Optimal trees for irregular gather and scatter", TPDS 30(9), 2019
//   (Lemma 2, TWO_Gatherv; docs/math/gather-scatter-trees.md §7).
#pragma once

#include <vector>

#include "optcoll/algorithms/patterns/tree_emit.h"
#include "optcoll/schedule/builder.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll::algorithms::patterns {

// Inner nodes hold their subtree in position order; items are chained in the model's order.
// At the root, a child whose non-empty blocks are, in position order, consecutive in the
// root's buffer (rank order) is received (scatter: sent) in place. Any other child is received
// into root scratch in ONE message and its blocks are then copied into place, one Copy per run
// of consecutive ranks, right after the receive (scatter: copied out first, then sent).
// lands_in_place() says which case applies.
void emit_positioned_gather(ScheduleBuilder& b, const TreeShape& tree,
                            const std::vector<int>& copy_slot, const std::vector<Rank>& positions,
                            Slice root_dest);
void emit_positioned_scatter(ScheduleBuilder& b, const TreeShape& tree,
                             const std::vector<int>& copy_slot, const std::vector<Rank>& positions,
                             Slice root_source);

// index[r]: r's place among the ranks with a non-empty block (rank order), or -1.
std::vector<Rank> nonempty_index(const std::vector<bool>& nonempty);
// True if the members of a subtree, listed in position order, have their non-empty blocks at
// consecutive places of the rank-ordered buffer (no other non-empty block between them, and
// in rank order): then the subtree's segment is one slice of the root's buffer.
bool lands_in_place(const std::vector<Rank>& members_by_position, const std::vector<Rank>& index);

}  // namespace optcoll::algorithms::patterns
