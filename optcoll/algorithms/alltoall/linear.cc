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
#include <vector>

#include "optcoll/algorithms/estimate.h"
#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms {

namespace {

// One rank's program of alltoallv/linear (a OneRankBuild of rank `me`), op for op the whole
// build's: its receives from ranks before it, its sends (and its own block's copy) in rank
// order, its receives from ranks after it. The slices come from the counts straight: the
// Layout's two p x (p + 1) displacement tables (268 MB at p = 4,096) are not made, and a spec
// of one rank's row and column (counts_of) is read in O(p).
void emit_one_rank(ScheduleBuilder& b, const CollectiveSpec& spec, Rank me) {
  const auto p = static_cast<std::size_t>(spec.nranks);
  const auto mine = static_cast<std::size_t>(me);
  const auto count = [&](std::size_t from, std::size_t to) {
    return alltoallv_pair(spec, static_cast<Rank>(from), static_cast<Rank>(to));
  };
  // What ranks before `me` send each rank (where me's block lands in the receiver's output),
  // and what each rank sends ranks before `me` (where its block for me sits in its input):
  // sums over the pairs that may carry data, row by row in the whole matrix.
  std::vector<Count> before_me_to(p, 0);
  std::vector<Count> from_before_me(p, 0);
  for_each_alltoallv_pair(spec, [&](Rank from, Rank to, Count m) {
    if (from < me) before_me_to[static_cast<std::size_t>(to)] += m;
    if (to < me) from_before_me[static_cast<std::size_t>(from)] += m;
  });
  Count received = 0;  // what `me` received from ranks before the next sender
  const auto receive_from = [&](std::size_t from) {
    const Count m = count(from, mine);
    b.transfer(static_cast<Rank>(from), me, Slice{Buf::kInput, from_before_me[from], m},
               Slice{Buf::kOutput, received, m});
    received += m;
  };
  for (std::size_t from = 0; from < mine; ++from) receive_from(from);
  Count sent = 0;  // what `me` sent ranks before the next receiver
  for (std::size_t to = 0; to < p; ++to) {
    const Count m = count(mine, to);
    const Slice src{Buf::kInput, sent, m};
    if (to == mine) {
      b.copy(me, src, Slice{Buf::kOutput, received, m});
      received += m;
    } else {
      b.transfer(me, static_cast<Rank>(to), src, Slice{Buf::kOutput, before_me_to[to], m});
    }
    sent += m;
  }
  for (std::size_t from = mine + 1; from < p; ++from) receive_from(from);
}

}  // namespace

Schedule build_alltoall_linear(const CollectiveSpec& spec, const Params& /*params*/,
                               const CostModel& /*model*/) {
  ScheduleBuilder b(spec, std::string(collective_name(spec.kind)) + "/linear");
  const Rank only = OneRankBuild::current();
  if (only >= 0 && only < spec.nranks && spec.kind == CollectiveKind::kAlltoallv) {
    emit_one_rank(b, b.spec(), only);
    return std::move(b).finish();
  }
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
  // The counts straight (a Layout's p x p displacements cost more than the estimate itself at
  // p = 1024), over the pairs that may carry data (an empty message costs nothing).
  Count own = 0;
  double elements = 0;
  std::vector<Time> sent(static_cast<std::size_t>(p), 0);
  std::vector<Time> received(static_cast<std::size_t>(p), 0);
  for_each_alltoallv_pair(spec, [&](Rank from, Rank to, Count m) {
    if (from == to) {
      own = std::max(own, m);
      return;
    }
    sent[static_cast<std::size_t>(from)] += c->message(m);
    received[static_cast<std::size_t>(to)] += c->message(m);
    elements += static_cast<double>(m);
  });
  Time busiest = 0;
  for (const Time t : sent) busiest = std::max(busiest, t);
  for (const Time t : received) busiest = std::max(busiest, t);
  return make_estimate(spec, c->copy_of(own) + busiest, elements, 2.0 * p * p, false);
}

}  // namespace optcoll::algorithms
