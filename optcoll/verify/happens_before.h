// SPDX-License-Identifier: Apache-2.0
// File: the happens-before graph of a schedule, under the most demanding protocol. Each op
// has a start and a done event: start(op) -> done(op); done(dep) -> start(op) for every
// `after` dependency; and for a message, start(send) -> done(recv) and start(recv) ->
// done(send) (rendezvous: a send completes only once its receive is posted). If this graph
// is acyclic, no protocol can deadlock; a cycle is a set of ops that may wait for each other
// forever. Traversed iteratively (Kahn's algorithm): schedules have millions of ops.
#pragma once

#include <cstddef>
#include <vector>

#include "optcoll/verify/flat_schedule.h"

namespace optcoll::verify_detail {

// Marks a start-order entry whose op is the second half of its message to start: from then
// on both halves are posted and the data can move (both complete only afterwards).
inline constexpr GlobalOp kCompletesPair = GlobalOp{1} << 31;

struct EventOrder {
  // Every op once, in an order of their start events consistent with happens-before (each
  // op after its dependencies are done). Complete iff the graph is acyclic.
  std::vector<GlobalOp> starts;
  // When it is not: the ops of one wait cycle, each waiting for the next (and the last for
  // the first), and how many ops can never complete.
  std::vector<GlobalOp> cycle;
  std::size_t stuck = 0;

  bool acyclic() const { return cycle.empty(); }
};

EventOrder order_events(const FlatSchedule& flat);

}  // namespace optcoll::verify_detail
