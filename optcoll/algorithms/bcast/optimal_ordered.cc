// SPDX-License-Identifier: Apache-2.0
// bcast/optimal_ordered — broadcast over the optimal ordered tree of Träff's Theorem 4: the gather
// DP (Prop. 3, Fig. 6 / Fig. 5) with every subtree's message carrying the whole vector, so each
// edge costs alpha + n·beta (alpha_ts + n·beta_ts from parent t to child s under pair matrices).
// Every subtree spans a consecutive rank range; each node sends to its children one after the
// other, outermost range first (the gather DP's reception order reversed).
//
//   p = 5, root 2, alpha = beta = 1, n = 1 (each edge 2): 2 sends to 0 (the outermost range
//   [0..0]), then to 3 (range [3..4]; 3 passes on to 4), then to 1: done at 6 = ceil(log2 5)·2,
//   the one-port lower bound.
//
// Cost: the DP optimum over ordered trees (homogeneous: O(p^3) planning; with pair matrices
//   the non-homogeneous DP, O(p^4) to O(p^5)); at most ceil(log2 p)(α + nβ) (the binomial
//   halving tree is ordered for any root) and at least ceil(log2 p)(α + nβ) homogeneously,
//   so the homogeneous optimum is exactly the binomial time; with pair matrices it adapts to
//   the slow links. The simulated makespan equals the planned cost (each node's sends are
//   chained in the planned order).
// Measured (optcoll simulate bcast --count 100 --root p/2 --model M; M: pair_alpha uniform in
//   [1, 40], pair_beta in [1, 4], seed 1): p = 100: 993 (bcast/binomial 2274), planned in
//   0.3 s; p = 200: 1095 (binomial 2856), 5.3 s. Homogeneous (--abstract): p = 2000 plans in
//   1.8 s and takes ceil(log2 p)·(α + nβ) = 1111, as bcast/binomial.
// Tree class: the DP's (each node's uncovered range shrinks from its ends). Serving consecutive
//   child ranges in any other order is outside it and, under pair matrices, sometimes faster
//   (3 of 30 random instances with p <= 7 in tests/algorithms/ordered_bcast_reduce_test.cc);
//   homogeneously never (both reach the lower bound).
// Restrictions: none (any p >= 1, any root, n >= 0).
// Reference: Träff, "Optimal trees for irregular gather and scatter collectives", IEEE TPDS
//   30(9), 2019, Theorem 4; docs/math/gather-scatter-trees.md §3.6.
#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/planners/gather_trees.h"
#include "optcoll/algorithms/registry.h"

namespace optcoll::algorithms {

Schedule build_bcast_optimal_ordered(const CollectiveSpec& spec, const Params& /*params*/,
                                     const CostModel& model) {
  return planners::build_optimal_ordered_full_vector(spec, model);
}

// Estimate (homogeneous models, where the optimum over ordered trees is the one-port bound):
// ceil(log2 p)(α + nβ). Exact. Work: the O(p^3) DP that building runs.
std::optional<Estimate> estimate_bcast_optimal_ordered(const CollectiveSpec& spec,
                                                       const Params& /*params*/,
                                                       const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const double p = spec.nranks;
  return make_estimate(spec, static_cast<Time>(ceil_log2(spec.nranks)) * c->message(spec.count),
                       (p - 1) * spec.count, 2 * (p - 1) + p * p * p / 2048, true);
}

}  // namespace optcoll::algorithms
