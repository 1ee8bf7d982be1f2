// SPDX-License-Identifier: Apache-2.0
// allgather/hybrid (also allgatherv) — N-D bucket allgather over a logical grid
// p = d_0 x ... x d_{k-1} (patterns/hybrid.h): a ring allgather along the lines of the
// innermost dimension (consecutive ranks), then of each outer dimension, where every rank
// contributes the contiguous run of blocks it has collected so far. dims defaults to the
// grid the cost formula prefers under the model (the finest factorization: fewest α).
//
//   p = 6, dims 2x3: rings {0,1,2}, {3,4,5} (one block per step), then rings {0,3}, {1,4},
//   {2,5} (three blocks per step).
//
// Cost (alpha-beta, full duplex, one port, regular blocks m, n = p·m):
//   Σ_i (d_i - 1)·α + (p-1)·mβ + m·copy   (2-D: (r + c - 2)α + (p-1)/p·nβ)
// Restrictions: dims must multiply to p. Any p (prime: the 1-D ring), irregular and empty
//   blocks (each step then waits for its largest chunk).
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007 (2-D bucket allgather).

#include "optcoll/algorithms/grid_params.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_allgather_hybrid(const CollectiveSpec& spec, const Params& params,
                                const CostModel& model) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/hybrid");
  const Layout& layout = b.layout();
  const auto dims = resolve_ring_grid(spec, params, model, layout.total(), /*reduce=*/false);
  b.set_params("dims=" + patterns::dims_to_string(dims));
  std::vector<Slice> bases;
  std::vector<Count> sizes;
  for (Rank r = 0; r < spec.nranks; ++r) {
    b.copy(r, input_of(layout, r), block_in(layout, Buf::kOutput, r));
    bases.push_back(output_of(layout, r));
    sizes.push_back(layout.block(r));
  }
  patterns::hybrid_allgather(b, patterns::Grid(dims), bases, sizes);
  return std::move(b).finish();
}

// Estimate: ring_grid_estimate over the blocks, innermost dimension first (the order does
// not change the largest chunks), after the copy of the own block.
std::optional<Estimate> estimate_allgather_hybrid(const CollectiveSpec& spec, const Params& params,
                                                  const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Layout layout = Layout::borrowing(spec);
  const auto dims = resolve_ring_grid(spec, params, model, layout.total(), /*reduce=*/false);
  std::vector<Count> sizes;
  Count largest = 0;
  for (Rank r = 0; r < spec.nranks; ++r) {
    sizes.push_back(layout.block(r));
    largest = std::max(largest, layout.block(r));
  }
  return ring_grid_estimate(spec, *c, dims, sizes, false, largest);
}

}  // namespace optcoll::algorithms
