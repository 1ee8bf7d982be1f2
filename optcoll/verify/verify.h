// SPDX-License-Identifier: Apache-2.0
// File: the verifier. Proves a schedule correct for its spec, or says exactly why not:
//   1. structure: slices in bounds, each (src, dst, seq) send has exactly one receive with
//      the same count, dependencies point backwards;
//   2. safety: no deadlock under any message protocol (the happens-before graph with
//      rendezvous edges is acyclic), and no race between unordered ops on a rank;
//   3. semantics, by symbolic execution: every output element holds exactly the value the
//      postcondition (model/collective.h) requires, each contribution reduced exactly once,
//      in rank order when the operator is non-commutative; barrier: every rank finishes
//      after every rank started.
// Checks 2 and 3 run only on a structurally sound schedule; the output comparison and the
// barrier check only when there is no deadlock. Costs are linear in ops and buffer cells
// (slice boundaries), not in elements: a bcast to 2^20 ranks takes well under a second
// whatever the message size (bench/verify_bench.cc).
// It never throws for a bad schedule and never prints: the report is the result.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "optcoll/schedule/schedule.h"

namespace optcoll {

enum class VerifyCheck : std::uint8_t {
  kStructure,
  kDeadlock,
  kRace,
  kSemantics,
  kSynchronization,
};
std::string_view verify_check_name(VerifyCheck check);  // "structure", "deadlock", ...

struct Diagnostic {
  VerifyCheck check = VerifyCheck::kStructure;
  Rank rank = kNoRank;   // kNoRank: about the schedule as a whole
  OpId op = kNoOp;       // kNoOp: about the rank as a whole (e.g. its final output)
  Count element = -1;    // buffer element, where one is concerned
  std::string expected;  // symbolic value expected, where relevant ("x[5]{0..7}")
  std::string actual;    // symbolic value found ("x[5]{0..3}", "undefined", ...)
  std::string message;   // one full sentence: what, where, expected vs actual
};

struct VerifyReport {
  std::vector<Diagnostic> diagnostics;
  bool truncated = false;  // more problems than max_diagnostics were found
  std::size_t ops = 0;     // ops checked
  std::size_t messages = 0;
  // Checks that were not run because they would cost too much: only kSynchronization, for
  // barriers with ceil(p/64) x (ops + dependencies) > 2^30 (dissemination above p ~ 20000).
  std::vector<VerifyCheck> skipped;

  bool ok() const { return diagnostics.empty(); }
  std::string summary() const;  // "ok (1234 ops, 560 messages)" or the first diagnostics
};

struct VerifyOptions {
  std::size_t max_diagnostics = 32;
};

VerifyReport verify(const Schedule& schedule, const VerifyOptions& options = {});

}  // namespace optcoll
