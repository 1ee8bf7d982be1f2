// SPDX-License-Identifier: Apache-2.0
// alltoall/linear (also alltoallv/linear) — every rank posts all its sends at once, to
// ranks 0, 1, ..., p-1 in that order, and copies its own block. Every rank starts by
// sending to rank 0: the simulator shows the resulting hot spot.
//
//   p = 3:  r0: copy, 0→1, 0→2   r1: 1→0, copy, 1→2   r2: 2→0, 2→1, copy
//
// Cost (alpha-beta, full duplex, one port, regular blocks m): at least (p-1)·(α + mβ) + m·copy;
//   more where several ranks send to the same rank at once.
// Restrictions: none.
// Reference: the "basic linear" alltoall(v) of Open MPI and MPICH.

#include <algorithm>

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_alltoall_linear(const CollectiveSpec& spec, const Params& /*params*/,
                               const CostModel& /*model*/) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/linear");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  for (Rank r = 0; r < p; ++r) {
    for (Rank to = 0; to < p; ++to) {
      const Slice src{Buf::kInput, layout.send_displ(r, to), layout.pair_count(r, to)};
      const Slice dst{Buf::kOutput, layout.recv_displ(to, r), layout.pair_count(r, to)};
      if (to == r) {
        b.copy(r, src, dst);
      } else {
        b.transfer(r, to, src, dst);
      }
    }
  }
  return std::move(b).finish();
}

// Estimate: the own block's copy, then the busiest send or receive port's messages; for
// alltoall times (2^ceil(log2 p) − 1)/(p − 1): every rank posts all its sends at once, in
// rank order, and the receivers' contention makes the exchange take as long as on the next
// power of two ranks (measured; exact: (2^ceil(log2 p) − 1)(α + mβ) + m·copy). For
// alltoallv a lower estimate.
std::optional<Estimate> estimate_alltoall_linear(const CollectiveSpec& spec,
                                                 const Params& /*params*/, const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Rank p = spec.nranks;
  if (spec.counts.empty()) {  // regular: every port alike, O(1)
    const auto rounds = static_cast<Time>((std::int64_t{1} << ceil_log2(p)) - 1);
    const double elements = static_cast<double>(p) * (p - 1) * static_cast<double>(spec.count);
    return make_estimate(spec, c->copy_of(spec.count) + rounds * c->message(spec.count), elements,
                         2.0 * p * p, true);
  }
  // The counts matrix straight (row = sender): a Layout's p x p displacements cost more than
  // the estimate itself at p = 1024.
  const auto pair = [&](Rank from, Rank to) {
    return spec.counts[static_cast<std::size_t>(from) * static_cast<std::size_t>(p) +
                       static_cast<std::size_t>(to)];
  };
  Time busiest = 0;
  Count own = 0;
  double elements = 0;
  std::vector<Time> received(static_cast<std::size_t>(p), 0);
  for (Rank r = 0; r < p; ++r) {
    Time sent = 0;
    for (Rank q = 0; q < p; ++q) {
      if (q == r) continue;
      const Count m = pair(r, q);
      sent += c->message(m);
      received[static_cast<std::size_t>(q)] += c->message(m);
      elements += static_cast<double>(m);
    }
    busiest = std::max(busiest, sent);
    own = std::max(own, pair(r, r));
  }
  for (const Time t : received) busiest = std::max(busiest, t);
  return make_estimate(spec, c->copy_of(own) + busiest, elements, 2.0 * p * p, false);
}

}  // namespace optcoll::algorithms
