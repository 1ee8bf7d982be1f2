// SPDX-License-Identifier: Apache-2.0
// reduce/hybrid — N-D hybrid reduce over a logical grid p = d_0 x ... x d_{k-1}, the time
// reverse of bcast/hybrid (patterns/hybrid.h): the long dimensions (l) reduce-scatter (ring)
// their current range in order 0..k-1; then, towards the root in order k-1..0, long
// dimensions MST-gather and short ones (s) MST-reduce. dims/kinds default to the grid the
// cost formula prefers under the model (recorded in the schedule's params).
//
//   p = 8, dims 2x4, kinds ll, root 0: ring reduce-scatter of halves in columns {0,4}, ...;
//   of quarters in rows; MST gather in rows to 0 and 4; gather 4→0.
//
// Cost (alpha-beta-gamma, full duplex, one port, copy = 0, every d_i a power of two dividing
// the range), s_i the range at dimension i (s_{i+1} = s_i/d_i after a long dimension):
//   Σ_long [(d_i-1)(α + s_i/d_i·(β + γ)) + ceil(log2 d_i)α + (d_i-1)/d_i·s_iβ]
//   + Σ_short ceil(log2 d_i)(α + s_iβ + s_iγ)     (+ n·copy)
// Restrictions: commutative operator (ring reduce-scatter; lines of outer dimensions are not
// rank ranges); dims must multiply to p; kinds needs explicit dims, one letter l/s each.
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007 (hybrid algorithms).

#include "optcoll/algorithms/grid_params.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_reduce_hybrid(const CollectiveSpec& spec, const Params& params,
                             const CostModel& model) {
  ScheduleBuilder b(spec, "reduce/hybrid");
  const Layout& layout = b.layout();
  const auto choice = resolve_tree_grid(spec, params, model, /*reduce=*/true);
  b.set_params("dims=" + patterns::dims_to_string(choice.dims) + ",kinds=" + choice.kinds);
  std::vector<Slice> bases;
  for (Rank r = 0; r < spec.nranks; ++r) {
    bases.push_back(r == spec.root ? output_of(layout, r) : b.scratch(r, spec.count));
    b.copy(r, input_of(layout, r), bases.back());
  }
  patterns::hybrid_reduce(b, patterns::Grid(choice.dims), choice.kinds, bases, spec.root);
  return std::move(b).finish();
}

// Estimate: tree_grid_estimate (with the initial copy) over the grid the builder resolves.
std::optional<Estimate> estimate_reduce_hybrid(const CollectiveSpec& spec, const Params& params,
                                               const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const auto choice = resolve_tree_grid(spec, params, model, /*reduce=*/true);
  return tree_grid_estimate(
      spec, *c, choice, true,
      "dims=" + patterns::dims_to_string(choice.dims) + ",kinds=" + choice.kinds);
}

}  // namespace optcoll::algorithms
