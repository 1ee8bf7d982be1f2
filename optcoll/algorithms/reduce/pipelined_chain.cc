// SPDX-License-Identifier: Apache-2.0
// reduce/pipelined_chain — the message is cut into S segments; partial results flow along a
// chain towards the root, every rank combining segment s while segment s+1 arrives.
//   Commutative operator: one chain root+p−1 → ... → root+1 → root (mod p).
//   Non-commutative: two chains into the root, 0 → ... → root−1 and p−1 → ... → root+1
//     (patterns::split_chain): every partial is a contiguous rank range.
//
//   p = 4, S = 2, commutative, root 0:  3→2 s0 | 3→2 s1, 2→1 s0 | 2→1 s1, 1→0 s0 | 1→0 s1
//
// Cost (alpha-beta-gamma, one port, full duplex, no overlap, copy = 0), segments of
//   ceil(n/S) or floor(n/S) elements, the larger first; commutative:
//   (p−2)·(α + ceil(n/S)(β+γ)) + S·α + n(β+γ)   (p ≥ 2; = (p−2+S)(α + n(β+γ)/S) if S | n).
//   Non-commutative with 0 < root < p−1: the root takes two messages per segment (upper
//   bound: (R−2)·(α + ceil(n/S)(β+γ)) + 2(S·α + n(β+γ)), R = max(root, p−1−root) + 1).
//   segment=auto minimizes the formula under the builder's model; segment=<e>: S = ceil(n/e).
// Restrictions: segment "auto" or a positive integer; any p, any root.
// Reference: Pješivac-Grbović et al., Cluster Computing 10(2), 2007 (segmented chain).

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/pipelined_reduce.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree_estimate.h"
#include "optcoll/algorithms/patterns/tree_families.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/algorithms/tree_params.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_reduce_pipelined_chain(const CollectiveSpec& spec, const Params& params,
                                      const CostModel& model) {
  ScheduleBuilder b(spec, "reduce/pipelined_chain");
  auto tree = spec.commutative ? patterns::virtual_chain(spec.nranks, spec.root)
                               : patterns::split_chain(spec.nranks, spec.root);
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
std::optional<Estimate> estimate_reduce_pipelined_chain(const CollectiveSpec& spec,
                                                        const Params& params,
                                                        const CostModel& model) {
  const auto tree = spec.commutative ? patterns::virtual_chain(spec.nranks, spec.root)
                                     : patterns::split_chain(spec.nranks, spec.root);
  return patterns::pipelined_reduce_estimate(spec, params, model, tree);
}

}  // namespace optcoll::algorithms
