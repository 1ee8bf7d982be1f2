// SPDX-License-Identifier: Apache-2.0
// barrier/dissemination — in round k = 0..ceil(log2 p)-1 rank r signals rank (r + 2^k) mod p
// and waits for rank (r - 2^k) mod p; after the last round every rank has heard, directly or
// through others, from every rank. Signals are one-element messages.
//
//   p = 5:  round 0: r→r+1   round 1: r→r+2   round 2: r→r+4   (mod 5)
//
// Cost (alpha-beta, full duplex, one port): ceil(log2 p)·(α + β)
// Restrictions: none.
// Reference: Hensgen, Finkel, Manber, "Two algorithms for barrier synchronization",
//            IJPP 17(1), 1988.

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/ring.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_barrier_dissemination(const CollectiveSpec& spec, const Params& /*params*/,
                                     const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "barrier/dissemination");
  const Rank p = spec.nranks;
  int rounds = 0;
  while ((Rank{1} << rounds) < p) ++rounds;
  // Token k is what a rank forwards in round k; round k's signal arrives as token k+1, so a
  // rank's round-(k+1) signal is ordered after its round-k arrival by a plain data hazard.
  std::vector<Slice> tokens(static_cast<std::size_t>(p));
  for (Rank r = 0; r < p; ++r) tokens[static_cast<std::size_t>(r)] = b.scratch(r, rounds + 1);
  // arrivals[r]: rank r's receives of the rounds so far.
  std::vector<std::vector<OpId>> arrivals(static_cast<std::size_t>(p));
  for (int k = 0; k < rounds; ++k) {
    std::vector<OpId> sends(static_cast<std::size_t>(p));
    for (Rank r = 0; r < p; ++r) {
      const Rank to = patterns::ring_mod(std::int64_t{r} + (std::int64_t{1} << k), p);
      const Slice& mine = tokens[static_cast<std::size_t>(r)];
      const Slice& theirs = tokens[static_cast<std::size_t>(to)];
      const auto t = b.transfer(r, to, Slice{Buf::kScratch, mine.offset + k, 1},
                                Slice{Buf::kScratch, theirs.offset + k + 1, 1});
      sends[static_cast<std::size_t>(r)] = t.send;
      arrivals[static_cast<std::size_t>(to)].push_back(t.recv);
    }
    // A round-k signal must carry everything its sender heard in rounds 0..k-1, not only
    // round k-1 (the data hazard): otherwise, from p = 8 on, a rank can leave having heard
    // nothing, even indirectly, from one of the others. No data hazard implies these edges.
    for (Rank r = 0; r < p; ++r) {
      const auto& heard = arrivals[static_cast<std::size_t>(r)];
      const OpId send = sends[static_cast<std::size_t>(r)];
      for (int j = 0; j + 1 < k; ++j) b.add_dependency(r, heard[static_cast<std::size_t>(j)], send);
    }
  }
  return std::move(b).finish();
}

// Estimate: ceil(log2 p) rounds of a one-element message, ceil(log2 p)(α + β). Exact.
std::optional<Estimate> estimate_barrier_dissemination(const CollectiveSpec& spec,
                                                       const Params& /*params*/,
                                                       const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const auto rounds = static_cast<double>(ceil_log2(spec.nranks));
  return make_estimate(spec, rounds * c->message(1), rounds * spec.nranks, 2 * rounds * spec.nranks,
                       true);
}

}  // namespace optcoll::algorithms
