// SPDX-License-Identifier: Apache-2.0
// reduce_scatter/reproducible (also reduce_scatter_block/reproducible) — every rank gathers
// the raw contributions to its own block by a pairwise exchange, then folds them left to
// right in rank order: block r = ((x_0[r] ⊕ x_1[r]) ⊕ x_2[r]) ⊕ ... The association is fixed,
// so floating-point results are bit-identical to every other reproducible algorithm's, on
// every run and backend (patterns/fold_exchange.h).
//
//   p = 3, blocks a, b, c:  step 1: r0→r1 b0, r1→r2 c1, r2→r0 a2
//                           step 2: r0→r2 c0, r1→r0 a1, r2→r1 b2
//                           r0: (a0⊕a1)⊕a2   r1: (b0⊕b1)⊕b2   r2: (c0⊕c1)⊕c2
//
// Cost (alpha-beta-gamma, full duplex, one port, no overlap, regular blocks m = n/p):
//   (p-1)·(α + mβ + mγ) + m·copy — the ring's cost, with (p-1)·m elements of scratch.
// Restrictions: none (any operator: only raw contributions travel; the fold is in rank
//   order). The one reduce-scatter that accepts reproducible specs.
// Reference: the fixed-order reduction of reproducible BLAS and of Intel MPI's
//   I_MPI_CBWR, here as a schedule; the pairwise exchange is Thakur, Rabenseifner and
//   Gropp, IJHPCA 2005.

#include <optional>

#include "optcoll/algorithms/bounds.h"
#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/fold_exchange.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_reduce_scatter_reproducible(const CollectiveSpec& spec, const Params& /*params*/,
                                           const CostModel& /*model*/) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/reproducible");
  const Layout& layout = b.layout();
  patterns::emit_fold_exchange(
      b, [&](Rank /*at*/, Rank q) { return block_in(layout, Buf::kInput, q); },
      [&](Rank r) { return output_of(layout, r); });
  return std::move(b).finish();
}

// Bound: the owner of the largest block receives p - 1 raw contributions, one message each.
std::optional<Time> bound_reduce_scatter_reproducible(const CollectiveSpec& spec,
                                                      const CostModel& model) {
  return fan_in_bound(spec, model, spec.nranks - 1, largest_block(spec));
}

// Estimate: the fold exchange of the blocks. Exact for equal blocks. Ops: each rank sends p - 1
// blocks and receives and folds p - 1.
std::optional<Estimate> estimate_reduce_scatter_reproducible(const CollectiveSpec& spec,
                                                             const Params& /*params*/,
                                                             const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Layout layout = Layout::borrowing(spec);
  std::vector<Count> block;
  for (Rank r = 0; r < spec.nranks; ++r) block.push_back(layout.block(r));
  const double p = spec.nranks;
  return make_estimate(spec, patterns::fold_exchange_time(*c, block),
                       (p - 1) * static_cast<double>(layout.total()), 3 * p * p, false);
}

}  // namespace optcoll::algorithms
