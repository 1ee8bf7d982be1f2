// SPDX-License-Identifier: Apache-2.0
// File: turns a ReductionTree (greedy_reduction.h) into reduce steps on a ScheduleBuilder,
// timed exactly as the planner predicts under CostModel{.ports = 1, .duplex = kHalf,
// .overlap = true}: every child's element lands in its own scratch slot (a Recv), and is then
// reduced into the accumulator (a Reduce), so receiving overlaps reducing; receives follow the
// tree's order (FIFO by arrival). Machines are labelled with ranks so that every subtree is a
// contiguous rank range met in rank order (non-commutative operators are reduced in order).
#pragma once

#include "optcoll/algorithms/planners/greedy_reduction.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms::planners {

// d = the transfer time of `count` elements, c = the reduction time of `count` elements
// (heterogeneous models: the 0 -> 1 link). Without overlap the paper's sub-case applies:
// d' = 0, c' = d + c.
ReductionCosts reduction_costs(const CollectiveSpec& spec, Count count, const CostModel& model);

// Reduces `contribution` (the same slice on every rank) along `tree` (tree.parent.size() must
// be the number of ranks) into `result` on `root`. Returns true when the schedule needs one
// more transfer than tree.length: the operator is not commutative and no labelling puts the
// sink at `root` in rank order, so the tree is rooted at rank 0 and the result forwarded.
// The tree reduce/greedy_overlap and allreduce/greedy_overlap use for p ranks: Algorithm 3
// with K = reducers or K = transfers (not both), Algorithm 1 otherwise. For a transfer limit
// Algorithm 3 stands in for Algorithm 2, whose fixed start times a schedule cannot express:
// K receivers with one port each never run more than K transfers at once, and Thm 10 makes
// it optimal under the transfer limit when d >= c (when d < c it may be longer).
ReductionTree plan_greedy_tree(Rank nranks, const ReductionCosts& costs, std::int64_t transfers,
                               std::int64_t reducers);

// With segments > 1 the vector is cut into that many nearly equal pieces that follow each
// other through the tree (every machine receives segment after segment, children in the
// tree's order); the tree should then be planned for one segment's costs.
bool emit_greedy_reduce(ScheduleBuilder& b, const ReductionTree& tree, Slice contribution,
                        Slice result, Rank root, int segments = 1);
// Whether emit_greedy_reduce sends the result from the sink to `root` in a message of its
// own (a non-commutative operator whose tree cannot be labelled so the root is the sink in
// rank order): what the estimates add.
bool greedy_reduce_forwards(const ReductionTree& tree, Rank root, bool commutative);

// The segment count reduce/greedy_segmented uses when given "auto": the S in 1..min(count,
// 256) that minimizes the estimate L_S + (S - 1)·B_S, where L_S is Algorithm 1's length for
// one segment's costs (d_S = α + β·count/S, c_S = γ·count/S) and B_S the busiest machine's
// time per segment: max over machines of its port time ((children + 1 send)·d_S) and its
// reduction time (children·c_S). Without overlap it is 1 (the paper's no-overlap sub-case).
int choose_segments(const CollectiveSpec& spec, Count count, const CostModel& model);

}  // namespace optcoll::algorithms::planners
