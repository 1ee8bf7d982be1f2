// SPDX-License-Identifier: Apache-2.0
// File: topological order of the happens-before graph, and wait-cycle extraction.
#include "optcoll/verify/happens_before.h"

#include <limits>

#include "optcoll/model/huge_pages.h"
#include "optcoll/schedule/validate.h"

namespace optcoll::verify_detail {
namespace {

// Events are encoded as op * 2 (start) or op * 2 + 1 (done).
using Event = std::uint32_t;
Event start_of(GlobalOp op) { return op << 1; }
Event done_of(GlobalOp op) { return (op << 1) | 1; }

struct Pending {
  std::vector<std::uint32_t> deps;   // per op: dependencies not yet done
  std::vector<std::uint8_t> starts;  // per op: starts (own, partner's) its done waits for
};

// Walks backwards from an op that never started, always to an event that never happened
// (one always exists: such an event still waits for something), until an event repeats.
std::vector<GlobalOp> find_cycle(const FlatSchedule& flat, const Pending& pending) {
  const std::size_t n = flat.op_count();
  GlobalOp first = 0;
  while (first < n && pending.deps[first] == 0) ++first;
  if (first == n) return {};
  constexpr std::uint32_t kUnseen = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> step(2 * n, kUnseen);
  std::vector<Event> path;
  Event e = start_of(first);
  while (step[e] == kUnseen) {
    step[e] = static_cast<std::uint32_t>(path.size());
    path.push_back(e);
    const GlobalOp op = e >> 1;
    if ((e & 1) == 0) {
      for (std::uint32_t k = flat.dep_start[op]; k < flat.dep_start[op + 1]; ++k) {
        if (pending.starts[flat.deps[k]] != 0) {
          e = done_of(flat.deps[k]);
          break;
        }
      }
    } else {
      e = pending.deps[op] != 0 ? start_of(op) : start_of(flat.partner[op]);
    }
  }
  std::vector<GlobalOp> cycle;
  for (std::size_t k = step[e]; k < path.size(); ++k) {
    const GlobalOp op = path[k] >> 1;
    if (cycle.empty() || cycle.back() != op) cycle.push_back(op);
  }
  if (cycle.size() > 1 && cycle.front() == cycle.back()) cycle.pop_back();
  return cycle;
}

}  // namespace

EventOrder order_events(const FlatSchedule& flat) {
  const std::size_t n = flat.op_count();
  Pending pending;
  reserve_on_huge_pages(pending.deps, n);
  reserve_on_huge_pages(pending.starts, n);
  pending.deps.resize(n);
  pending.starts.resize(n);
  for (GlobalOp g = 0; g < n; ++g) {
    pending.deps[g] = flat.dep_start[g + 1] - flat.dep_start[g];
    pending.starts[g] = flat.partner[g] == kNoPartner ? 1 : 2;
  }
  EventOrder order;
  reserve_on_huge_pages(order.starts, n);
  // A stack of the events whose causes have all happened.
  std::vector<Event> ready;
  const auto finish = [&](GlobalOp g) {  // done(g): its dependents may start
    for (std::uint32_t k = flat.succ_start[g]; k < flat.succ_start[g + 1]; ++k) {
      const GlobalOp x = flat.succs[k];
      if (--pending.deps[x] == 0) ready.push_back(start_of(x));
    }
  };
  // The ops without dependencies are the stack's bottom entries, in op order, each popped
  // once all pushed above it are handled: pushing each one, from the last, only when the
  // stack runs empty gives the same order, and the stack stays small (it once held half of
  // the 16 M ops of the two-level allreduce at p = 65,536 from the start).
  GlobalOp unseeded = static_cast<GlobalOp>(n);  // ops below this may still need seeding
  while (true) {
    if (ready.empty()) {
      while (unseeded > 0 && flat.dep_start[unseeded] != flat.dep_start[unseeded - 1]) {
        --unseeded;  // op unseeded - 1 has dependencies
      }
      if (unseeded == 0) break;
      ready.push_back(start_of(--unseeded));
    }
    const Event e = ready.back();
    ready.pop_back();
    const GlobalOp g = e >> 1;
    if ((e & 1) != 0) {
      finish(g);
      continue;
    }
    GlobalOp entry = g;
    const GlobalOp q = flat.partner[g];
    if (q != kNoPartner && --pending.starts[q] == 0) {
      ready.push_back(done_of(q));
      entry |= kCompletesPair;
    }
    order.starts.push_back(entry);
    if (--pending.starts[g] == 0) finish(g);  // its done event is ready: handle it at once
  }
  // Once every op has started, every done event has become ready as well.
  if (order.starts.size() == n) return order;
  for (GlobalOp g = 0; g < n; ++g) order.stuck += pending.starts[g] != 0 ? 1 : 0;
  order.cycle = find_cycle(flat, pending);
  return order;
}

}  // namespace optcoll::verify_detail
