// SPDX-License-Identifier: Apache-2.0
// scatter/binary_optimal (also scatterv/) — scatters the root's blocks to every rank over the
// optimal strictly rank-ordered binary tree (Träff's Fig. 7, Theorem 3, O(p^3)): a node receives
// its left child(ren), copies, then receives its right child(ren), in rank order.
//
//   p = 3, root 1: [left 0, copy, right 2]: max(copy·m_1 + c(m_0), 0) + c(m_2).
//
// Cost: the binary DP's optimum for this root (Definition 2); >= the optimal tree's.
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

Schedule build_scatter_binary_optimal(const CollectiveSpec& spec, const Params& /*params*/,
                                      const CostModel& model) {
  return planners::build_ordered_tree_schedule(spec, model, planners::TreeKind::kBinaryOptimal,
                                               "binary_optimal");
}

// Estimate: planners::ordered_tree_estimate.
std::optional<Estimate> estimate_scatter_binary_optimal(const CollectiveSpec& spec,
                                                        const Params& /*params*/,
                                                        const CostModel& model) {
  return planners::ordered_tree_estimate(spec, model, planners::TreeKind::kBinaryOptimal);
}

}  // namespace optcoll::algorithms
