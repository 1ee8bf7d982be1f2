// SPDX-License-Identifier: Apache-2.0
// reduce/binomial — binomial tree (MST) reduction: every rank combines the partial results
// of its subtrees, smallest first, and passes its own partial to its parent.
//
//   p = 8, root 0:  step 1: 1→0 3→2 5→4 7→6   step 2: 2→0 6→4   step 3: 4→0
//
// Cost (alpha-beta-gamma, one port, no overlap): ceil(log2 p)·(α + nβ + nγ) + n·copy
//   (+ α + nβ for a non-commutative operator with root ≠ 0: see below)
// Restrictions: none. For commutative operators the tree is relabelled so that the root is
//   virtual rank 0; for non-commutative ones it is rooted at rank 0, where every subtree is
//   a contiguous rank range combined in rank order, and rank 0 sends the result to the root.
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007 (MST reduce); the
//            non-commutative variant follows MPICH's MPIR_Reduce_binomial.

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree.h"
#include "optcoll/algorithms/patterns/tree_bcast_reduce.h"
#include "optcoll/algorithms/patterns/tree_estimate.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_reduce_binomial(const CollectiveSpec& spec, const Params& /*params*/,
                               const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "reduce/binomial");
  const Layout& layout = b.layout();
  const Rank root = spec.root;
  const Slice contribution = input_of(layout, root);
  if (spec.commutative || root == 0) {
    auto tree = patterns::binomial_tree(spec.nranks, root, patterns::ChildOrder::kSmallestFirst);
    patterns::emit_tree_reduce(b, tree, contribution, output_of(layout, root));
    b.set_tree(std::move(tree));
  } else {
    const auto tree = patterns::binomial_tree(spec.nranks, 0, patterns::ChildOrder::kSmallestFirst);
    const Slice partial = b.scratch(0, layout.total());
    patterns::emit_tree_reduce(b, tree, contribution, partial);
    b.transfer(0, root, partial, output_of(layout, root));
  }
  return std::move(b).finish();
}

// Estimate: patterns::tree_reduce_time over the tree (rooted at 0 for a non-commutative
// operator and another root, plus the result's message to the root). Exact.
std::optional<Estimate> estimate_reduce_binomial(const CollectiveSpec& spec,
                                                 const Params& /*params*/, const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const bool forward = !spec.commutative && spec.root != 0;
  const Rank root = forward ? 0 : spec.root;
  const auto tree =
      patterns::binomial_tree(spec.nranks, root, patterns::ChildOrder::kSmallestFirst);
  const Time time =
      patterns::tree_reduce_time(tree, *c, spec.count) + (forward ? c->message(spec.count) : 0);
  const double sends = spec.nranks - 1 + (forward ? 1 : 0);
  return make_estimate(spec, time, sends * spec.count, 2 * sends + spec.nranks, true);
}

}  // namespace optcoll::algorithms
