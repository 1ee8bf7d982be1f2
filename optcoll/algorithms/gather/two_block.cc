// SPDX-License-Identifier: Apache-2.0
// gatherv/two_block — Träff's TWO_Gatherv (Lemma 2): the ranks are split into a large-block and
// a small-block class; both classes gather concurrently over Träff's adaptive binomial tree
// (Prop. 1) over their members in rank order, and the class without the root reaches the root
// in ONE message from its sub-root, placed where it costs least among the root's items. The
// split is the threshold among the distinct block sizes (or none: one tree) that minimizes the
// predicted time, so any counts work, zeros included (planners/two_block.cc).
//
//   Lemma 2: p = 7, alpha = 10, beta = copy = 1, b_S = 3 everywhere but b_L = 200 at the root
//   j = 6: the root copies its 200 while ranks 0..5 gather (3 rounds, done at 30 + 15 + 3 =
//   48), then receives their 18 elements in one message: 200 + 10 + 18 = 228, the non-ordered
//   optimum; the best ordered tree (gatherv/optimal) needs 238 (it must receive first, then
//   copy). At j = 3 the small blocks are two runs of the root's buffer: one message into
//   scratch plus 18 copied into place gives 246 (gatherv/optimal: 238); see Cost.
//
// Cost: Träff's Definition 2 over the joined tree, plus copy·|T_c| at the root for every
//   segment whose blocks are not one slice of the root's buffer (received into scratch and
//   copied into place). Lower bound beta·Σ_{q≠root} m_q + copy·m_root. Lemma 2's instance
//   (one b_L at the root j, ceil(log2(p-1))alpha + beta(p-2)b_S + copy·b_S <= copy·b_L):
//   exactly copy·b_L + alpha + beta(p-1)b_S when j = 0 or j = p-1 (tested; equal to the exact
//   non-ordered optimum), plus copy·(p-1)b_S otherwise.
// Against gatherv/optimal (predicted = simulated, tests/algorithms/two_block_test.cc,
//   TwoBlockTest.ComparedWithOptimal): see the table in that test's output; neither wins
//   always (the optimal DP is optimal only over ordered trees; two_block's class trees are
//   binomial, not optimal).
// Model: Träff's (one port, no overlap, copy = CostModel::copy, empty messages free); each
//   node's items are chained in the model's order, so the simulated makespan equals the
//   planned cost exactly (tested for copy = 0 and copy = beta, and under pair matrices, where
//   the trees are planned with alpha and beta but the cost is evaluated with the matrices).
// Restrictions: none (any p >= 1, any root, empty blocks).
// Reference: Träff, "Optimal trees for irregular gather and scatter collectives", IEEE TPDS
//   30(9), 2019, Lemma 2 and TWO_Gatherv; ../shared/spec/gather-scatter-trees.md §7.
#include "optcoll/algorithms/planners/two_block.h"
#include "optcoll/algorithms/registry.h"

namespace optcoll::algorithms {

Schedule build_gatherv_two_block(const CollectiveSpec& spec, const Params& /*params*/,
                                 const CostModel& model) {
  return planners::build_two_block_schedule(spec, model);
}

}  // namespace optcoll::algorithms
