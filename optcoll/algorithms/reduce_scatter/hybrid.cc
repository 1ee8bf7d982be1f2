// SPDX-License-Identifier: Apache-2.0
// reduce_scatter/hybrid (also reduce_scatter_block) — N-D bucket reduce-scatter over a
// logical grid p = d_0 x ... x d_{k-1} (patterns/hybrid.h): a ring reduce-scatter along the
// lines of the outermost dimension, each rank keeping the run of blocks of the ranks that
// share its outer coordinate, then along each inner dimension on what is left. dims defaults
// to the grid the cost formula prefers under the model (the finest factorization).
//
//   p = 6, dims 2x3: rings {0,3}, {1,4}, {2,5} on halves (blocks 0-2 | 3-5), then rings
//   {0,1,2}, {3,4,5} on single blocks.
//
// Cost (alpha-beta-gamma, full duplex, one port, no overlap, regular blocks m, n = p·m):
//   Σ_i (d_i - 1)·α + (p-1)·m(β + γ) + (n + m)·copy
// Restrictions: commutative operator (ring); dims must multiply to p. Any p, irregular and
//   empty blocks.
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007 (hybrid reduce-scatter).

#include "optcoll/algorithms/grid_params.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_reduce_scatter_hybrid(const CollectiveSpec& spec, const Params& params,
                                     const CostModel& model) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/hybrid");
  const Layout& layout = b.layout();
  const auto dims = resolve_ring_grid(spec, params, model, layout.total(), /*reduce=*/true);
  b.set_params("dims=" + patterns::dims_to_string(dims));
  std::vector<Slice> bases;
  std::vector<Count> sizes;
  for (Rank r = 0; r < spec.nranks; ++r) {
    bases.push_back(b.scratch(r, layout.total()));
    b.copy(r, input_of(layout, r), bases.back());
    sizes.push_back(layout.block(r));
  }
  patterns::hybrid_reduce_scatter(b, patterns::Grid(dims), bases, sizes);
  for (Rank r = 0; r < spec.nranks; ++r) {
    b.copy(r, block_at(layout, bases[static_cast<std::size_t>(r)], r), output_of(layout, r));
  }
  return std::move(b).finish();
}

// Estimate: ring_grid_estimate over the blocks, after the copy of the whole input into
// scratch and with the copy of the own block out.
std::optional<Estimate> estimate_reduce_scatter_hybrid(const CollectiveSpec& spec,
                                                       const Params& params,
                                                       const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Layout layout = Layout::borrowing(spec);
  const auto dims = resolve_ring_grid(spec, params, model, layout.total(), /*reduce=*/true);
  std::vector<Count> sizes;
  Count largest = 0;
  for (Rank r = 0; r < spec.nranks; ++r) {
    sizes.push_back(layout.block(r));
    largest = std::max(largest, layout.block(r));
  }
  return ring_grid_estimate(spec, *c, dims, sizes, true, layout.total() + largest);
}

}  // namespace optcoll::algorithms
