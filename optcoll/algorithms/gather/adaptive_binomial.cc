// SPDX-License-Identifier: Apache-2.0
// gather/adaptive_binomial (also gatherv/) — gathers every rank's block to the root over Träff's
// problem-adaptive binomial tree (Proposition 1; the offline form of Träff 2018): aligned blocks of
// 2^t ranks merge pairwise; the block holding the root receives, otherwise the block whose sending
// finishes the merge earlier sends (the smaller block, ties upward). Copy first, children in
// round order. O(p).
//
//   p = 4, blocks 9,1,1,1, copy 0, root 0: round 0: 1→0, 2→3 (ties go up); round 1: [2,3]→0.
//
// Cost: at the root the tree chooses, ceil(log2 p)·alpha + beta·Σ_{q≠root} m_q + copy·m_root
//   (Prop. 1) — exact for p a power of two, no empty block, copy = beta. Otherwise it is
//   neither exact nor an upper bound (p = 3, alpha = copy = 0, blocks 1 4 5: 6 > 5; tested).
//   A fixed root can wait for larger blocks.
// Model: Träff's (one port, no overlap, copy = CostModel::copy, empty messages free); the
//   schedule chains each node's items in the model's order, so the simulator reproduces the
//   planner's Definition 2 time exactly (tests/algorithms/tree_dp_test.cc).
// Restrictions: none (any p >= 1, any root, empty blocks; no reduction, so no operator
//   constraints). The tree is planned for the model the builder receives (homogeneous part:
//   alpha, beta, copy; pair matrices are ignored by the planner).
// Reference: Träff, "Optimal trees for irregular gather and scatter collectives", IEEE TPDS
//   30(9), 2019; the math of docs/math/gather-scatter-trees.md.
#include "optcoll/algorithms/planners/gather_trees.h"
#include "optcoll/algorithms/registry.h"

namespace optcoll::algorithms {

Schedule build_gather_adaptive_binomial(const CollectiveSpec& spec, const Params& /*params*/,
                                        const CostModel& model) {
  return planners::build_ordered_tree_schedule(spec, model, planners::TreeKind::kAdaptiveBinomial,
                                               "adaptive_binomial");
}

// Estimate: planners::ordered_tree_estimate.
std::optional<Estimate> estimate_gather_adaptive_binomial(const CollectiveSpec& spec,
                                                          const Params& /*params*/,
                                                          const CostModel& model) {
  return planners::ordered_tree_estimate(spec, model, planners::TreeKind::kAdaptiveBinomial);
}

}  // namespace optcoll::algorithms
