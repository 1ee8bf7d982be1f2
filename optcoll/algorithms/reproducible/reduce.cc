// SPDX-License-Identifier: Apache-2.0
// reduce/reproducible — the message is cut into p pieces; rank r collects every rank's raw
// piece r (pairwise exchange) and folds them left to right in rank order; every rank then
// sends its folded piece to the root. Every element of the result is
// ((x_0 ⊕ x_1) ⊕ x_2) ⊕ ..., so floating-point results are bit-identical across
// reproducible algorithms, runs and backends (patterns/fold_exchange.h).
//
//   p = 3, root 1, n = 3:  fold exchange as reduce_scatter/reproducible (rank 1 folds
//   straight into its output), then ranks 0 and 2 send their folded piece to rank 1.
//
// Cost (alpha-beta-gamma, full duplex, one port, no overlap, m = ceil(n/p)):
//   2(p-1)·(α + mβ) + (p-1)·mγ + m·copy, with (p-1)·m elements of scratch (m more off the
//   root).
// Restrictions: none (any operator, any root). Accepts reproducible specs.
// Reference: fixed-order reduction (reproducible BLAS, Intel MPI I_MPI_CBWR); reduce as
//   reduce-scatter + gather, Rabenseifner 2004.

#include <vector>

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/fold_exchange.h"
#include "optcoll/algorithms/patterns/partition.h"
#include "optcoll/algorithms/patterns/phase_estimate.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_reduce_reproducible(const CollectiveSpec& spec, const Params& /*params*/,
                                   const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "reduce/reproducible");
  const Rank p = spec.nranks;
  auto piece = [&](Buf buf, Rank q) {
    const auto pc = patterns::even_piece(spec.count, p, q);
    return Slice{buf, pc.offset, pc.count};
  };
  // Off the root, piece r is folded in scratch, then sent to its place in the root's output.
  std::vector<Slice> folded(static_cast<std::size_t>(p));
  for (Rank r = 0; r < p; ++r) {
    folded[static_cast<std::size_t>(r)] =
        r == spec.root ? piece(Buf::kOutput, r) : b.scratch(r, piece(Buf::kOutput, r).count);
  }
  patterns::emit_fold_exchange(
      b, [&](Rank /*at*/, Rank q) { return piece(Buf::kInput, q); },
      [&](Rank r) { return folded[static_cast<std::size_t>(r)]; });
  for (Rank r = 0; r < p; ++r) {
    if (r != spec.root) {
      b.transfer(r, spec.root, folded[static_cast<std::size_t>(r)], piece(Buf::kOutput, r));
    }
  }
  return std::move(b).finish();
}

// Estimate: the fold exchange of the p pieces, then p - 1 pieces into the root.
std::optional<Estimate> estimate_reduce_reproducible(const CollectiveSpec& spec,
                                                     const Params& /*params*/,
                                                     const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Rank p = spec.nranks;
  const auto pieces = patterns::even_sizes(spec.count, p);
  Time gather = 0;
  for (Rank q = 0; q < p; ++q) {
    if (q != spec.root) gather += c->message(pieces[static_cast<std::size_t>(q)]);
  }
  const double n = static_cast<double>(spec.count);
  return make_estimate(spec, patterns::fold_exchange_time(*c, pieces) + gather, p * n, 2.0 * p * p,
                       false);
}

}  // namespace optcoll::algorithms
