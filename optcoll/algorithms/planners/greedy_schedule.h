// SPDX-License-Identifier: Apache-2.0
// File: turns a ReductionTree (greedy_reduction.h) into reduce steps on a ScheduleBuilder,
// timed exactly as the planner predicts under CostModel{.ports = 1, .duplex = kHalf,
// .overlap = true}: every child's element lands in its own scratch slot (a Recv), and is then
// reduced into the accumulator (a Reduce), so receiving overlaps reducing; receives follow the
// tree's order (FIFO by arrival). A tree with fixed start times (Algorithm 2's send_start)
// gives each send that release time (Op::not_before). Machines are labelled with ranks so
// that every subtree is a contiguous rank range met in rank order (non-commutative operators
// are reduced in order).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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
// The tree for p ranks: Algorithm 2 (greedy_transfers.h, fixed start times) with K =
// transfers, Algorithm 3 with K = reducers, Algorithm 1 when neither is set. Both set:
// Error(kInvalidArgument).
ReductionTree plan_greedy_tree(Rank nranks, const ReductionCosts& costs, std::int64_t transfers,
                               std::int64_t reducers);

// What reduce/greedy_overlap and allreduce/greedy_overlap run: the tree of plan_greedy_tree
// for the model's costs (reduction_costs), which of Canon & Antoniu's algorithms built it,
// and the parameters as they record them, "transfers=K,reducers=R,greedy=A".
struct GreedyOverlapTree {
  ReductionTree tree;
  int algorithm = 1;  // 1, 2 or 3
  std::string params;
};
// `greedy` is their parameter of that name: "auto", or the algorithm the limits call for
// (anything else: Error(kInvalidArgument), as their why_not says). transfers = K without
// model.overlap: Error(kNotApplicable) naming the problem (Algorithm 2's transfer limit needs
// transfers that take time; the no-overlap reduction d' = 0 removes it), never another tree.
GreedyOverlapTree plan_greedy_overlap(const CollectiveSpec& spec, const CostModel& model,
                                      std::int64_t transfers, std::int64_t reducers,
                                      std::string_view greedy);
// The algorithm (1, 2, 3) that transfers = K, reducers = K or neither calls for, and why a
// given `greedy` parameter does not fit them (nullopt: it fits). For the why_not of both.
int greedy_algorithm_for(std::int64_t transfers, std::int64_t reducers);
std::optional<std::string> greedy_param_mismatch(std::int64_t transfers, std::int64_t reducers,
                                                 std::string_view greedy);

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
