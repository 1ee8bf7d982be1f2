// SPDX-License-Identifier: Apache-2.0
// File: the ordered gather and scatter emitters for Träff's planned trees: every subtree a
// consecutive rank range, each node's items (its children, and its own block's copy after the
// first copy_slot[v] of them) chained by explicit dependencies in the model's order.
//
//   p = 4, root 0, children of 0: 1, 2; child of 2: 3; copy_slot[0] = 1, copy_slot[2] = 0.
//   gather: rank 2 copies its block, then receives 3's (scratch, ranks 2..3 in order);
//   rank 0 receives 1's block into out[displ(1)], copies its own, then receives 2's segment
//   into out[displ(2)], in that order. scatter: the same items in reverse order, sending.
//
// Cost: exactly the planner's Definition 2 time (gather_trees.h): a node's items run one at a
//   time, t = max(t, C(c)) + α + β·|T_c| per child c and copy·m_v for its own block; the
//   simulated makespan equals it under one port, half or full duplex, with or without overlap.
// Restrictions: every subtree a consecutive rank range (InternalError otherwise); copy_slot
//   one entry per rank (clamped to 0..children); the root always copies, other leaves send
//   their input as it is (scatter: receive into their output).
// When to use: the trees of planners/gather_trees.h (gather(v)/scatter(v) linear, binomial,
//   adaptive, binary and optimal; planners/tree_builder.cc). For a tree over a permutation that
//   is not rank ranges (two_block) use emit_positioned_gather/_scatter
//   (tree_positioned_gather_scatter.h); for a fixed-shape tree with no planned item order,
//   emit_tree_gather/_scatter (tree_gather_scatter.h).
// Reference: Träff, "Optimal trees for irregular gather and scatter", TPDS 30(9), 2019
//   (Definition 2; docs/math/gather-scatter-trees.md).
#pragma once

#include <vector>

#include "optcoll/algorithms/patterns/tree_emit.h"
#include "optcoll/schedule/builder.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll::algorithms::patterns {

// Gather into `root_dest` (layout.total() elements in rank order on the root) over an ordered
// tree; scatter from `root_source` likewise, each node's items run in reverse order.
void emit_ordered_gather(ScheduleBuilder& b, const TreeShape& tree,
                         const std::vector<int>& copy_slot, Slice root_dest);
void emit_ordered_scatter(ScheduleBuilder& b, const TreeShape& tree,
                          const std::vector<int>& copy_slot, Slice root_source);

}  // namespace optcoll::algorithms::patterns
