// SPDX-License-Identifier: Apache-2.0
// reduce/binary — binary tree reduction: every rank combines the partials of its (at most
// two) children with its own contribution and passes the result to its parent.
//   Commutative operator: the heap-ordered complete binary tree of bcast/binary over
//     virtual ranks (children 2v+1, 2v+2; the smaller subtree 2v+2 is received first).
//   Non-commutative: the in-order binary tree rooted at the root (patterns::
//     inorder_binary_tree): every subtree is a contiguous rank range, combined as
//     left ⊕ own ⊕ right, so rank order holds for any root without a final forward.
//
//   p = 7, root 3, non-commutative:  t=1: 0→1 2→1 (one port: 2 slots) 4→5 6→5 | then 1→3,
//                                    5→3: 4 slots;  result = (x0 x1 x2) x3 (x4 x5 x6)
//
// Cost (alpha-beta-gamma, one port, no overlap): R·(α + nβ + nγ) + n·copy, where R is the
//   tree's one-port slot count: fold over children in order t = max(t, R(child)) + 1
//   (patterns::reduce_slots). Commutative (heap tree): R = 2 for p = 3, 4; 4 for p = 7;
//   about 2·log2 p.
// Restrictions: none.
// Reference: Pješivac-Grbović et al., Cluster Computing 10(2), 2007 (binary tree reduce);
//            in-order trees for non-commutative operators as in Sanders, Speck, Träff,
//            Parallel Computing 35(12), 2009.

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree_bcast_reduce.h"
#include "optcoll/algorithms/patterns/tree_estimate.h"
#include "optcoll/algorithms/patterns/tree_families.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_reduce_binary(const CollectiveSpec& spec, const Params& /*params*/,
                             const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "reduce/binary");
  auto tree = spec.commutative ? patterns::heap_binary_tree(spec.nranks, spec.root,
                                                            patterns::ChildOrder::kSmallestFirst)
                               : patterns::inorder_binary_tree(spec.nranks, spec.root);
  patterns::emit_tree_reduce(b, tree, input_of(b.layout(), spec.root),
                             output_of(b.layout(), spec.root));
  b.set_tree(std::move(tree));
  return std::move(b).finish();
}

// Estimate: patterns::tree_reduce_time over the builder's tree. Exact.
std::optional<Estimate> estimate_reduce_binary(const CollectiveSpec& spec, const Params& /*params*/,
                                               const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const auto tree =
      spec.commutative
          ? patterns::heap_binary_tree(spec.nranks, spec.root, patterns::ChildOrder::kSmallestFirst)
          : patterns::inorder_binary_tree(spec.nranks, spec.root);
  const double sends = spec.nranks - 1;
  return make_estimate(spec, patterns::tree_reduce_time(tree, *c, spec.count), sends * spec.count,
                       2 * sends + spec.nranks, true);
}

}  // namespace optcoll::algorithms
