// SPDX-License-Identifier: Apache-2.0
// reduce/knomial — k-nomial tree (radix k) reduction: every rank combines the partials of
// its subtrees, smallest first, and passes its partial to its parent. k = 2 is
// reduce/binomial.
//
//   p = 9, k = 3, root 0:  1→0 2→0, 4→3 5→3, 7→6 8→6 (two slots), then 3→0, 6→0: 4 slots
//
// Cost (alpha-beta-gamma, one port, no overlap): ceil(log_k p)·(k−1)·(α + nβ + nγ) + n·copy
//   for p a power of k, an upper bound otherwise (+ α + nβ for a non-commutative operator
//   with root ≠ 0: see below).
// Restrictions: radix an integer in [2, 2^20]. Commutative operators: the tree is relabelled
//   so the root is virtual 0. Non-commutative: rooted at rank 0, where every subtree is a
//   contiguous rank range met in increasing rank order, then rank 0 sends the result to
//   the root.
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007 (MST reduce); k-nomial
//            trees as in Bruck et al., IEEE TPDS 8(11), 1997.

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree_bcast_reduce.h"
#include "optcoll/algorithms/patterns/tree_estimate.h"
#include "optcoll/algorithms/patterns/tree_families.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_reduce_knomial(const CollectiveSpec& spec, const Params& params,
                              const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "reduce/knomial");
  const Layout& layout = b.layout();
  const Rank root = spec.root;
  const auto radix = static_cast<Rank>(params.get_int("radix"));
  const Slice contribution = input_of(layout, root);
  if (spec.commutative || root == 0) {
    auto tree =
        patterns::knomial_tree(spec.nranks, root, radix, patterns::ChildOrder::kSmallestFirst);
    patterns::emit_tree_reduce(b, tree, contribution, output_of(layout, root));
    b.set_tree(std::move(tree));
  } else {
    const auto tree =
        patterns::knomial_tree(spec.nranks, 0, radix, patterns::ChildOrder::kSmallestFirst);
    const Slice partial = b.scratch(0, layout.total());
    patterns::emit_tree_reduce(b, tree, contribution, partial);
    b.transfer(0, root, partial, output_of(layout, root));
  }
  b.set_params("radix=" + std::to_string(radix));
  return std::move(b).finish();
}

// Estimate: patterns::tree_reduce_time over the tree (rooted at 0 for a non-commutative
// operator and another root, plus the result's message to the root). Exact.
std::optional<Estimate> estimate_reduce_knomial(const CollectiveSpec& spec, const Params& params,
                                                const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const auto radix = static_cast<Rank>(params.get_int("radix"));
  const bool forward = !spec.commutative && spec.root != 0;
  const Rank root = forward ? 0 : spec.root;
  const auto tree =
      patterns::knomial_tree(spec.nranks, root, radix, patterns::ChildOrder::kSmallestFirst);
  const Time time =
      patterns::tree_reduce_time(tree, *c, spec.count) + (forward ? c->message(spec.count) : 0);
  const double sends = spec.nranks - 1 + (forward ? 1 : 0);
  return make_estimate(spec, time, sends * spec.count, 2 * sends + spec.nranks, true,
                       "radix=" + std::to_string(radix));
}

}  // namespace optcoll::algorithms
