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

namespace {

Slice send_slice(const Layout& layout, Rank from, Rank to) {
  return Slice{Buf::kInput, layout.send_displ(from, to), layout.pair_count(from, to)};
}

Slice receive_slice(const Layout& layout, Rank from, Rank to) {
  return Slice{Buf::kOutput, layout.recv_displ(to, from), layout.pair_count(from, to)};
}

// One rank's program (a OneRankBuild of rank `me`), op for op the whole build's, in O(p):
// per step its receive and its send, in the order the whole build makes them (by sender).
void emit_one_rank(ScheduleBuilder& b, Rank me) {
  const Layout& layout = b.layout();
  const Rank p = layout.nranks();
  b.copy(me, send_slice(layout, me, me), receive_slice(layout, me, me));
  std::vector<OpId> previous;  // the rank's ops of its last non-empty step
  for (Rank step = 1; step < p; ++step) {
    const Rank to = patterns::ring_mod(std::int64_t{me} + step, p);
    const Rank from = patterns::ring_mod(std::int64_t{me} - step, p);
    std::vector<OpId> current;
    const auto send = [&] {
      const auto t = b.transfer(me, to, send_slice(layout, me, to), receive_slice(layout, me, to));
      if (t.send != kNoOp) current.push_back(t.send);
    };
    const auto receive = [&] {
      const auto t =
          b.transfer(from, me, send_slice(layout, from, me), receive_slice(layout, from, me));
      if (t.recv != kNoOp) current.push_back(t.recv);
    };
    if (from < me) {
      receive();
      send();
    } else {
      send();
      receive();
    }
    if (current.empty()) continue;
    for (const OpId before : previous) {
      for (const OpId after : current) b.add_dependency(me, before, after);
    }
    previous = std::move(current);
  }
}

}  // namespace

Schedule build_alltoall_pairwise(const CollectiveSpec& spec, const Params& /*params*/,
                                 const CostModel& /*model*/) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/pairwise");
  const Rank only = OneRankBuild::current();
  if (only >= 0 && only < spec.nranks) {
    emit_one_rank(b, only);
    return std::move(b).finish();
  }
  const Layout& layout = b.layout();
  const Rank p = spec.nranks;
  auto src = [&](Rank from, Rank to) { return send_slice(layout, from, to); };
  auto dst = [&](Rank from, Rank to) { return receive_slice(layout, from, to); };
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
  // The counts straight (see linear.cc), over the pairs that may carry data: the pair (r, q)
  // goes in step (q - r) mod p.
  Count own = 0;
  double elements = 0;
  std::vector<Count> largest(static_cast<std::size_t>(p), 0);  // per step
  for_each_alltoallv_pair(spec, [&](Rank from, Rank to, Count m) {
    if (from == to) {
      own = std::max(own, m);
      return;
    }
    Count& step_largest = largest[static_cast<std::size_t>(patterns::ring_mod(to - from, p))];
    step_largest = std::max(step_largest, m);
    elements += static_cast<double>(m);
  });
  Time time = c->copy_of(own);
  for (Rank step = 1; step < p; ++step) time += c->message(largest[static_cast<std::size_t>(step)]);
  return make_estimate(spec, time, elements, 2.0 * p * p, false);
}

}  // namespace optcoll::algorithms
