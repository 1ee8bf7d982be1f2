// SPDX-License-Identifier: Apache-2.0
// barrier/linear — every rank signals rank 0; once rank 0 has heard from all, it signals
// every rank back. Signals are one-element messages.
//
//   p = 4:  1→0, 2→0, 3→0, then 0→1, 0→2, 0→3
//
// Cost (alpha-beta, one port): 2(p-1)·(α + β)
// Restrictions: none.
// Reference: the "basic linear" barrier of Open MPI.

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_barrier_linear(const CollectiveSpec& spec, const Params& /*params*/,
                              const CostModel& /*model*/) {
  ScheduleBuilder b(spec, "barrier/linear");
  const Rank p = spec.nranks;
  if (p == 1) return std::move(b).finish();
  // Arrivals all land in rank 0's one token, so each waits for the previous (a write-after-
  // write hazard) and the releases, which send that token, wait for the last arrival.
  const Slice hub = b.scratch(0, 1);
  for (Rank r = 1; r < p; ++r) b.transfer(r, 0, b.scratch(r, 1), hub);
  for (Rank r = 1; r < p; ++r) {
    b.transfer(0, r, hub, Slice{Buf::kScratch, 0, 1});
  }
  return std::move(b).finish();
}

// Estimate: p - 1 one-element arrivals at rank 0, then p - 1 releases: 2(p-1)(α + β). Exact.
std::optional<Estimate> estimate_barrier_linear(const CollectiveSpec& spec,
                                                const Params& /*params*/, const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const double messages = 2.0 * (spec.nranks - 1);
  return make_estimate(spec, messages * c->message(1), messages, 2 * messages, true);
}

}  // namespace optcoll::algorithms
