// SPDX-License-Identifier: Apache-2.0
// allreduce/greedy_overlap — Canon & Antoniu's optimal overlapped reduction tree
// (reduce/greedy_overlap, sink at rank 0) followed by a binomial broadcast of the result.
//
//   p = 8, d = c: reduce over the order-4 Fibonacci tree in 5d, then bcast 0→4, 0→2, 4→6,
//   0→1, 2→3, 4→5, 6→7 in 3d: 8d in all.
//
// Cost (overlap, one port, half duplex, copy = 0; d = α + nβ, c = nγ):
//   L(p) + ceil(log2 p)·d, L(p) the length of Algorithm 1 (of Algorithm 2 with transfers=K,
//   its fixed start times as release times, or of Algorithm 3 with reducers=K, as
//   reduce/greedy_overlap; the limit holds for the reduction, not the broadcast).
// Restrictions: none (the tree's sink is rank 0, where pre-order labelling keeps rank order).
//   As reduce/greedy_overlap: transfers and reducers not both set, greedy as they call for,
//   transfers=K only with overlap.
// Reference: L.-C. Canon, G. Antoniu, INRIA RR-7898 (2012); binomial broadcast: Chan et al.

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree.h"
#include "optcoll/algorithms/patterns/tree_bcast_reduce.h"
#include "optcoll/algorithms/planners/greedy_schedule.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_allreduce_greedy_overlap(const CollectiveSpec& spec, const Params& params,
                                        const CostModel& model) {
  ScheduleBuilder b(spec, "allreduce/greedy_overlap");
  const Layout& layout = b.layout();
  const auto planned = planners::plan_greedy_overlap(
      spec, model, params.get_int("transfers"), params.get_int("reducers"), params.get("greedy"));
  planners::emit_greedy_reduce(b, planned.tree, input_of(layout, 0), output_of(layout, 0), 0);
  patterns::emit_tree_bcast(
      b, patterns::binomial_tree(spec.nranks, 0, patterns::ChildOrder::kLargestFirst),
      output_of(layout, 0));
  b.set_params(planned.params);
  return std::move(b).finish();
}

// Estimate: the planner's predicted length of the reduction to rank 0, then the binomial
// bcast, ceil(log2 p)(α + nβ).
std::optional<Estimate> estimate_allreduce_greedy_overlap(const CollectiveSpec& spec,
                                                          const Params& params,
                                                          const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const auto planned = planners::plan_greedy_overlap(
      spec, model, params.get_int("transfers"), params.get_int("reducers"), params.get("greedy"));
  const double sends = spec.nranks - 1;
  return make_estimate(
      spec,
      planned.tree.length + static_cast<Time>(ceil_log2(spec.nranks)) * c->message(spec.count),
      2 * sends * spec.count, 4 * sends + spec.nranks, false, planned.params);
}

}  // namespace optcoll::algorithms
