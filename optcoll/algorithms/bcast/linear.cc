// SPDX-License-Identifier: Apache-2.0
// bcast/linear — the root sends the whole message to every other rank in turn (flat tree).
//
//   p = 4, root 1:  1→0, then 1→2, then 1→3
//
// Cost (alpha-beta, one port): (p-1)·(α + nβ); with k ports ceil((p-1)/k)·(α + nβ)
// Restrictions: none.
// Reference: the "basic linear" algorithm of MPICH and Open MPI; Thakur, Rabenseifner, Gropp,
//            "Optimization of collective communication operations in MPICH", IJHPCA 2005.

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree.h"
#include "optcoll/algorithms/patterns/tree_bcast_reduce.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_bcast_linear(const CollectiveSpec& spec, const Params& /*params*/,
                            const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "bcast/linear");
  auto tree = patterns::flat_tree(spec.nranks, spec.root);
  patterns::emit_tree_bcast(b, tree, output_of(b.layout(), spec.root));
  b.set_tree(std::move(tree));
  return std::move(b).finish();
}

// Estimate: the root's p - 1 messages in turn, (p-1)(α + nβ). Exact.
std::optional<Estimate> estimate_bcast_linear(const CollectiveSpec& spec, const Params& /*params*/,
                                              const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const double sends = spec.nranks - 1;
  return make_estimate(spec, sends * c->message(spec.count), sends * spec.count, 2 * sends, true);
}

}  // namespace optcoll::algorithms
