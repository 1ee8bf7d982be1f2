// SPDX-License-Identifier: Apache-2.0
// File: the planner of gatherv/two_block and scatterv/two_block (Träff 2019, Lemma 2 and
// TWO_Gatherv/TWO_Scatterv, docs/math/gather-scatter-trees.md §7): the ranks are split into a
// large-block and a small-block class, each class is gathered by its own tree concurrently,
// and the class that does not hold the root reaches the root in ONE message from its sub-root.
// The trees, the split and the costs are described in two_block.cc.
#pragma once

#include <vector>

#include "optcoll/algorithms/planners/gather_trees.h"

namespace optcoll::algorithms::planners {

struct TwoBlockPlan {
  // One tree over all ranks (global ranks): the root's class's tree, with the other class's
  // sub-root as one more child of the root; tree.cost is positioned_completion_time().
  OrderedTree tree;
  // Scratch order for the positioned emitters: the root's class in rank order, then the other
  // class in rank order (each subtree is a contiguous run of positions).
  std::vector<Rank> positions;
  // large[r]: r's block is at least `threshold` (all true with one class).
  std::vector<bool> large;
  Time threshold = 0;
  Rank sub_root = kNoRank;  // the other class's root, kNoRank with one class
};

// Definition 2 for a tree over `positions` emitted by emit_positioned_gather/_scatter: its
// completion_time() (each segment reaches the root in one message straight into place, a
// RecvSlices where it forms several runs of the root's buffer, priced as any message of its
// size; scatter: a SendSlices, the same total by time reversal). `positions` is checked for
// size only: where the blocks land does not change the time.
Time positioned_completion_time(const TreeShape& shape, const std::vector<int>& copy_slot,
                                const std::vector<Rank>& positions, const GatherProblem& problem);

// The two-block tree for `root`: the threshold among the distinct block sizes (the smallest:
// one class) that minimizes positioned_completion_time with adaptive binomial class trees
// (ties: the smaller threshold, then the earlier place of the sub-root among the root's
// items); then the optimal DP's class trees for that threshold and for one class replace it
// if strictly cheaper.
TwoBlockPlan two_block_plan(const GatherProblem& problem, Rank root);

// The joined plan for one threshold (large class: blocks >= threshold; the smallest size
// gives one class) with class trees of `kind` (kAdaptiveBinomial or kOptimal): the root's
// class's tree, the other class's tree, and its sub-root at the cheapest place among the
// root's items. two_block_plan's building block, public for tests and experiments.
TwoBlockPlan two_block_join(const GatherProblem& problem, Rank root, Time threshold, TreeKind kind);

// The estimate (estimate.h) of gatherv/two_block and scatterv/two_block: two_block_plan's
// Definition 2 time (what the schedule takes, so exact) up to kDpInEstimate ranks; above,
// without running the planner, the cheapest linear or binomial tree's time, an upper
// estimate (the plan is never slower than the optimal tree, itself never slower than those).
std::optional<Estimate> two_block_estimate(const CollectiveSpec& spec, const CostModel& model);

// The gatherv/scatterv schedule over two_block_plan (records the tree).
Schedule build_two_block_schedule(const CollectiveSpec& spec, const CostModel& model);

}  // namespace optcoll::algorithms::planners
