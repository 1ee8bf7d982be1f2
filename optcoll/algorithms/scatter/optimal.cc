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
// Non-homogeneous models (CostModel pair_alpha/pair_beta): the tree comes from the
//   non-homogeneous DP instead (docs/math/gather-scatter-trees.md §3.3;
//   planners/nonhomogeneous_tree_dp.cc), where a message of M > 0 units costs alpha_st + beta_st·M
//   for the pair that sends it (parent s to child t), exactly as the simulator prices it; the plan
//   is optimal over the same ordered class and the simulated makespan equals it. Its cost is O(p^4)
//   to O(p^5) time (p = 200: 1.6 s, docs/performance.md), so keep pair models to a few hundred
//   ranks.
// Restrictions: none (any p >= 1, any root, empty blocks; no reduction, so no operator
//   constraints). The tree is planned for the model the builder receives (alpha, beta, copy,
//   and the pair matrices when it has them).
// Reference: Träff, "Optimal trees for irregular gather and scatter collectives", IEEE TPDS
//   30(9), 2019; the math of docs/math/gather-scatter-trees.md.
#include "optcoll/algorithms/planners/gather_trees.h"
#include "optcoll/algorithms/registry.h"

namespace optcoll::algorithms {

Schedule build_scatter_optimal(const CollectiveSpec& spec, const Params& /*params*/,
                               const CostModel& model) {
  return planners::build_ordered_tree_schedule(spec, model, planners::TreeKind::kOptimal,
                                               "optimal");
}

// Estimate: planners::ordered_tree_estimate.
std::optional<Estimate> estimate_scatter_optimal(const CollectiveSpec& spec,
                                                 const Params& /*params*/, const CostModel& model) {
  return planners::ordered_tree_estimate(spec, model, planners::TreeKind::kOptimal);
}

}  // namespace optcoll::algorithms
