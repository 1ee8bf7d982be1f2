// SPDX-License-Identifier: Apache-2.0
// File: the plain tree broadcast and reduction emitters: any TreeShape, the message whole or
// pipelined in segments; a rank's operations are ordered only by their data.
//
//   p = 4, tree 0 ─┬─ 2 ── 3, bcast of n:   0→2, 0→1, 2→3 (each n elements)
//                  └─ 1
//   reduce over the same tree with children smallest first (0's children 1, 2): 2 copies its
//   contribution into scratch and receive-reduces 3's on its right; 0 copies its own into the
//   result, then receive-reduces 1's and 2's partials on its right (rank order 0,1,2,3).
//
// Cost (one port, no overlap, unsegmented; tree_estimate.h prices any tree exactly):
//   bcast: a child's message starts when its parent has the data and has served the children
//   before it: bcast_slots·(α + nβ) (binomial: ceil(log2 p)(α + nβ)).
//   reduce: every inner rank (and the root) first copies its contribution (n·copy), then
//   t = max(t, C(child)) + α + nβ + nγ per child in order.
// Restrictions: segments >= 1. For a non-commutative operator, every subtree must be a
//   consecutive rank range and each child's range adjacent to what its parent has combined
//   so far (children met outward); the verifier rejects a tree that breaks rank order.
// When to use: the default for a registry tree algorithm (binomial, binary, k-nomial, flat,
//   chain; and the building blocks of compositions such as allreduce/reduce_then_bcast).
//   Segmented bcast is the textbook pipelined tree. For a segmented reduce under a model
//   without overlap use emit_pipelined_reduce (pipelined_reduce.h), which orders segments so
//   each stage costs one message, not two; for the optimal ordered trees of Träff's
//   Theorem 4 use emit_ordered_bcast/_reduce (tree_ordered_bcast_reduce.h), which drops the
//   inner ranks' copy and chains each rank's operations in the planned order.
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, "Collective communication: theory,
//   practice, and experience", CCPE 19(13), 2007 (MST broadcast and reduce).
#pragma once

#include "optcoll/algorithms/patterns/tree_emit.h"
#include "optcoll/schedule/builder.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll::algorithms::patterns {

// One-to-all: the root holds `data` beforehand; afterwards every rank holds it at the same
// slice. Each edge carries it in `segments` pieces (pipelining; 1 = whole message).
void emit_tree_bcast(ScheduleBuilder& b, const TreeShape& tree, Slice data, int segments = 1);

// All-to-one: combines `contribution` (the same slice on every rank) up the tree into
// `result` on the root. Inner ranks accumulate in scratch; each child's partial is
// received with RecvReduce on the side its ranks lie (so rank order is kept whenever every
// subtree spans a contiguous rank range and children are met outward in rank order).
void emit_tree_reduce(ScheduleBuilder& b, const TreeShape& tree, Slice contribution, Slice result,
                      int segments = 1);

}  // namespace optcoll::algorithms::patterns
