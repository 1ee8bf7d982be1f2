// SPDX-License-Identifier: Apache-2.0
// allreduce/reduce_then_bcast — binomial reduce to rank 0, then binomial broadcast.
//
//   p = 4:  reduce 1→0, 3→2, 2→0;  bcast 0→2, 0→1, 2→3
//
// Cost (alpha-beta-gamma, one port, no overlap, copy = 0): 2·ceil(log2 p)·α
//   + ceil(log2 p)·n(2β + γ)   (Chan et al.'s MST allreduce)
// Restrictions: none (the reduction tree is rooted at rank 0, where every subtree is a
//   contiguous rank range combined in rank order).
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007.

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree.h"
#include "optcoll/algorithms/patterns/tree_bcast_reduce.h"
#include "optcoll/algorithms/patterns/tree_estimate.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_allreduce_reduce_then_bcast(const CollectiveSpec& spec, const Params& /*params*/,
                                           const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "allreduce/reduce_then_bcast");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  patterns::emit_tree_reduce(b, patterns::binomial_tree(p, 0, patterns::ChildOrder::kSmallestFirst),
                             input_of(layout, 0), output_of(layout, 0));
  patterns::emit_tree_bcast(b, patterns::binomial_tree(p, 0, patterns::ChildOrder::kLargestFirst),
                            output_of(layout, 0));
  return std::move(b).finish();
}

// Estimate: the binomial reduce to rank 0 (patterns::tree_reduce_time), then the binomial
// bcast, ceil(log2 p)(α + nβ).
std::optional<Estimate> estimate_allreduce_reduce_then_bcast(const CollectiveSpec& spec,
                                                             const Params& /*params*/,
                                                             const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Rank p = spec.nranks;
  const Count n = spec.count;
  const Time time =
      patterns::tree_reduce_time(
          patterns::binomial_tree(p, 0, patterns::ChildOrder::kSmallestFirst), *c, n) +
      static_cast<Time>(ceil_log2(p)) * c->message(n);
  return make_estimate(spec, time, 2.0 * (p - 1) * static_cast<double>(n), 5.0 * p, false);
}

}  // namespace optcoll::algorithms
