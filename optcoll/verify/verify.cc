// SPDX-License-Identifier: Apache-2.0
// File: verify(): runs the checks in order (structure; then races, deadlock, semantics or
// barrier synchronization over a flattened copy of the schedule) and assembles the report.
#include "optcoll/verify/verify.h"

#include <algorithm>

#include <fmt/format.h>

#include "optcoll/schedule/validate.h"
#include "optcoll/verify/diagnostics.h"
#include "optcoll/verify/flat_schedule.h"
#include "optcoll/verify/happens_before.h"
#include "optcoll/verify/races.h"
#include "optcoll/verify/symbolic.h"
#include "optcoll/verify/synchronization.h"

namespace optcoll {
namespace {

using verify_detail::DiagnosticList;

constexpr std::size_t kMaxCycleOpsShown = 8;

std::vector<Diagnostic> structure_diagnostics(const std::vector<StructureIssue>& issues) {
  std::vector<Diagnostic> out;
  for (const StructureIssue& issue : issues) {
    Diagnostic d;
    d.check = VerifyCheck::kStructure;
    d.rank = issue.rank;
    d.op = issue.op;
    if (issue.rank == kNoRank) {
      d.message = issue.message;
    } else if (issue.op == kNoOp) {
      d.message = fmt::format("rank {}: {}", issue.rank, issue.message);
    } else {
      d.message = fmt::format("rank {} op {}: {}", issue.rank, issue.op, issue.message);
    }
    out.push_back(std::move(d));
  }
  return out;
}

void report_cycle(const Schedule& schedule, const verify_detail::FlatSchedule& flat,
                  const verify_detail::EventOrder& order, DiagnosticList& out) {
  const auto& cycle = order.cycle;
  std::string ops;
  for (std::size_t i = 0; i < cycle.size() && i < kMaxCycleOpsShown; ++i) {
    ops += fmt::format("[{}] waits for ",
                       describe_op(schedule, flat.rank_of(cycle[i]), flat.local_of(cycle[i])));
  }
  ops += cycle.size() > kMaxCycleOpsShown
             ? fmt::format("... ({} more ops) the first", cycle.size() - kMaxCycleOpsShown)
             : std::string("the first");
  Diagnostic d;
  d.check = VerifyCheck::kDeadlock;
  d.rank = flat.rank_of(cycle.front());
  d.op = flat.local_of(cycle.front());
  d.expected = "acyclic happens-before graph";
  d.actual = fmt::format("wait cycle of {} ops", cycle.size());
  d.message = fmt::format(
      "possible deadlock: {} ops wait for each other in a cycle, so {} ops can never complete "
      "under a rendezvous protocol: {}",
      cycle.size(), order.stuck, ops);
  out.add(std::move(d));
}

}  // namespace

std::string_view verify_check_name(VerifyCheck check) {
  switch (check) {
    case VerifyCheck::kStructure:
      return "structure";
    case VerifyCheck::kDeadlock:
      return "deadlock";
    case VerifyCheck::kRace:
      return "race";
    case VerifyCheck::kSemantics:
      return "semantics";
    case VerifyCheck::kSynchronization:
      return "synchronization";
  }
  return "unknown";
}

std::string VerifyReport::summary() const {
  std::string text;
  if (ok()) {
    text = fmt::format("ok ({} ops, {} messages)", ops, messages);
  } else {
    text = fmt::format("{}{} problem{} ({} ops, {} messages):", diagnostics.size(),
                       truncated ? "+" : "", diagnostics.size() == 1 ? "" : "s", ops, messages);
    for (const Diagnostic& d : diagnostics) {
      text += fmt::format("\n  {}: {}", verify_check_name(d.check), d.message);
    }
    if (truncated) text += "\n  (more problems were found; raise max_diagnostics to see them)";
  }
  for (const VerifyCheck check : skipped) {
    text += fmt::format("\n  note: the {} check was skipped (too large)", verify_check_name(check));
  }
  return text;
}

VerifyReport verify(const Schedule& schedule, const VerifyOptions& options) {
  const std::size_t max = std::max<std::size_t>(1, options.max_diagnostics);
  VerifyReport report;
  report.ops = schedule.op_count();
  std::vector<std::uint32_t> partner;
  const auto issues = structure_issues(schedule, max + 1, partner);
  if (!issues.empty()) {
    report.diagnostics = structure_diagnostics(issues);
    report.truncated = report.diagnostics.size() > max;
    report.diagnostics.resize(std::min(report.diagnostics.size(), max));
    return report;
  }
  const Layout layout = Layout::borrowing(schedule.spec);
  const auto flat = verify_detail::flatten(schedule, layout, std::move(partner));
  for (const verify_detail::GlobalOp q : flat.partner) report.messages += q != kNoPartner;
  report.messages /= 2;

  DiagnosticList deadlock(max);
  DiagnosticList races(max);
  DiagnosticList semantics(max);
  DiagnosticList synchronization(max);
  verify_detail::check_races(schedule, flat, races);
  const verify_detail::EventOrder order = verify_detail::order_events(flat);
  if (!order.acyclic()) report_cycle(schedule, flat, order, deadlock);
  if (!needs_synchronization(layout.kind())) {
    verify_detail::check_semantics(schedule, flat, layout, order.starts, order.acyclic(),
                                   semantics);
  } else if (order.acyclic() &&
             !verify_detail::check_synchronization(flat, order.starts, synchronization)) {
    report.skipped.push_back(VerifyCheck::kSynchronization);
  }

  for (DiagnosticList* list : {&deadlock, &races, &semantics, &synchronization}) {
    report.truncated = report.truncated || list->truncated();
    for (Diagnostic& d : list->items()) {
      if (report.diagnostics.size() == max) {
        report.truncated = true;
        break;
      }
      report.diagnostics.push_back(std::move(d));
    }
  }
  return report;
}

}  // namespace optcoll
