// SPDX-License-Identifier: Apache-2.0
// allgather/linear (also allgatherv/linear) — every rank sends its block directly to every
// other rank (to r+1, r+2, ... in turn) and copies its own block into place.
//
//   p = 3:  r0: 0→1, 0→2   r1: 1→2, 1→0   r2: 2→0, 2→1
//
// Cost (alpha-beta, full duplex, one port, regular blocks m): (p-1)·(α + mβ) + m·copy
//   — the same as the ring, but with p(p-1) concurrent messages instead of p per step.
// Restrictions: none.
// Reference: the direct-send allgather ("basic linear" in Open MPI is gather + bcast;
//            this is the all-to-all exchange of Thakur et al., IJHPCA 2005, for allgather).

#include <optional>

#include "optcoll/algorithms/bounds.h"
#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/ring.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_allgather_linear(const CollectiveSpec& spec, const Params& /*params*/,
                                const CostModel& /*model*/) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/linear");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  for (Rank r = 0; r < p; ++r) b.copy(r, input_of(layout, r), block_in(layout, Buf::kOutput, r));
  for (Rank shift = 1; shift < p; ++shift) {
    for (Rank r = 0; r < p; ++r) {
      const Rank to = patterns::ring_mod(std::int64_t{r} + shift, p);
      b.transfer(r, to, input_of(layout, r), block_in(layout, Buf::kOutput, r));
    }
  }
  return std::move(b).finish();
}

// Bound (allgather): every rank receives p - 1 blocks of m elements, one message each.
std::optional<Time> bound_allgather_linear(const CollectiveSpec& spec, const CostModel& model) {
  return fan_in_bound(spec, model, spec.nranks - 1, spec.count);
}

// Estimate: the copy of the own block, then the busier of a rank's p - 1 sends of its block
// and its p - 1 receives: exact for equal blocks, (p-1)(α + mβ) + m·copy.
std::optional<Estimate> estimate_allgather_linear(const CollectiveSpec& spec,
                                                  const Params& /*params*/,
                                                  const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Layout layout = Layout::borrowing(spec);
  const Rank p = spec.nranks;
  Time all = 0;
  Count largest = 0;
  for (Rank q = 0; q < p; ++q) {
    all += c->message(layout.block(q));
    largest = std::max(largest, layout.block(q));
  }
  Time busiest = 0;
  for (Rank r = 0; r < p; ++r) {
    const Time message = c->message(layout.block(r));
    busiest = std::max({busiest, all - message, static_cast<Time>(p - 1) * message});
  }
  const double elements = static_cast<double>(p - 1) * static_cast<double>(layout.total());
  return make_estimate(spec, c->copy_of(largest) + busiest, elements,
                       2.0 * p * static_cast<double>(p), !spec.counts.empty() ? false : true);
}

}  // namespace optcoll::algorithms
