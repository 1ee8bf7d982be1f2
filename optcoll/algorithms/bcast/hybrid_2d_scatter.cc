// SPDX-License-Identifier: Apache-2.0
// bcast/hybrid_2d_scatter — Chan et al.'s 2-D broadcast option 3 on a c x r grid (dims=cxr,
// patterns/hybrid.h with kinds ll): scatter in both dimensions, then allgather in both (reverse
// order). dims defaults to the grid whose cost formula is least under the model (recorded in the
// schedule's params).
//
//   p = 8, dims 2x4, root 0: see bcast/hybrid with kinds=ll.
//
// Cost (alpha-beta, full duplex, one port, c and r powers of two, p | n):
//   (log2(p) + r + c - 2)α + 2(p-1)/p·nβ
// Restrictions: dims must be two factors multiplying to p. Any p (p prime: p x 1), any root,
//   any n.
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007 (2-D broadcast, option 3).

#include "optcoll/algorithms/grid_params.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_bcast_hybrid_2d_scatter(const CollectiveSpec& spec, const Params& params,
                                       const CostModel& model) {
  ScheduleBuilder b(spec, "bcast/hybrid_2d_scatter");
  const auto choice = resolve_tree_grid(spec, params, model, /*reduce=*/false, "ll");
  b.set_params("dims=" + patterns::dims_to_string(choice.dims));
  std::vector<Slice> bases;
  for (Rank r = 0; r < spec.nranks; ++r) bases.push_back(output_of(b.layout(), r));
  patterns::hybrid_bcast(b, patterns::Grid(choice.dims), choice.kinds, bases, spec.root);
  return std::move(b).finish();
}

// Estimate: tree_grid_estimate over the grid the builder resolves.
std::optional<Estimate> estimate_bcast_hybrid_2d_scatter(const CollectiveSpec& spec,
                                                         const Params& params,
                                                         const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const auto choice = resolve_tree_grid(spec, params, model, /*reduce=*/false, "ll");
  return tree_grid_estimate(spec, *c, choice, false,
                            "dims=" + patterns::dims_to_string(choice.dims));
}

}  // namespace optcoll::algorithms
