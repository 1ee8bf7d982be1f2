// SPDX-License-Identifier: Apache-2.0
// File: the plain tree gather and scatter emitters: any TreeShape whose subtrees are runs of
// `positions`; every inner rank holds its subtree's blocks in scratch, in position order, and
// a subtree travels as one message. A rank's operations are ordered only by their data.
//
//   p = 4, binomial tree of root 2 over virtual positions (2 ─┬─ 0 ── 1, 2 ─ 3), gather of m
//   per rank: 2 copies its block into place, 1→0 (m) lands after 0's own block in 0's
//   scratch, 3→2 (m), and 0→2 (2m) is one message, rank 0's and 1's blocks in rank order.
//   Where a subtree is not one run of consecutive ranks (the wrap-around at rank p-1 of a
//   relabelled tree), the root receives (scatter: sends) it as one message per run.
//
// Cost (one port, blocks m, p a power of two, binomial, copy = 0): log2(p)·α + (p-1)·m·β;
//   every inner rank also copies its own block (m·copy), overlapping its children's work.
//   tree_gather_time / tree_scatter_time (tree_estimate.h) price any tree and blocks.
// Restrictions: `positions` a permutation of 0..p-1 and every subtree a contiguous run of
//   positions (InternalError otherwise); blocks may differ and be empty (gatherv/scatterv).
// When to use: trees of a fixed shape (binomial, flat), registry algorithms and compositions
//   (reduce_scatter/reduce_then_scatter, allgather/gather_then_bcast). The simulator orders a
//   rank's ready operations itself, so the time is the estimate's, not a planned one: for a
//   tree planned under Träff's Definition 2 (copy_slot) use emit_ordered_gather/_scatter
//   (tree_ordered_gather_scatter.h), or emit_positioned_gather/_scatter
//   (tree_positioned_gather_scatter.h) when its subtrees are not rank ranges.
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 19(13), 2007 (MST gather and
//   scatter); Träff, "Optimal trees for irregular gather and scatter", TPDS 30(9), 2019.
#pragma once

#include <vector>

#include "optcoll/algorithms/patterns/tree_emit.h"
#include "optcoll/schedule/builder.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll::algorithms::patterns {

// Gather of each rank's input block (input[0, block(r))) to `root_dest` (layout.total()
// elements in rank order on the root; block r at displ(r)).
void emit_tree_gather(ScheduleBuilder& b, const TreeShape& tree, const std::vector<Rank>& positions,
                      Slice root_dest);

// Scatter of `root_source` (layout.total() elements in rank order on the root) so that
// every rank r ends with its block in output[0, block(r)).
void emit_tree_scatter(ScheduleBuilder& b, const TreeShape& tree,
                       const std::vector<Rank>& positions, Slice root_source);

}  // namespace optcoll::algorithms::patterns
