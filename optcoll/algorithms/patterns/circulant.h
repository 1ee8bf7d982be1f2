// SPDX-License-Identifier: Apache-2.0
// File: the round-optimal n-block broadcast schedule on a circulant graph (Träff and Ripke's
// communication pattern; bcast/circulant.cc describes the algorithm, its cost and how the
// receive schedules here are found).
//
// Ranks are relative to the root (the root is 0). With q = ceil(log2 p) and the skips
// s_q = p, s_k = ceil(s_{k+1}/2) (s_0 = 1), round i uses k = i mod q: every rank r sends one
// block to (r + s_k) mod p and receives one from (r − s_k) mod p. Rounds come in phases of
// q; rank r's receive schedule says, per k, which block it receives in round k of every
// phase, as a value v in [−q, q): in phase j it receives block v + j·q (negative: a block of
// the previous phase). What a rank sends in round k is what its successor receives then.
#pragma once

#include <cstdint>
#include <vector>

#include "optcoll/model/collective.h"
#include "optcoll/schedule/builder.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll::algorithms::patterns {

struct CirculantSchedule {
  Rank nranks = 0;
  int q = 0;                       // ceil(log2 p): rounds per phase
  std::vector<Rank> skips;         // s_0 = 1, ..., s_q = p (just {1} for p = 1)
  std::vector<std::int32_t> recv;  // recv[r·q + k] in [−q, q); rank 0's row unused
  std::int32_t received(Rank r, int k) const {
    return recv[static_cast<std::size_t>(r) * static_cast<std::size_t>(q) +
                static_cast<std::size_t>(k)];
  }
};

// The receive schedules for p >= 1 ranks (Träff's depth-first search, O(q^2) per rank).
CirculantSchedule circulant_schedule(Rank nranks);

// One transfer of the broadcast: block `block` from relative rank `from` to `to` in round
// `round` (0-based; the broadcast of n blocks takes n − 1 + q rounds for p >= 2).
struct CirculantTransfer {
  std::int64_t round = 0;
  Rank from = 0;
  Rank to = 0;
  Count block = 0;
};

// The transfers of broadcasting `blocks` >= 1 blocks from relative rank 0, by round: every
// rank other than the root receives every block exactly once, from a rank that holds it
// before that round, and sends and receives at most one block per round. Checked while
// generated (an internal error otherwise).
std::vector<CirculantTransfer> circulant_bcast_transfers(const CirculantSchedule& plan,
                                                         Count blocks);

// How many transfers each round of that broadcast holds (index: round), without listing
// them: what circulant_bcast_transfers(plan, blocks) has per round, counted rank by rank
// (a rank skips a block it already holds, and that depends on its own receipts alone) in
// O(p·rounds) time and O(rounds + blocks) memory. Cost estimates read only these counts:
// listing the transfers of every S = 1..q took 64% of auto's planning of a bcast at
// p = 262,144 (O(p·q²) transfers, 11.7 s in all). Not checked against the senders' holdings
// (circulant_bcast_transfers checks those).
std::vector<Rank> circulant_bcast_round_sizes(const CirculantSchedule& plan, Count blocks);

// Emitters. Ranks are relabelled so that `root` is 0; block j is
// two_tree.h's larger_last_segment(count, blocks, j) of the data. Every op of a rank in a
// round waits for the rank's ops of its previous round, so the simulated time is the longest
// path through the rounds (bcast/circulant.cc's cost).
//
// One-to-all: the root holds `data` (blocks <= data.count, or data.count = 0); afterwards
// every rank holds it at the same slice. The root's sends wait for its op `root_after`.
void emit_circulant_bcast(ScheduleBuilder& b, Rank root, Count blocks, Slice data,
                          OpId root_after = kNoOp);

// All-to-one, the broadcast's transfers reversed in time: every rank copies its
// `contribution` into an accumulator (scratch; on the root `result`), and in the reversal of
// the round in which it received block j it sends its accumulated block j to the rank it
// received it from, which lands it in scratch and combines it into its accumulator after its
// own send of that round. The order of combination follows the block trees, not rank order:
// callers need a commutative operator for p > 2 (for p = 2 the sides keep rank order).
// Returns the root's last op (kNoOp if none).
OpId emit_circulant_reduce(ScheduleBuilder& b, Rank root, Count blocks, Slice contribution,
                           Slice result);

}  // namespace optcoll::algorithms::patterns
