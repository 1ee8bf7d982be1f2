// SPDX-License-Identifier: Apache-2.0
// File: MPI's gatherv and scatterv without a count exchange (docs/design.md, "MPI's
// gatherv/scatterv without a count exchange").
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
#pragma once

#include <span>

#include "optcoll/model/collective.h"
#include "optcoll/model/cost_model.h"

namespace optcoll {

inline constexpr Rank kMaxCountsFreeRanks = 64;

// The predicted time of the count exchange an MPI-semantics `kind` (kGatherv or kScatterv)
// needs at p ranks: auto's best allgather of one int64 per rank, resp. bcast of p int64.
Time count_exchange_time(CollectiveKind kind, Rank p, const CostModel& model);

// Whether `kind`/linear with each rank's own count is predicted no slower than every
// algorithm after the count exchange, for every count vector (the file comment). Throws
// Error(kInvalidArgument) for another kind, p < 1 or an invalid model.
bool linear_wins_without_exchange(CollectiveKind kind, Rank p, const CostModel& model);

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

}  // namespace optcoll
