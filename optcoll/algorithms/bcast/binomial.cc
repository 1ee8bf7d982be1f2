// SPDX-License-Identifier: Apache-2.0
// bcast/binomial — the root sends the whole message to the roots of subtrees of halving
// size (binomial tree, MST); every rank forwards it to its own subtrees.
//
//   p = 8, root 0 (virtual ranks):  step 1: 0→4   step 2: 0→2 4→6   step 3: 0→1 2→3 4→5 6→7
//
// Cost (alpha-beta, one port): ceil(log2 p)·(α + nβ)
// Restrictions: none (any p and root: ranks are relabelled so that the root is virtual 0).
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, "Collective communication: theory,
//            practice, and experience", CCPE 19(13), 2007 (minimum-spanning-tree broadcast).

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree.h"
#include "optcoll/algorithms/patterns/tree_bcast_reduce.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_bcast_binomial(const CollectiveSpec& spec, const Params& /*params*/,
                              const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "bcast/binomial");
  auto tree = patterns::binomial_tree(spec.nranks, spec.root, patterns::ChildOrder::kLargestFirst);
  patterns::emit_tree_bcast(b, tree, output_of(b.layout(), spec.root));
  b.set_tree(std::move(tree));
  return std::move(b).finish();
}

// Estimate: ceil(log2 p)(α + nβ). Exact.
std::optional<Estimate> estimate_bcast_binomial(const CollectiveSpec& spec,
                                                const Params& /*params*/, const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const double sends = spec.nranks - 1;
  return make_estimate(spec, static_cast<Time>(ceil_log2(spec.nranks)) * c->message(spec.count),
                       sends * spec.count, 2 * sends, true);
}

}  // namespace optcoll::algorithms
