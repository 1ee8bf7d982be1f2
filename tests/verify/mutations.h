// SPDX-License-Identifier: Apache-2.0
// File: helpers that damage valid schedules in controlled ways, and report queries, for the
// verifier's mutation tests.
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/schedule/schedule.h"
#include "optcoll/schedule/validate.h"
#include "optcoll/verify/verify.h"

namespace optcoll::testing {

struct OpAt {
  Rank rank = kNoRank;
  OpId op = kNoOp;
};

inline Op& op_at(Schedule& s, OpAt at) {
  return s.ranks[static_cast<std::size_t>(at.rank)].ops[static_cast<std::size_t>(at.op)];
}

// Every op for which `pred(rank, op)` holds, in rank and op order.
inline std::vector<OpAt> find_ops(const Schedule& s,
                                  const std::function<bool(Rank, const Op&)>& pred) {
  std::vector<OpAt> found;
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    const auto& ops = s.ranks[r].ops;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (pred(static_cast<Rank>(r), ops[i])) {
        found.push_back({static_cast<Rank>(r), static_cast<OpId>(i)});
      }
    }
  }
  return found;
}

template <typename A>
std::vector<OpAt> ops_of_kind(const Schedule& s) {
  return find_ops(s, [](Rank, const Op& op) { return std::holds_alternative<A>(op.action); });
}

// Removes one op. Ops that waited for it wait for its dependencies instead (so no ordering
// is lost), and later ops are renumbered.
inline void remove_op(Schedule& s, OpAt at) {
  auto& ops = s.ranks[static_cast<std::size_t>(at.rank)].ops;
  const OpDeps inherited = ops[static_cast<std::size_t>(at.op)].after;
  ops.erase(ops.begin() + at.op);
  for (std::size_t i = static_cast<std::size_t>(at.op); i < ops.size(); ++i) {
    auto& after = ops[i].after;
    if (std::find(after.begin(), after.end(), at.op) != after.end()) {
      after.insert(after.end(), inherited.begin(), inherited.end());
    }
    OpDeps renumbered;
    for (const OpId d : after) {
      if (d != at.op) renumbered.push_back(d > at.op ? d - 1 : d);
    }
    std::sort(renumbered.begin(), renumbered.end());
    renumbered.erase(std::unique(renumbered.begin(), renumbered.end()), renumbered.end());
    after = std::move(renumbered);
  }
}

// The other half of the message that `at` is part of.
inline OpAt partner_of(const Schedule& s, OpAt at) {
  const auto match = match_messages(s);
  const OpRef ref = match[static_cast<std::size_t>(at.rank)][static_cast<std::size_t>(at.op)];
  return {ref.rank, ref.op};
}

// Removes both halves of the message that `at` is part of.
inline void drop_message(Schedule& s, OpAt at) {
  const OpAt other = partner_of(s, at);
  remove_op(s, at);
  remove_op(s, other);
}

// Appends an op to a rank that waits for all of that rank's ops (so it races with nothing).
inline OpId append_after_all(Schedule& s, Rank r, Action action, std::int32_t seq = -1) {
  auto& ops = s.ranks[static_cast<std::size_t>(r)].ops;
  Op op;
  op.action = action;
  op.seq = seq;
  for (OpId i = 0; i < static_cast<OpId>(ops.size()); ++i) op.after.push_back(i);
  ops.push_back(std::move(op));
  return static_cast<OpId>(ops.size() - 1);
}

// A seq not yet used on the ordered pair (from, to).
inline std::int32_t unused_seq(const Schedule& s, Rank from, Rank to) {
  std::int32_t next = 0;
  for (const Op& op : s.ranks[static_cast<std::size_t>(from)].ops) {
    if (is_communication(op.action) && peer_of(op.action) == to) next = std::max(next, op.seq + 1);
  }
  for (const Op& op : s.ranks[static_cast<std::size_t>(to)].ops) {
    if (is_communication(op.action) && peer_of(op.action) == from) {
      next = std::max(next, op.seq + 1);
    }
  }
  return next;
}

inline bool has_check(const VerifyReport& report, VerifyCheck check) {
  return std::any_of(report.diagnostics.begin(), report.diagnostics.end(),
                     [check](const Diagnostic& d) { return d.check == check; });
}

// The first diagnostic of `check` whose message contains `fragment`, or nullptr.
inline const Diagnostic* find_diagnostic(const VerifyReport& report, VerifyCheck check,
                                         const std::string& fragment = "") {
  for (const Diagnostic& d : report.diagnostics) {
    if (d.check == check && d.message.find(fragment) != std::string::npos) return &d;
  }
  return nullptr;
}

}  // namespace optcoll::testing
