// SPDX-License-Identifier: Apache-2.0
// gatherv/two_block — Träff's TWO_Gatherv (Lemma 2): the ranks are split into a large-block and
// a small-block class; both classes gather concurrently over their members in rank order, and
// the class without the root reaches the root in ONE message from its sub-root, placed where it
// costs least among the root's items. The split is the threshold among the distinct block sizes
// (or none: one tree) that minimizes the predicted time, searched with adaptive binomial class
// trees; the optimal DP's class trees are then tried for that split and for one class, and the
// cheapest plan is kept (planners/two_block.cc). Any counts work, zeros included.
//
//   Lemma 2: p = 7, alpha = 10, beta = copy = 1, b_S = 3 everywhere but b_L = 200 at the root
//   j = 6: the root copies its 200 while ranks 0..5 gather (3 rounds, done at 30 + 15 + 3 =
//   48), then receives their 18 elements in one message: 200 + 10 + 18 = 228, the exact
//   non-ordered optimum; the best ordered tree (gatherv/optimal) needs 238 (the root is last
//   in its range: it must receive first, then copy). At j = 3 the small blocks are two runs of
//   the root's buffer (ranks 0-2 and 4-6): the root receives the one message straight into
//   both (a RecvSlices, TWO_Gatherv's derived datatype), 228 again. At p = 2000 (b_S = 10, b_L =
//   200000 at rank 1999, alpha = 100): 220090 = copy·b_L + alpha + 1999·10; gatherv/optimal 220190,
//   gatherv/adaptive_binomial 220890 (optcoll simulate gatherv --counts @file --root 1999
//   --abstract --alpha 100 --copy 1).
//
// Cost: Träff's Definition 2 over the joined tree: a segment whose blocks are not one slice of
//   the root's buffer is one message received over the runs it forms there (RecvSlices),
//   priced as any message of its size; homogeneously never above gatherv/optimal (one class
//   with the DP's tree is a candidate). Lower bound beta·Σ_{q≠root} m_q + copy·m_root.
//   Lemma 2's instance (one b_L at the root j, ceil(log2(p-1))alpha + beta(p-2)b_S +
//   copy·b_S <= copy·b_L): exactly copy·b_L + alpha + beta(p-1)b_S wherever j is (tested;
//   equal to the exact non-ordered optimum).
// Against gatherv/optimal (simulated; tests/algorithms/two_block_test.cc ComparedWithOptimal;
//   p = 200, b = 100, beta = 1; "two classes" = the join at the large blocks' threshold):
//     Spikes  alpha 100, copy 0, root 100 (a spike): two classes 22855, optimal 22837
//     Spikes  alpha 1000, copy 0, root 100:          two classes 29155, optimal 29161 (wins)
//     Spikes  alpha 1000, copy 1, root 100:          two classes 29655, optimal 29657 (wins)
//     Spikes  alpha 100, copy 0/1, root 0 (small):   45200 / 45700 vs 23355 / 23457
//     Skewed  alpha 100, copy 0, root 0 (large):     16595 vs 16495
//     Skewed  alpha 100, copy 0, root 100 (small):   36400 vs 21194
//   The two-class structure pays off when the root holds a large block and the small ones
//   can be gathered behind its copy (Lemma 2); with the root in the small class the large
//   blocks travel twice. The plan then falls back to one tree (two_block = optimal in every
//   other row of the table).
// Model: Träff's (one port, no overlap, copy = CostModel::copy, empty messages free); each
//   node's items are chained in the model's order, so the simulated makespan equals the
//   planned cost exactly (tested for copy = 0, copy = beta and in between, both duplexes, and
//   under pair matrices, where the trees are planned with alpha and beta but the cost is
//   evaluated with the matrices).
// Restrictions: none (any p >= 1, any root, empty blocks).
// Reference: Träff, "Optimal trees for irregular gather and scatter collectives", IEEE TPDS
//   30(9), 2019, Lemma 2 and TWO_Gatherv; docs/math/gather-scatter-trees.md §7.
#include "optcoll/algorithms/planners/two_block.h"

#include "optcoll/algorithms/registry.h"

namespace optcoll::algorithms {

Schedule build_gatherv_two_block(const CollectiveSpec& spec, const Params& /*params*/,
                                 const CostModel& model) {
  return planners::build_two_block_schedule(spec, model);
}

// Estimate: the planner's Definition 2 time (exact) up to planners::kDpInEstimate ranks;
// above, the cheapest linear or binomial tree's, which the two-block plan never exceeds
// (its one-class split with the optimal DP's tree is one of its candidates).
std::optional<Estimate> estimate_gatherv_two_block(const CollectiveSpec& spec,
                                                   const Params& /*params*/,
                                                   const CostModel& model) {
  return planners::two_block_estimate(spec, model);
}

}  // namespace optcoll::algorithms
