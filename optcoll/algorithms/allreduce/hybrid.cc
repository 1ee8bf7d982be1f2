// SPDX-License-Identifier: Apache-2.0
// allreduce/hybrid — N-D bucket allreduce over a logical grid p = d_0 x ... x d_{k-1}
// (patterns/hybrid.h): the message is cut into p pieces; ring reduce-scatter along the
// lines of each dimension from the outermost in, then ring allgather from the innermost
// out. dims defaults to the grid the cost formula prefers under the model (the finest
// factorization).
//
//   p = 4, dims 2x2, pieces a b c d: rings {0,2}, {1,3} reduce halves (a b | c d), rings
//   {0,1}, {2,3} reduce pieces; allgather back in rows, then columns.
//
// Cost (alpha-beta-gamma, full duplex, one port, no overlap, p | n):
//   2·Σ_i (d_i - 1)·α + 2(p-1)/p·nβ + (p-1)/p·nγ + n·copy
// Restrictions: commutative operator (ring); dims must multiply to p. Any p, any n.
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007 (hybrid allreduce).

#include "optcoll/algorithms/grid_params.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_allreduce_hybrid(const CollectiveSpec& spec, const Params& params,
                                const CostModel& model) {
  ScheduleBuilder b(spec, "allreduce/hybrid");
  const Layout& layout = b.layout();
  const auto dims = resolve_ring_grid(spec, params, model, spec.count, /*reduce=*/true);
  b.set_params("dims=" + patterns::dims_to_string(dims));
  std::vector<Slice> bases;
  std::vector<Count> sizes;
  for (Rank r = 0; r < spec.nranks; ++r) {
    b.copy(r, input_of(layout, r), output_of(layout, r));
    bases.push_back(output_of(layout, r));
    sizes.push_back(patterns::even_piece(spec.count, spec.nranks, r).count);
  }
  const patterns::Grid grid(dims);
  patterns::hybrid_reduce_scatter(b, grid, bases, sizes);
  patterns::hybrid_allgather(b, grid, bases, sizes);
  return std::move(b).finish();
}

// Estimate: the copy of the input, then ring_grid_estimate's reduce-scatter and allgather
// over the p even pieces.
std::optional<Estimate> estimate_allreduce_hybrid(const CollectiveSpec& spec, const Params& params,
                                                  const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const auto dims = resolve_ring_grid(spec, params, model, spec.count, /*reduce=*/true);
  std::vector<Count> sizes;
  for (Rank r = 0; r < spec.nranks; ++r) {
    sizes.push_back(patterns::even_piece(spec.count, spec.nranks, r).count);
  }
  Estimate e = ring_grid_estimate(spec, *c, dims, sizes, true, spec.count);
  const Estimate gather = ring_grid_estimate(spec, *c, dims, sizes, false, 0);
  e.time += gather.time;
  e.bytes += gather.bytes;
  e.work += gather.work;
  return e;
}

}  // namespace optcoll::algorithms
