// SPDX-License-Identifier: Apache-2.0
// bcast/hybrid — N-D hybrid broadcast over a logical grid p = d_0 x ... x d_{k-1}
// (patterns/hybrid.h): going in, every dimension either scatters the current range along its
// lines (long, l) or MST-broadcasts it (short, s); coming out, the long dimensions
// allgather (ring) in reverse order. dims/kinds default to the grid the cost formula
// prefers under the model (recorded in the schedule's params).
//
//   p = 8, dims 2x4, kinds ll, root 0: scatter halves 0→4; scatter quarters in {0..3},
//   {4..7}; ring allgather in rows {0,1,2,3}, {4,5,6,7}; ring allgather in columns {0,4}, ...
//
// Cost (alpha-beta, full duplex, one port, every d_i a power of two dividing the range), with
// s_i the range at dimension i (s_0 = n, s_{i+1} = s_i/d_i after a long dimension):
//   Σ_long [ceil(log2 d_i)α + (d_i-1)/d_i·s_iβ + (d_i-1)(α + s_i/d_i·β)]
//   + Σ_short ceil(log2 d_i)(α + s_iβ)
//   (2-D, kinds ll: (log2(p) + r + c - 2)α + 2(p-1)/p·nβ, Chan et al.'s option 3)
// Restrictions: dims must multiply to p; kinds needs explicit dims and one letter l/s per
// dimension. Any p (p prime: a 1-D grid), any root, any n.
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007 (hybrid algorithms).

#include "optcoll/algorithms/grid_params.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_bcast_hybrid(const CollectiveSpec& spec, const Params& params,
                            const CostModel& model) {
  ScheduleBuilder b(spec, "bcast/hybrid");
  const auto choice = resolve_tree_grid(spec, params, model, /*reduce=*/false);
  b.set_params("dims=" + patterns::dims_to_string(choice.dims) + ",kinds=" + choice.kinds);
  std::vector<Slice> bases;
  for (Rank r = 0; r < spec.nranks; ++r) bases.push_back(output_of(b.layout(), r));
  patterns::hybrid_bcast(b, patterns::Grid(choice.dims), choice.kinds, bases, spec.root);
  return std::move(b).finish();
}

// Estimate: tree_grid_estimate over the grid the builder resolves.
std::optional<Estimate> estimate_bcast_hybrid(const CollectiveSpec& spec, const Params& params,
                                              const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const auto choice = resolve_tree_grid(spec, params, model, /*reduce=*/false);
  return tree_grid_estimate(
      spec, *c, choice, false,
      "dims=" + patterns::dims_to_string(choice.dims) + ",kinds=" + choice.kinds);
}

}  // namespace optcoll::algorithms
