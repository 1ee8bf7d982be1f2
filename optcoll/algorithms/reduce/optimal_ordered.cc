// SPDX-License-Identifier: Apache-2.0
// reduce/optimal_ordered — reduction over the optimal ordered tree of Träff's Theorem 4: the
// gather DP (Prop. 3, Fig. 6 / Fig. 5) with every subtree's message carrying the whole vector,
// so each edge costs alpha + n·beta + n·gamma (the receive and the reduction of the vector;
// alpha_st + n·beta_st + n·gamma from child s to parent t under pair matrices). Every subtree
// spans a consecutive rank range and each node's range grows outward child by child, so the
// operator is applied in rank order: correct for non-commutative operators.
//
//   p = 4, root 0, alpha = 10, beta = gamma = 1, n = 5 (edge 20): 1 -> 0 while 3 -> 2, then
//   2 -> 0: 40 (the binomial tree; a chain would take 60, a star 60).
//
// Cost: the DP optimum over ordered trees (homogeneous: O(p^3) planning; with pair matrices
//   the non-homogeneous DP, O(p^4) to O(p^5)); homogeneously ceil(log2 p)(α + nβ + nγ) for
//   p >= 2 (as bcast/optimal_ordered), n·copy for p = 1. Inner nodes do not copy their
//   contribution: the first child's partial is received into the accumulator and the own
//   contribution reduced into it (the same α + nβ + nγ as a receive-reduce), which is never
//   slower than copying first. The simulated makespan equals the planned cost.
// Measured (optcoll simulate reduce --count 100 --root p/2 --model M, gamma = 1; M as in
//   bcast/optimal_ordered): p = 100: 1702 (reduce/binomial 2914), planned in 0.3 s; p = 200:
//   1893 (binomial 3817), 5.4 s.
// Restrictions: none (any p >= 1, any root, commutative or not).
// Reference: Träff, "Optimal trees for irregular gather and scatter collectives", IEEE TPDS
//   30(9), 2019, Theorem 4; docs/math/gather-scatter-trees.md §3.6.
#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/planners/gather_trees.h"
#include "optcoll/algorithms/registry.h"

namespace optcoll::algorithms {

Schedule build_reduce_optimal_ordered(const CollectiveSpec& spec, const Params& /*params*/,
                                      const CostModel& model) {
  return planners::build_optimal_ordered_full_vector(spec, model);
}

// Estimate (homogeneous models): ceil(log2 p)(α + nβ + nγ) for p >= 2 (no local copy), the
// root's copy for p = 1. Exact. Work: the O(p^3) DP that building runs.
std::optional<Estimate> estimate_reduce_optimal_ordered(const CollectiveSpec& spec,
                                                        const Params& /*params*/,
                                                        const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const double p = spec.nranks;
  const Time time = spec.nranks == 1
                        ? c->copy_of(spec.count)
                        : static_cast<Time>(ceil_log2(spec.nranks)) * c->message_reduce(spec.count);
  return make_estimate(spec, time, (p - 1) * spec.count, 2 * (p - 1) + p * p * p / 2048, true);
}

}  // namespace optcoll::algorithms
