// SPDX-License-Identifier: Apache-2.0
// File: broadcast and reduction over an ordered tree (Träff's Theorem 4 trees): each node's
// operations chained in the tree's child order, and no local copy in the reduction.
//
//   p = 4, tree 1 ─┬─ 0, 1 ─ 2 ── 3 (1's children 0 then 2). bcast: 1→0, then 1→2, then
//   2→3 after 2's receive. reduce: 2 receives 3's contribution into scratch, reduces its own
//   in on the left, sends; 1 receives 0's into the result, reduces its own in on the right,
//   then receive-reduces 2's partial on the right (rank order 0,1,2,3).
//
// Cost: exactly the tree's Definition 2 fold with full-vector messages, t = max(t, C(c)) + w
//   per child in order, w = α + nβ (bcast, read backwards in time) or α + nβ + nγ (reduce:
//   a receive plus a reduce, or a receive-reduce); only p = 1 copies (n·copy).
//   Homogeneously the DP's optimum is ceil(log2 p)·w.
// Restrictions: any tree; for a non-commutative operator every subtree must be a consecutive
//   rank range and each child's range adjacent to what its parent has combined so far (the
//   DP's trees are; the verifier checks it).
// When to use: the trees of bcast/reduce optimal_ordered (planners/ordered_bcast_reduce.cc),
//   whose planned time the chaining reproduces. For fixed-shape trees and segmented messages
//   use emit_tree_bcast/_reduce (tree_bcast_reduce.h): it copies each inner rank's
//   contribution first (max(copy·n, C(first)) >= C(first), so never faster here) and leaves
//   each rank's order to the simulator.
// Reference: Träff, "Optimal trees for irregular gather and scatter", TPDS 30(9), 2019
//   (Theorem 4; docs/math/gather-scatter-trees.md §3.6).
#pragma once

#include "optcoll/algorithms/patterns/tree_emit.h"
#include "optcoll/schedule/builder.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll::algorithms::patterns {

// Bcast: a node sends `data` to its children in order, after its own receive.
void emit_ordered_bcast(ScheduleBuilder& b, const TreeShape& tree, Slice data);

// Reduce: a leaf sends its contribution; an inner node receives its first child's partial into
// its accumulator with a plain receive, reduces its own contribution into it (on the correct
// side), then receive-reduces the other children in order, each on the side its ranks lie.
// The root alone (p = 1) copies its contribution.
void emit_ordered_reduce(ScheduleBuilder& b, const TreeShape& tree, Slice contribution,
                         Slice result);

}  // namespace optcoll::algorithms::patterns
