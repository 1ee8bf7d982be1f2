// SPDX-License-Identifier: Apache-2.0
// allreduce/linear — linear reduce to rank 0 (every rank sends its vector to rank 0, which
// combines them in rank order), then linear broadcast from rank 0 (rank 0 sends the result
// to every rank in turn).
//
//   p = 3:  r0: out = x0; out = out⊕x1; out = out⊕x2;  then 0→1, 0→2
//
// Cost (alpha-beta-gamma, one port, no overlap): n·copy + (p-1)·(α + nβ + nγ) + (p-1)·(α + nβ)
// Restrictions: none (non-commutative operators are combined in rank order).
// Reference: the "basic linear" allreduce of Open MPI (reduce, then broadcast).

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree.h"
#include "optcoll/algorithms/patterns/tree_bcast_reduce.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_allreduce_linear(const CollectiveSpec& spec, const Params& /*params*/,
                                const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "allreduce/linear");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  patterns::emit_tree_reduce(b, patterns::outward_flat_tree(p, 0), input_of(layout, 0),
                             output_of(layout, 0));
  patterns::emit_tree_bcast(b, patterns::flat_tree(p, 0), output_of(layout, 0));
  return std::move(b).finish();
}

// Estimate: n·copy + (p-1)(α + nβ + nγ) + (p-1)(α + nβ). Exact.
std::optional<Estimate> estimate_allreduce_linear(const CollectiveSpec& spec,
                                                  const Params& /*params*/,
                                                  const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const double sends = spec.nranks - 1;
  const Count n = spec.count;
  return make_estimate(spec, c->copy_of(n) + sends * (c->message_reduce(n) + c->message(n)),
                       2 * sends * n, 4 * sends + 1, true);
}

}  // namespace optcoll::algorithms
