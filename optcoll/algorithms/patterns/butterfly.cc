// SPDX-License-Identifier: Apache-2.0
// File: recursive doubling / halving with the non-power-of-two fold (butterfly.h).
#include "optcoll/algorithms/patterns/butterfly.h"

#include "optcoll/model/error.h"

namespace optcoll::algorithms::patterns {
namespace {

std::size_t idx(Rank i) { return static_cast<std::size_t>(i); }

Piece slot_span(const Parts& slots, const Piece& range) {
  if (range.count == 0) return {slots[idx(range.offset)].offset, 0};
  return parts_span(slots, static_cast<Rank>(range.offset),
                    static_cast<Rank>(range.offset + range.count - 1));
}

}  // namespace

Fold::Fold(Rank group_size) : q(group_size) {
  OPTCOLL_CHECK(q >= 1, "empty group");
  while (pow2 * 2 <= q) {
    pow2 *= 2;
    ++bits;
  }
  rem = q - pow2;
}

Rank bit_reverse(Rank v, int bits) {
  Rank r = 0;
  for (int i = 0; i < bits; ++i) r |= ((v >> i) & 1) << (bits - 1 - i);
  return r;
}

Piece halving_range(Rank v, int k, Rank pow2) {
  Piece range{0, pow2};
  for (int j = 0; j <= k; ++j) {
    range.count /= 2;
    if ((v >> j) & 1) range.offset += range.count;
  }
  return range;
}

void fold_reduce(ScheduleBuilder& b, const Fold& fold, const Members& members,
                 const std::vector<Slice>& bases) {
  for (Rank i = 0; i < fold.rem; ++i) {
    b.transfer_reduce(members[idx(2 * i)], members[idx(2 * i + 1)], bases[idx(2 * i)],
                      bases[idx(2 * i + 1)], Side::kLeft);
  }
}

void unfold_result(ScheduleBuilder& b, const Fold& fold, const Members& members,
                   const std::vector<Slice>& bases) {
  for (Rank i = 0; i < fold.rem; ++i) {
    b.transfer(members[idx(2 * i + 1)], members[idx(2 * i)], bases[idx(2 * i + 1)],
               bases[idx(2 * i)]);
  }
}

void halving_reduce_scatter(ScheduleBuilder& b, const Fold& fold, const Members& members,
                            const std::vector<Slice>& bases, const Parts& slots) {
  for (int k = 0; k < fold.bits; ++k) {
    for (Rank v = 0; v < fold.pow2; ++v) {
      const Rank partner = v ^ (Rank{1} << k);
      const Piece span = slot_span(slots, halving_range(partner, k, fold.pow2));
      const Rank from = fold.player(v);
      const Rank to = fold.player(partner);
      b.transfer_reduce(members[idx(from)], members[idx(to)], at(bases[idx(from)], span),
                        at(bases[idx(to)], span), v < partner ? Side::kLeft : Side::kRight);
    }
  }
}

void halving_allgather(ScheduleBuilder& b, const Fold& fold, const Members& members,
                       const std::vector<Slice>& bases, const Parts& slots) {
  for (int k = fold.bits - 1; k >= 0; --k) {
    for (Rank v = 0; v < fold.pow2; ++v) {
      const Rank partner = v ^ (Rank{1} << k);
      const Piece span = slot_span(slots, halving_range(v, k, fold.pow2));
      const Rank from = fold.player(v);
      const Rank to = fold.player(partner);
      b.transfer(members[idx(from)], members[idx(to)], at(bases[idx(from)], span),
                 at(bases[idx(to)], span));
    }
  }
}

void halving_gather(ScheduleBuilder& b, const Fold& fold, const Members& members,
                    const std::vector<Slice>& bases, const Parts& slots, Rank target) {
  for (int k = fold.bits - 1; k >= 0; --k) {
    const Rank bit = Rank{1} << k;
    const Rank above = ~((bit << 1) - 1);
    for (Rank v = 0; v < fold.pow2; ++v) {
      // Still holding data: v agrees with the target on every bit above k; it sends if it
      // differs on bit k.
      if (((v ^ target) & above) != 0 || ((v ^ target) & bit) == 0) continue;
      const Piece span = slot_span(slots, halving_range(v, k, fold.pow2));
      const Rank from = fold.player(v);
      const Rank to = fold.player(v ^ bit);
      b.transfer(members[idx(from)], members[idx(to)], at(bases[idx(from)], span),
                 at(bases[idx(to)], span));
    }
  }
}

void doubling_allgather(ScheduleBuilder& b, const Members& members, const std::vector<Slice>& bases,
                        const Parts& parts, Held* held) {
  const Fold fold(static_cast<Rank>(members.size()));
  StepOrder order(members);
  for (Rank i = 0; i < fold.rem; ++i) {
    const Piece& part = parts[idx(2 * i)];
    transfer_new(b, held, members[idx(2 * i)], members[idx(2 * i + 1)], at(bases[idx(2 * i)], part),
                 at(bases[idx(2 * i + 1)], part));
  }
  for (Rank dist = 1; dist < fold.pow2; dist *= 2) {
    for (Rank v = 0; v < fold.pow2; ++v) {
      const Rank lo = v & ~(dist - 1);  // v holds virtual parts [lo, lo + dist)
      const Piece span = parts_span(parts, fold.first(lo), fold.last(lo + dist - 1));
      const Rank from = fold.player(v);
      const Rank to = fold.player(v ^ dist);
      const auto t = transfer_new(b, held, members[idx(from)], members[idx(to)],
                                  at(bases[idx(from)], span), at(bases[idx(to)], span));
      order.send(b, from, t);
      order.received(to, t);
    }
    order.end_step();
  }
  for (Rank i = 0; i < fold.rem; ++i) {
    transfer_new(b, held, members[idx(2 * i + 1)], members[idx(2 * i)], bases[idx(2 * i + 1)],
                 bases[idx(2 * i)]);
  }
}

void doubling_allreduce(ScheduleBuilder& b, const Members& members, const std::vector<Slice>& bases,
                        const std::vector<Slice>& sources) {
  const Fold fold(static_cast<Rank>(members.size()));
  // The last op that wrote each player's base: the fold's combine, then each step's.
  std::vector<OpId> last_write(idx(fold.pow2), kNoOp);
  for (Rank i = 0; i < fold.rem; ++i) {
    last_write[idx(i)] = b.transfer_reduce(members[idx(2 * i)], members[idx(2 * i + 1)],
                                           bases[idx(2 * i)], bases[idx(2 * i + 1)], Side::kLeft)
                             .recv;
  }
  if (fold.bits > 0) {
    std::vector<Slice> incoming(idx(fold.pow2));
    for (Rank v = 0; v < fold.pow2; ++v) {
      incoming[idx(v)] = b.scratch(members[idx(fold.player(v))], bases[0].count);
    }
    for (Rank dist = 1; dist < fold.pow2; dist *= 2) {
      for (Rank v = 0; v < fold.pow2; ++v) {
        const Rank from = fold.player(v);
        const Rank to = fold.player(v ^ dist);
        const bool unchanged = dist == 1 && last_write[idx(v)] == kNoOp && !sources.empty();
        const auto t =
            b.transfer(members[idx(from)], members[idx(to)],
                       unchanged ? sources[idx(from)] : bases[idx(from)], incoming[idx(v ^ dist)]);
        // Sendrecv: a player receives step k's partial once its own partial of step k-1 is
        // combined. Nothing else orders this receive (it fills a free scratch), and without
        // overlap an early receive would hold the port ahead of that combine.
        b.add_dependency(members[idx(to)], last_write[idx(v ^ dist)], t.recv);
      }
      for (Rank v = 0; v < fold.pow2; ++v) {
        const Rank at_rank = members[idx(fold.player(v))];
        last_write[idx(v)] = b.reduce(at_rank, incoming[idx(v)], bases[idx(fold.player(v))],
                                      (v ^ dist) < v ? Side::kLeft : Side::kRight);
      }
    }
  }
  unfold_result(b, fold, members, bases);
}

}  // namespace optcoll::algorithms::patterns
