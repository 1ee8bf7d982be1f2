// SPDX-License-Identifier: Apache-2.0
// File: structural checks of a Schedule: the shape every consumer relies on before it can
// safely index anything (slices in bounds, peers in range, dependencies pointing backwards,
// every message with exactly one matching receive). The verifier reports these as
// diagnostics; the simulator and executors refuse a schedule that has any.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "optcoll/schedule/schedule.h"

namespace optcoll {

struct StructureIssue {
  Rank rank = kNoRank;  // kNoRank: the schedule as a whole (spec, rank count)
  OpId op = kNoOp;
  std::string message;
};

// At most `max_issues` issues, in rank and op order.
std::vector<StructureIssue> structure_issues(const Schedule& schedule, std::size_t max_issues = 64);

// As above; when there is no issue, also stores match_messages_flat(schedule) in `partner`,
// from the same pass over the ops (each pass over a 5M-op schedule costs ~0.1 s).
std::vector<StructureIssue> structure_issues(const Schedule& schedule, std::size_t max_issues,
                                             std::vector<std::uint32_t>& partner);

// Throws Error(kInvalidArgument) that lists the first issues, if there are any.
void require_well_formed(const Schedule& schedule);

// require_well_formed(), and then match_messages_flat(schedule) from the same pass over the
// ops (the simulator needs both: at 18 M ops each pass costs about a second).
std::vector<std::uint32_t> well_formed_partners(const Schedule& schedule);

// For a well-formed schedule: for each rank and op, the (rank, op) of the matching other
// half of a message, or {kNoRank, kNoOp} for local ops. Built in O(ops log ops).
struct OpRef {
  Rank rank = kNoRank;
  OpId op = kNoOp;
};
std::vector<std::vector<OpRef>> match_messages(const Schedule& schedule);

// The same matching in flat form, for consumers that number ops globally, rank by rank
// (op i of rank r is op_base(r) + i, op_base(r) = the ops of ranks 0..r-1): partner[g] is
// the global number of the other half of g's message, or kNoPartner for local ops. Cheaper
// than match_messages at large p (no per-rank vectors). Throws InternalError on a
// malformed schedule or one with 2^32 - 1 ops or more.
inline constexpr std::uint32_t kNoPartner = 0xffffffffu;
std::vector<std::uint32_t> match_messages_flat(const Schedule& schedule);

}  // namespace optcoll
