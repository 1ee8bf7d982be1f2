// SPDX-License-Identifier: Apache-2.0
// File: butterfly geometry (recursive doubling and halving) for any group size, and the
// butterfly phases on a group (group_phases.h vocabulary: members, bases, parts).
//
// Fold. With q members and q' the largest power of two <= q, rem = q - q': the first 2·rem
// members pair up (2i, 2i+1); the even one is folded into the odd one, which plays virtual
// rank i. Members 2·rem.. play virtual ranks rem... Every virtual rank stands for a
// contiguous index range (two members or one), in order, so reductions keep rank order.
//
//   q = 6 (q' = 4, rem = 2):  members 0 1 | 2 3 | 4 | 5
//                             virtual    0  |  1  | 2 | 3   (played by members 1, 3, 4, 5)
//
// Halving. Over q' slots (consecutive pieces of the working slice): in step k = 0, 1, ...
// virtual rank v and v ^ 2^k split the slot range they share; v keeps the lower half if bit
// k of v is 0. Partners are at increasing distance, so each partial result always covers a
// contiguous range of virtual ranks (lower ranks combined on the left). After log2 q' steps
// v holds slot bitreverse(v).
#pragma once

#include <vector>

#include "optcoll/algorithms/patterns/group_phases.h"

namespace optcoll::algorithms::patterns {

struct Fold {
  explicit Fold(Rank q);
  Rank q = 0;
  Rank pow2 = 1;  // q'
  Rank rem = 0;
  int bits = 0;  // log2 q'
  Rank player(Rank v) const { return v < rem ? 2 * v + 1 : v + rem; }
  // Virtual rank played by index i, or -1 for a folded-out (even, < 2·rem) index.
  Rank virtual_of(Rank i) const { return i < 2 * rem ? (i % 2 == 1 ? i / 2 : -1) : i - rem; }
  Rank first(Rank v) const { return v < rem ? 2 * v : v + rem; }  // indices v stands for
  Rank last(Rank v) const { return player(v); }
};

Rank bit_reverse(Rank v, int bits);
// Slot range [first, first + count) that virtual rank v holds after halving steps 0..k
// (k = -1: all pow2 slots).
Piece halving_range(Rank v, int k, Rank pow2);

// Fold step of a reduction: index 2i sends its whole base to 2i+1, which combines it on the
// left (i < rem).
void fold_reduce(ScheduleBuilder& b, const Fold& fold, const Members& members,
                 const std::vector<Slice>& bases);
// Unfold of a result: index 2i+1 sends its whole base to 2i.
void unfold_result(ScheduleBuilder& b, const Fold& fold, const Members& members,
                   const std::vector<Slice>& bases);

// Recursive halving reduce-scatter over `slots` (q' consecutive pieces) among the players
// (after fold_reduce): afterwards virtual rank v's base holds the reduction of slot
// bitreverse(v).
void halving_reduce_scatter(ScheduleBuilder& b, const Fold& fold, const Members& members,
                            const std::vector<Slice>& bases, const Parts& slots);
// The reverse of halving_reduce_scatter: recursive doubling allgather of the slots among
// the players (steps k = log2 q' - 1 .. 0).
void halving_allgather(ScheduleBuilder& b, const Fold& fold, const Members& members,
                       const std::vector<Slice>& bases, const Parts& slots);
// As halving_allgather, but only towards virtual rank `target`: a binomial gather that
// leaves every slot on target's player.
void halving_gather(ScheduleBuilder& b, const Fold& fold, const Members& members,
                    const std::vector<Slice>& bases, const Parts& slots, Rank target);

// Recursive doubling allgather of `parts` (one per member, any q): the folded-out members
// give their part to their partner, players exchange ranges of virtual parts with partners
// at distance 1, 2, 4, ..., and the players hand the whole result back.
void doubling_allgather(ScheduleBuilder& b, const Members& members, const std::vector<Slice>& bases,
                        const Parts& parts, Held* held = nullptr);

// Recursive doubling allreduce of whole bases (any q, rank order kept): fold, then players
// exchange whole partial results with partners at distance 1, 2, 4, ... (each receives
// into scratch and combines on the side of the lower ranks), then unfold. `sources` (empty,
// or one per member) holds the same values as the bases at the start (the inputs the bases
// are copied from): a player that did not fold sends its first partial from there, so its
// first message waits for no copy.
void doubling_allreduce(ScheduleBuilder& b, const Members& members, const std::vector<Slice>& bases,
                        const std::vector<Slice>& sources = {});

}  // namespace optcoll::algorithms::patterns
