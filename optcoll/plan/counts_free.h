// SPDX-License-Identifier: Apache-2.0
// File: MPI's gatherv, scatterv and alltoallv without a count exchange (docs/design.md,
// "MPI's gatherv/scatterv without a count exchange" and "MPI's alltoallv without the count
// matrix").
//
// MPI gives every count of a gatherv/scatterv at the root only; each other rank knows its
// own. A tree needs the counts on every rank, so an MPI-semantics call first exchanges them
// (gatherv: an allgather of one value per rank; scatterv: a bcast of p values from the
// root). gatherv/linear and scatterv/linear need none: each rank sends (receives) its own
// block straight to (from) the root. linear_wins_without_exchange says when skipping the
// exchange cannot lose, whatever the counts:
//
//   Under a one-ported, homogeneous model without overlap or topology, the root of any
//   gatherv receives (scatterv: sends) the T bytes of the other ranks through its one port,
//   in at least one message: at least alpha + beta*T, besides copying its own block, which
//   every algorithm of the registry does on the root's one processor. Linear takes that copy
//   plus k*alpha + beta*T for its k <= p - 1 non-empty blocks: it loses at most
//   (p - 2)*alpha to any algorithm, and wins outright once the exchange costs that much.
//   With a send gap g (CostModel::send_gap) the bound for T still holds (the root's port
//   is held at least beta*m per message, the last message takes alpha + beta*m), and a
//   scatterv root's k sends hold its port min(g, alpha) + beta*m each: linear scatterv
//   takes (k - 1)*min(g, alpha) + alpha + beta*T and loses at most (p - 2)*min(g, alpha).
//   A receive gap g_r (CostModel::receive_gap) does the same for a gatherv root's receives:
//   each holds its port min(g_r, alpha) + beta*m from its start, the last-started ends
//   alpha + beta*m after it, so any algorithm still needs alpha + beta*T and linear gatherv
//   loses at most (p - 2)*min(g_r, alpha). Without it: (p - 2)*alpha.
//   Shared processors (CostModel::cores) stretch the clock of every algorithm and of the
//   exchange, each by its own factor between 1 and p / cores (it depends on how many ranks
//   are busy at once): no bound independent of the counts survives that, so the rule is
//   taken on the model without cores (docs/design.md, "Shared processors and node memory"), and
//   likewise without the node's shared memory (node_beta), which stretches the clock the same way.
//   Sends the receiver does (SendMode::kReceiver) only help linear: its receivers then read their
//   blocks at once.
//
// Example: the reference cluster at p = 4: (4 - 2)*alpha against an allgather of 8 bytes
// per rank (two rounds, 2*alpha plus a little): linear without exchange. At p = 8, 6*alpha
// against three rounds: exchange, then the best tree.
// Restrictions: models with several ports, overlap, pair matrices or a topology answer
// false (the argument above does not hold there), as does p > kMaxCountsFreeRanks (a
// linear call's (p - 2)*alpha exceeds any small exchange there; planning the exchange at
// large p would cost more than it saves).
//
// alltoallv: MPI gives each rank its own row of the count matrix (sendcounts) and its own
// column (recvcounts); the exchange is an allgather of p values per rank (p^2 in all).
// alltoallv/linear and alltoallv/pairwise need only a rank's row and column. No bound on
// what they lose holds independently of the counts (linear's receivers contend, pairwise
// waits for each step's largest block), so auto keeps the exchange for p > 2; a call that
// forces one of them, and a nonblocking call (which must not wait for the other ranks),
// skips it.
#pragma once

#include <span>
#include <string_view>

#include "optcoll/model/collective.h"
#include "optcoll/model/cost_model.h"

namespace optcoll {

inline constexpr Rank kMaxCountsFreeRanks = 64;

// The predicted time of the count exchange an MPI-semantics `kind` (kGatherv, kScatterv or
// kAlltoallv) needs at p ranks: auto's best allgather of one int64 per rank, bcast of p
// int64, allgather of p int64 per rank.
Time count_exchange_time(CollectiveKind kind, Rank p, const CostModel& model);

// Whether `kind`/linear with each rank's own count is predicted no slower than every
// algorithm after the count exchange, for every count vector (the file comment; alltoallv:
// p <= 2 only). Throws Error(kInvalidArgument) for another kind, p < 1 or an invalid model.
bool linear_wins_without_exchange(CollectiveKind kind, Rank p, const CostModel& model);

// Whether the registry algorithm `algorithm` (its full name, "gatherv/linear") builds each
// rank's program from the counts MPI gives that rank alone, so that it runs without the
// count exchange: the stars (gatherv and scatterv linear and lpt_star: only the root, which
// knows every count, talks to more than one rank), alltoallv/linear and alltoallv/pairwise
// (tests/plan/counts_free_test.cc builds every rank's program of every registry algorithm of
// these kinds from that rank's counts and from all of them, and finds them equal exactly for
// these).
bool runs_from_own_counts(std::string_view algorithm);

// The spec a rank runs for the exchange-free linear call: the root's, with every count
// (`counts`); another rank's, with its own count at its place and 0 elsewhere (`counts` then
// holds only that one value, or all of them: the others are ignored). Linear's messages
// depend only on the blocks of the sender and the receiver, so the ranks' different specs
// still pair every message. Throws Error(kInvalidArgument) as validate() does.
CollectiveSpec counts_free_spec(CollectiveKind kind, Rank p, Rank root, Rank rank,
                                std::span<const Count> counts);
// The same into `spec`, reusing its storage (a caller that runs such calls back to back
// allocates nothing once `spec.counts` has p entries' room). `counts` must not alias it.
void assign_counts_free_spec(CollectiveSpec& spec, CollectiveKind kind, Rank p, Rank root,
                             Rank rank, std::span<const Count> counts);

// The alltoallv spec rank `rank` runs without the count exchange, into `spec` (reusing its
// storage): the p x p matrix (p = sent.size()) with `sent` as row `rank` (what it sends each
// rank), `received` as column `rank` (what it receives from each) and 0 elsewhere, held as that
// row and column alone (CollectiveSpec::counts_of = rank: 2p counts, not p^2). Throws
// Error(kInvalidArgument) when the sizes differ, `rank` is not a rank, a count is negative,
// or the rank's block to itself differs between the two (sent[rank] != received[rank]).
// Neither span may alias spec.counts.
void assign_alltoallv_counts_free_spec(CollectiveSpec& spec, Rank rank, std::span<const Count> sent,
                                       std::span<const Count> received);

}  // namespace optcoll
