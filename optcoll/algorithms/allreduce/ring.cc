// SPDX-License-Identifier: Apache-2.0
// allreduce/ring — the message is cut into p pieces; a bucket reduce-scatter (p-1 steps:
// each rank adds its piece to the partial sum arriving from the left and passes it on) leaves
// piece r fully reduced on rank r; a bucket allgather (p-1 steps) then circulates the pieces.
//
//   p = 3, pieces a b c:  reduce-scatter → r0: a, r1: b, r2: c complete;
//                         allgather      → every rank: a b c
//
// Cost (alpha-beta-gamma, full duplex, one port, no overlap, n = message):
//   2(p-1)·α + 2(p-1)/p·nβ + (p-1)/p·nγ + (p-1)/p·n·copy   (for p dividing n)
// Restrictions: needs a commutative operator (piece q is combined starting at rank q+1,
//   wrapping around past rank p-1).
// Reference: Chan, Heimlich, Purkayastha, van de Geijn, CCPE 2007 (bucket allreduce);
//            Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms", JPDC 2009.

#include "optcoll/algorithms/patterns/ring.h"

#include <optional>

#include "optcoll/algorithms/bounds.h"
#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/partition.h"
#include "optcoll/algorithms/patterns/phase_estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_allreduce_ring(const CollectiveSpec& spec, const Params& /*params*/,
                              const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "allreduce/ring");
  const Rank p = spec.nranks;
  const Count n = spec.count;
  auto piece = [&](Buf buf, Rank q) {
    const auto pc = patterns::even_piece(n, p, q);
    return Slice{buf, pc.offset, pc.count};
  };
  // Rank r combines every piece except r-1 (which it only sends, from its input) in place
  // in its output buffer, starting from its own contribution.
  for (Rank r = 0; r < p; ++r) {
    for (Rank q = 0; q < p; ++q) {
      // (With p = 1 there are no sends: the one piece is copied.)
      if (p == 1 || q != patterns::ring_left(r, p)) {
        b.copy(r, piece(Buf::kInput, q), piece(Buf::kOutput, q));
      }
    }
  }
  for (Rank step = 0; step + 1 < p; ++step) {  // reduce-scatter
    for (Rank r = 0; r < p; ++r) {
      const Rank q = patterns::ring_mod(std::int64_t{r} - step - 1, p);
      const Slice from = piece(step == 0 ? Buf::kInput : Buf::kOutput, q);
      b.transfer_reduce(r, patterns::ring_right(r, p), from, piece(Buf::kOutput, q), Side::kLeft);
    }
  }
  for (Rank step = 0; step + 1 < p; ++step) {  // allgather
    for (Rank r = 0; r < p; ++r) {
      const Slice done = piece(Buf::kOutput, patterns::ring_mod(std::int64_t{r} - step, p));
      b.transfer(r, patterns::ring_right(r, p), done, done);
    }
  }
  return std::move(b).finish();
}

// Bound: the largest piece (ceil(n/p) elements) makes p - 1 hops of the reduce-scatter and
// p - 1 of the allgather, each sent after the previous one arrived.
std::optional<Time> bound_allreduce_ring(const CollectiveSpec& spec, const CostModel& model) {
  const Rank p = spec.nranks;
  return chain_bound(spec, model, 2 * (p - 1), (spec.count + p - 1) / p);
}

// Estimate: every rank's copies of the p - 1 pieces it combines, then p - 1 reduce-scatter
// and p - 1 allgather steps of the largest piece. Exact for p dividing n.
std::optional<Estimate> estimate_allreduce_ring(const CollectiveSpec& spec,
                                                const Params& /*params*/, const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Rank p = spec.nranks;
  const Count n = spec.count;
  const Count piece = (n + p - 1) / p;
  const Count copied = p == 1 ? n : n - n / p;  // all but the (smallest) piece r - 1
  const Time time = c->copy_of(copied) + patterns::ring_reduce_scatter_time(p, piece, *c) +
                    patterns::ring_allgather_time(p, piece, *c);
  return make_estimate(spec, time, 2.0 * (p - 1) * static_cast<double>(n), 6.0 * p * p, n % p == 0);
}

}  // namespace optcoll::algorithms
