// SPDX-License-Identifier: Apache-2.0
// allreduce/reproducible — the message is cut into p pieces; rank r collects every rank's
// raw piece r (pairwise exchange), folds them left to right in rank order, and a ring
// allgather then gives every rank every folded piece. Every element is
// ((x_0 ⊕ x_1) ⊕ x_2) ⊕ ..., so floating-point results are bit-identical across
// reproducible algorithms, runs and backends (patterns/fold_exchange.h).
//
//   p = 3, n = 3 (pieces of one element):  fold exchange as reduce_scatter/reproducible,
//   then two ring steps: r sends its newest piece to r+1.
//
// Cost (alpha-beta-gamma, full duplex, one port, no overlap, m = ceil(n/p)):
//   2(p-1)·(α + mβ) + (p-1)·mγ + m·copy — the ring allreduce's cost, with (p-1)·m elements
//   of scratch.
// Restrictions: none (any operator). Accepts reproducible specs.
// Reference: fixed-order reduction (reproducible BLAS, Intel MPI I_MPI_CBWR); ring allgather
//   of Chan et al., CCPE 2007.

#include <optional>

#include "optcoll/algorithms/bounds.h"
#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/fold_exchange.h"
#include "optcoll/algorithms/patterns/partition.h"
#include "optcoll/algorithms/patterns/phase_estimate.h"
#include "optcoll/algorithms/patterns/ring.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_allreduce_reproducible(const CollectiveSpec& spec, const Params& /*params*/,
                                      const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "allreduce/reproducible");
  const Rank p = spec.nranks;
  auto piece = [&](Buf buf, Rank q) {
    const auto pc = patterns::even_piece(spec.count, p, q);
    return Slice{buf, pc.offset, pc.count};
  };
  patterns::emit_fold_exchange(
      b, [&](Rank /*at*/, Rank q) { return piece(Buf::kInput, q); },
      [&](Rank r) { return piece(Buf::kOutput, r); });
  for (Rank step = 0; step + 1 < p; ++step) {  // ring allgather of the folded pieces
    for (Rank r = 0; r < p; ++r) {
      const Slice done = piece(Buf::kOutput, patterns::ring_mod(std::int64_t{r} - step, p));
      b.transfer(r, patterns::ring_right(r, p), done, done);
    }
  }
  return std::move(b).finish();
}

// Bound: the owner of the largest piece (ceil(n/p) elements) receives p - 1 raw pieces, one
// message each, folds them, and only then starts the piece on its p - 1 ring hops.
std::optional<Time> bound_allreduce_reproducible(const CollectiveSpec& spec,
                                                 const CostModel& model) {
  const Rank p = spec.nranks;
  const Count largest = (spec.count + p - 1) / p;
  return fan_in_bound(spec, model, p - 1, largest) + chain_bound(spec, model, p - 1, largest);
}

// Estimate: the fold exchange of the p pieces, then p - 1 ring steps of the largest.
std::optional<Estimate> estimate_allreduce_reproducible(const CollectiveSpec& spec,
                                                        const Params& /*params*/,
                                                        const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Rank p = spec.nranks;
  const auto pieces = patterns::even_sizes(spec.count, p);
  const Time time =
      patterns::fold_exchange_time(*c, pieces) + patterns::ring_allgather_time(p, pieces[0], *c);
  const double n = static_cast<double>(spec.count);
  return make_estimate(spec, time, 2 * (p - 1) * n, 4.0 * p * p, false);
}

}  // namespace optcoll::algorithms
