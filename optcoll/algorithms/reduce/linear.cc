// SPDX-License-Identifier: Apache-2.0
// reduce/linear — every rank sends its vector to the root, which combines them one by one,
// moving outward from itself so that operands stay in rank order.
//
//   p = 5, root 2:  out = x2;  out = x1⊕out;  out = x0⊕out;  out = out⊕x3;  out = out⊕x4
//
// Cost (alpha-beta-gamma, one port, no overlap): n·copy + (p-1)·(α + nβ + nγ)
// Restrictions: none (non-commutative operators are combined in rank order).
// Reference: the "basic linear" reduce of MPICH and Open MPI.

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree.h"
#include "optcoll/algorithms/patterns/tree_bcast_reduce.h"
#include "optcoll/algorithms/patterns/tree_estimate.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_reduce_linear(const CollectiveSpec& spec, const Params& /*params*/,
                             const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "reduce/linear");
  const Rank root = spec.root;
  auto tree = patterns::outward_flat_tree(spec.nranks, root);
  patterns::emit_tree_reduce(b, tree, input_of(b.layout(), root), output_of(b.layout(), root));
  b.set_tree(std::move(tree));
  return std::move(b).finish();
}

// Estimate: the root's copy, then p - 1 receive-reduces: n·copy + (p-1)(α + nβ + nγ). Exact.
std::optional<Estimate> estimate_reduce_linear(const CollectiveSpec& spec, const Params& /*params*/,
                                               const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const double sends = spec.nranks - 1;
  return make_estimate(spec, c->copy_of(spec.count) + sends * c->message_reduce(spec.count),
                       sends * spec.count, 2 * sends + 1, true);
}

}  // namespace optcoll::algorithms
