// SPDX-License-Identifier: Apache-2.0
// reduce/fibonacci — Canon & Antoniu's Fibonacci strategy: the optimal tree for d = c
// (Algorithm 1 run with equal costs; for p = F(k+2) the Fibonacci tree of order k, Def. 15),
// used whatever the real costs are. Each receive lands in a scratch slot and is reduced while
// the next element arrives.
//
//   p = 5 (order 3): m0 receives m2, m3, m1; m1 receives m4.  d = c: length 4d.
//   F(k) = F(k-1) whose sink receives, last, the result of F(k-2)'s sink.
//
// Cost (overlap, one port, half duplex, copy = 0; d = α + nβ, c = nγ): for p = F(k+2) and
//   d = c exactly (k+1)d (Prop. 16: d + (k-1)max(d, c) + c); in general the tree evaluated
//   as soon as possible with the real costs, at most twice the optimum (Thm 19).
//   Non-commutative operators: + α + nβ when no rank-order labelling puts the sink at the root.
// Restrictions: none (pre-order labelling keeps rank order, as reduce/greedy_overlap).
// Reference: L.-C. Canon, G. Antoniu, INRIA RR-7898 (2012), §7.

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/planners/greedy_schedule.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_reduce_fibonacci(const CollectiveSpec& spec, const Params& /*params*/,
                                const CostModel& model) {
  ScheduleBuilder b(spec, "reduce/fibonacci");
  const Layout& layout = b.layout();
  const auto costs = planners::reduction_costs(spec, spec.count, model);
  const auto tree = planners::fibonacci_strategy(spec.nranks, costs);
  planners::emit_greedy_reduce(b, tree, input_of(layout, spec.root), output_of(layout, spec.root),
                               spec.root);
  return std::move(b).finish();
}

// Estimate (exact): the planner's own predicted length (the tree is planned for the model: without
// overlap each edge costs α + nβ + nγ), plus the result's message to a root that a
// non-commutative operator keeps from the sink.
std::optional<Estimate> estimate_reduce_fibonacci(const CollectiveSpec& spec,
                                                  const Params& /*params*/,
                                                  const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const auto tree =
      planners::fibonacci_strategy(spec.nranks, planners::reduction_costs(spec, spec.count, model));
  const bool forward = planners::greedy_reduce_forwards(tree, spec.root, spec.commutative);
  const double sends = spec.nranks - 1 + (forward ? 1 : 0);
  const Time own = spec.nranks == 1 ? c->copy_of(spec.count) : 0;  // the root alone copies
  return make_estimate(spec, own + tree.length + (forward ? c->message(spec.count) : 0),
                       sends * spec.count, 2 * sends + spec.nranks, true);
}

}  // namespace optcoll::algorithms
