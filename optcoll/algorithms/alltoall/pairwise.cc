// SPDX-License-Identifier: Apache-2.0
// alltoall/pairwise (also alltoallv/pairwise) — in step s = 1..p-1 rank r sends its block for
// rank (r+s) mod p and receives from rank (r-s) mod p; each step starts when the previous
// one is done, so every rank has one send and one receive in flight and no rank is a hot spot.
//
//   p = 4:  step 1: 0→1 1→2 2→3 3→0   step 2: 0→2 1→3 2→0 3→1   step 3: 0→3 1→0 2→1 3→2
//
// Cost (alpha-beta, full duplex, one port, regular blocks m): m·copy + (p-1)·(α + mβ)
// Restrictions: none.
// Reference: Thakur, Rabenseifner, Gropp, IJHPCA 2005 (pairwise exchange).

#include <algorithm>

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/ring.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

Schedule build_alltoall_pairwise(const CollectiveSpec& spec, const Params& /*params*/,
                                 const CostModel& /*model*/) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/pairwise");
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  auto src = [&](Rank from, Rank to) {
    return Slice{Buf::kInput, layout.send_displ(from, to), layout.pair_count(from, to)};
  };
  auto dst = [&](Rank from, Rank to) {
    return Slice{Buf::kOutput, layout.recv_displ(to, from), layout.pair_count(from, to)};
  };
  for (Rank r = 0; r < p; ++r) b.copy(r, src(r, r), dst(r, r));
  // The last op of each rank's previous step (empty blocks emit no ops).
  std::vector<std::vector<OpId>> previous(static_cast<std::size_t>(p));
  for (Rank step = 1; step < p; ++step) {
    std::vector<std::vector<OpId>> current(static_cast<std::size_t>(p));
    for (Rank r = 0; r < p; ++r) {
      const Rank to = patterns::ring_mod(std::int64_t{r} + step, p);
      const auto t = b.transfer(r, to, src(r, to), dst(r, to));
      if (t.send != kNoOp) current[static_cast<std::size_t>(r)].push_back(t.send);
      if (t.recv != kNoOp) current[static_cast<std::size_t>(to)].push_back(t.recv);
    }
    // No data hazard orders the steps (they touch disjoint blocks); the step order is what
    // bounds each rank to one outstanding send and receive, so it is stated explicitly.
    for (Rank r = 0; r < p; ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (current[i].empty()) continue;
      for (const OpId before : previous[i]) {
        for (const OpId after : current[i]) b.add_dependency(r, before, after);
      }
      previous[i] = current[i];
    }
  }
  return std::move(b).finish();
}

// Estimate: the own block's copy, then p - 1 steps, each as long as its largest message
// (exact for alltoall: (p-1)(α + mβ) + m·copy; an upper estimate for alltoallv, whose
// ranks run ahead of the lockstep).
std::optional<Estimate> estimate_alltoall_pairwise(const CollectiveSpec& spec,
                                                   const Params& /*params*/,
                                                   const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const Rank p = spec.nranks;
  if (spec.counts.empty()) {  // regular: every step alike, O(1)
    const double elements = static_cast<double>(p) * (p - 1) * static_cast<double>(spec.count);
    return make_estimate(spec,
                         c->copy_of(spec.count) + static_cast<Time>(p - 1) * c->message(spec.count),
                         elements, 2.0 * p * p, true);
  }
  const auto pair = [&](Rank from, Rank to) {  // the counts matrix straight (see linear.cc)
    return spec.counts[static_cast<std::size_t>(from) * static_cast<std::size_t>(p) +
                       static_cast<std::size_t>(to)];
  };
  Count own = 0;
  for (Rank r = 0; r < p; ++r) own = std::max(own, pair(r, r));
  Time time = c->copy_of(own);
  double elements = 0;
  for (Rank step = 1; step < p; ++step) {
    Count largest = 0;
    for (Rank r = 0; r < p; ++r) {
      const Count m = pair(r, (r + step) % p);
      largest = std::max(largest, m);
      elements += static_cast<double>(m);
    }
    time += c->message(largest);
  }
  return make_estimate(spec, time, elements, 2.0 * p * p, false);
}

}  // namespace optcoll::algorithms
