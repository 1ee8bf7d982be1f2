// SPDX-License-Identifier: Apache-2.0
// scatter/optimal (also scatterv/optimal) — scatters the root's blocks to every rank over the
// optimal rank-ordered tree of Träff's dynamic program (Prop. 3, Fig. 6, Theorem 2; O(p^3) time,
// O(p^2) space): every subtree spans a contiguous rank range whose segment grows outward from its
// root.
//
//   p = 2000, Two blocks (m_0 = m_1999 = 10^6, others 0), alpha = 100, beta = copy = 1,
//   root 1000: 2000200 (root copies, then one message from each end; oblivious binomial
//   11001100, linear 2000200) — Träff's Table 1.
//
// Cost: the DP's optimum over ordered trees for this root (Definition 2), at least
//   beta·Σ_{q≠root} m_q + copy·m_root.
// Model: Träff's (one port, no overlap, copy = CostModel::copy, empty messages free); the
//   schedule chains each node's items in the model's order, so the simulator reproduces the
//   planner's Definition 2 time exactly (tests/algorithms/tree_dp_test.cc).
// Restrictions: none (any p >= 1, any root, empty blocks; no reduction, so no operator
//   constraints). The tree is planned for the model the builder receives (homogeneous part:
//   alpha, beta, copy; pair matrices are ignored by the planner).
// Reference: Träff, "Optimal trees for irregular gather and scatter collectives", IEEE TPDS
//   30(9), 2019; the math of ../shared/spec/gather-scatter-trees.md.
#include "optcoll/algorithms/planners/gather_trees.h"
#include "optcoll/algorithms/registry.h"

namespace optcoll::algorithms {

Schedule build_scatter_optimal(const CollectiveSpec& spec, const Params& /*params*/,
                               const CostModel& model) {
  return planners::build_ordered_tree_schedule(spec, model, planners::TreeKind::kOptimal,
                                               "optimal");
}

}  // namespace optcoll::algorithms
