// SPDX-License-Identifier: Apache-2.0
// gather/oblivious_binomial (also gatherv/) — gathers every rank's block to the root over the
// paper's "oblivious" tree: the standard rank-ordered binomial tree (blocks [2l·2^t, (2l+1)·2^t)
// merge; the block holding the root receives, otherwise the upper block's root). Unlike
// gatherv/binomial, which relabels ranks so the root is 0, every subtree here is a contiguous range
// of real ranks.
//
//   p = 4, root 0: round 0: 0←1, 3←2; round 1: 0←3 (segment [2,3]).
//
// Cost: Definition 2 over this tree; regular blocks m, p a power of two, copy = 0:
//   log2(p)·alpha + (p-1)·m·beta.
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

Schedule build_gather_oblivious_binomial(const CollectiveSpec& spec, const Params& /*params*/,
                                         const CostModel& model) {
  return planners::build_ordered_tree_schedule(spec, model, planners::TreeKind::kObliviousBinomial,
                                               "oblivious_binomial");
}

// Estimate: planners::ordered_tree_estimate.
std::optional<Estimate> estimate_gather_oblivious_binomial(const CollectiveSpec& spec,
                                                           const Params& /*params*/,
                                                           const CostModel& model) {
  return planners::ordered_tree_estimate(spec, model, planners::TreeKind::kObliviousBinomial);
}

}  // namespace optcoll::algorithms
