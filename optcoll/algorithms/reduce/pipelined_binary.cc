// SPDX-License-Identifier: Apache-2.0
// reduce/pipelined_binary — reduce/binary's tree with the message cut into S segments:
// every inner rank combines its children's segment s while segment s+1 arrives.
//   Commutative: heap-ordered binary tree over virtual ranks (smaller child first).
//   Non-commutative: the in-order binary tree rooted at the root (rank-contiguous subtrees).
//
//   p = 3, root 0, S = 2:  2→0 s0, 1→0 s0, 2→0 s1, 1→0 s1 (the root's port: 4 slots)
//
// Cost (alpha-beta-gamma, one port, full duplex, no overlap, copy = 0), R = reduce/binary's
//   slot count, F = 2 (1 for p = 2), segments of ceil(n/S) or floor(n/S) elements:
//   (R − F)·(α + ceil(n/S)(β+γ)) + F·(S·α + n(β+γ))   (= (R − 2 + 2S)(α + n(β+γ)/S) if S | n).
//   segment=auto minimizes it under the builder's model; segment=<e>: S = ceil(n/e).
// Restrictions: segment "auto" or a positive integer; any p, any root.
// Reference: Pješivac-Grbović et al., Cluster Computing 10(2), 2007 (segmented binary
//            tree); Sanders, Speck, Träff, Parallel Computing 35(12), 2009 (in-order trees).

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/pipelined_reduce.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree_estimate.h"
#include "optcoll/algorithms/patterns/tree_families.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/algorithms/tree_params.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_reduce_pipelined_binary(const CollectiveSpec& spec, const Params& params,
                                       const CostModel& model) {
  ScheduleBuilder b(spec, "reduce/pipelined_binary");
  auto tree = spec.commutative ? patterns::heap_binary_tree(spec.nranks, spec.root,
                                                            patterns::ChildOrder::kSmallestFirst)
                               : patterns::inorder_binary_tree(spec.nranks, spec.root);
  const Count segments =
      pipelined_segments(params, link_cost(model, spec), patterns::reduce_slots(tree),
                         patterns::max_fanout(tree), spec.count, /*reduce=*/true);
  patterns::emit_pipelined_reduce(b, tree, input_of(b.layout(), spec.root),
                                  output_of(b.layout(), spec.root), static_cast<int>(segments),
                                  /*serialize_segments=*/!model.overlap);
  b.set_tree(std::move(tree));
  b.set_params(segment_param_text(spec.count, segments));
  return std::move(b).finish();
}

// Estimate: the inner ranks' copy of their contribution, then pipelined_tree_cost with the
// tree's reduce slots and fanout for the segments the builder picks.
std::optional<Estimate> estimate_reduce_pipelined_binary(const CollectiveSpec& spec,
                                                         const Params& params,
                                                         const CostModel& model) {
  const auto tree =
      spec.commutative
          ? patterns::heap_binary_tree(spec.nranks, spec.root, patterns::ChildOrder::kSmallestFirst)
          : patterns::inorder_binary_tree(spec.nranks, spec.root);
  return patterns::pipelined_reduce_estimate(spec, params, model, tree);
}

}  // namespace optcoll::algorithms
