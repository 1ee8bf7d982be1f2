// SPDX-License-Identifier: Apache-2.0
// File: the discrete-event simulator: prices a schedule under a CostModel with the exact
// semantics of docs/design.md, "Simulator semantics (contract)".
//
// Semantics in short:
//   - a transfer of m elements from i to j starts when the Send on i and the matching Recv
//     (or RecvReduce) on j are both ready (their `after` sets complete) and both ranks have a
//     free port; it holds one port at each end for latency(i,j) + per_unit(i,j) * units(m);
//     m = 0 costs nothing and holds nothing;
//   - a Copy of m elements costs copy*units(m), a Reduce gamma*units(m); a RecvReduce is a
//     transfer followed by a reduction of the received elements on the receiver;
//   - ports: full duplex = `ports` sends and `ports` receives at once; half duplex = `ports`
//     communications in total;
//   - computation: one at a time per rank; without overlap it also needs the rank to have no
//     communication in progress and blocks new communication while it runs;
//   - an op with a release time (Op::not_before) is not ready before it;
//   - among startable work at the same instant, the order is (ready time, rank, op index),
//     where a transfer is ranked by its Send: same input, same output, always.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "optcoll/model/cost_model.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll {

enum class SimStatus : std::uint8_t { kOk, kDeadlock };

struct OpTiming {
  Time ready = -1;  // all `after` deps complete and its release time reached (-1: never)
  Time start = -1;  // work began (transfer start, or computation start)
  Time end = -1;    // op complete
  // A Send, Recv or RecvReduce whose port was released before the transfer's end
  // (CostModel::send_gap, receive_gap): the release; the message is in flight from there to
  // the transfer's end. -1 otherwise.
  Time port_release = -1;
};

// One step of the critical path, from time 0 to the makespan.
struct CriticalStep {
  Rank rank = kNoRank;
  OpId op = kNoOp;
  Time start = 0;
  Time end = 0;
  std::string waited_for;  // why it started when it did: "dependency", "message partner",
                           // "port", "processor", or "start"
};

struct SimResult {
  SimStatus status = SimStatus::kOk;
  std::string deadlock;  // for kDeadlock: names the ops that can never run
  Time makespan = 0;
  std::vector<Time> rank_finish;              // per rank: when its last op completed
  std::vector<CriticalStep> critical_path;    // empty on deadlock
  std::vector<std::vector<OpTiming>> timing;  // [rank][op], only with SimOptions::trace
  std::size_t ops = 0;
  std::size_t events = 0;
};

struct SimOptions {
  bool trace = false;  // record every op's timing (needed by the trace exporters)
};

// Throws Error(kInvalidArgument) for a malformed schedule or an invalid model (or a pair
// matrix whose size differs from the schedule's rank count). A deadlock is a result.
SimResult simulate(const Schedule& schedule, const CostModel& model,
                   const SimOptions& options = {});

}  // namespace optcoll
