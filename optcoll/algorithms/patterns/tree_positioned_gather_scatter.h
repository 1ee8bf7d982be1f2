// SPDX-License-Identifier: Apache-2.0
// File: the positioned gather and scatter emitters: Träff's item order (as in
// tree_ordered_gather_scatter.h) over a tree whose subtrees are runs of a permutation
// `positions` rather than rank ranges, with the root receiving (sending) a segment that is not
// one slice of its buffer as one message over several slices.
//
//   p = 4, positions {2, 3, 0, 1} (order by position: ranks 2, 3, 0, 1), root 2 with children
//   3 and 0, child 1 under 0. Gather: 0 holds ranks 0, 1 in scratch; the root receives 3's
//   block in place at out[displ(3)], and 0's two blocks in place at out[displ(0)] (ranks 0, 1
//   are consecutive there). With positions {1, 2, 0, 3} (order: ranks 2, 0, 1, 3), root 1
//   with children 2 and 3, child 0 under 2: 2's subtree holds ranks 2 then 0, not one slice of
//   the root's buffer, so the root receives it in one RecvSlices: its first block into
//   out[displ(2)], its second into out[displ(0)] (Träff's TWO_Gatherv does this with an MPI
//   derived datatype).
//
// Cost: Träff's Definition 2 time of the tree (a node's items one at a time, chained); every
//   message is one message of its segment's size, wherever its data land, so no copy is
//   charged beyond the root's own block. planners/two_block.h's positioned_completion_time
//   is that time, so planned == simulated exactly.
// Restrictions: `positions` a permutation of 0..p-1, every subtree a contiguous run of it
//   (InternalError otherwise); copy_slot one entry per rank.
// When to use: the joined two-class trees of gatherv/scatterv two_block (planners/two_block.cc).
//   For a tree of rank ranges emit_ordered_gather/_scatter is the same; for a fixed-shape tree
//   with no planned item order, emit_tree_gather/_scatter.
// Reference: Träff, "Optimal trees for irregular gather and scatter", TPDS 30(9), 2019
//   (Lemma 2, TWO_Gatherv; docs/math/gather-scatter-trees.md §7).
#pragma once

#include <vector>

#include "optcoll/algorithms/patterns/tree_emit.h"
#include "optcoll/schedule/builder.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll::algorithms::patterns {

// Inner nodes hold their subtree in position order; items are chained in the model's order.
// At the root, each child's segment is received (scatter: sent) in ONE message straight into
// (from) the root's buffer: a plain Recv (Send) when its non-empty blocks are, in position
// order, one slice of the buffer (rank order), else a RecvSlices (SendSlices) over the runs of
// consecutive ranks they form there.
void emit_positioned_gather(ScheduleBuilder& b, const TreeShape& tree,
                            const std::vector<int>& copy_slot, const std::vector<Rank>& positions,
                            Slice root_dest);
void emit_positioned_scatter(ScheduleBuilder& b, const TreeShape& tree,
                             const std::vector<int>& copy_slot, const std::vector<Rank>& positions,
                             Slice root_source);

}  // namespace optcoll::algorithms::patterns
