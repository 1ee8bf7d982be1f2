// SPDX-License-Identifier: Apache-2.0
// File: simulate(): checks its input, runs the engine (engine.cc) and turns the engine's
// arrays into a SimResult: makespan, per-rank finish, critical path, optional per-op timing.
//
// ---- Simulation semantics (docs/design.md, "Simulator semantics (contract)", repeats it) ---
//
// Time starts at 0 on every rank. Every op has a ready time: when the last op of its `after`
// set completes (0 if the set is empty), or its release time (Op::not_before) if that is later.
//
// Transfers. A Send on rank i and the matching Recv or RecvReduce on rank j (same ordered
//   pair and seq) form one transfer of m elements. It starts when both ops are ready and both
//   ranks have a free port, holds one port at each end for model.transfer_time(i, j, m,
//   elem_bytes) = alpha_ij + h + beta_ij * units(m), and both ops complete at its end; h is
//   the handshake of a message above rendezvous_bytes (CostModel::handshake_time:
//   rendezvous_alpha, none from rendezvous_max_bytes on within a node, else 0). A RecvReduce
//   then still reduces the received elements (below) before it completes. A transfer of m = 0
//   elements costs nothing and holds nothing: both ops complete as soon as both are ready.
// Links (only when the model has a topology, docs/math/torus-bucket.md §6). A transfer of m > 0
//   elements from i to j also holds every link of the dimension-ordered route from i to j
//   (Topology::route) for its whole duration (circuit / wormhole: alpha + beta*m, whatever
//   the number of hops), and starts only when all of them are free as well as the ports.
//   A transfer that finds a link busy waits in that link's queue and is retried, in the
//   start order below, when the link is released; it reserves nothing meanwhile. Without a
//   topology nothing of this exists (and costs nothing).
// NICs (only when the model has a placement). A transfer of m > 0 elements between ranks on
//   different nodes costs inter_alpha + inter_beta * units(m) (CostModel::latency/per_unit)
//   and holds one of the sending node's nic_ports outgoing channels and one of the receiving
//   node's nic_ports incoming channels for its whole duration, as a route of two links that
//   each carry up to nic_ports transfers (waiting and retrying as for topology links). One
//   within a node costs alpha + beta * units(m) and holds no channel.
// Ports. Full duplex: a rank has `ports` send ports and `ports` receive ports, so up to
//   `ports` sends and `ports` receives are in progress at once. Half duplex: `ports`
//   communications in total.
// Send modes (CostModel::send_mode, for Sends of at least send_mode_min_bytes; smaller ones
//   are port sends). kPort: as above. kShared: a Send whose source slice (buffer, offset,
//   count) equals that of a Send of the same rank in progress, when it is tried, joins it:
//   it needs and holds no port at its rank (the receiver's port, links and the transfer time
//   are as above). Without `overlap` it is still a communication in progress for its rank's
//   processor. A Send waiting for a port is retried when a port is released, not when an
//   identical send starts. kReceiver (single copy: the receiver reads the sender's buffer):
//   the Send holds its sender's port only for model.send_port_time = min(send_gap, the
//   transfer time), and without a send gap nothing at all, neither a port nor (without
//   overlap) the processor; the receiver's port and the transfer time are as above.
// Send gap (only when the model sets send_gap, LogGP's g). A Send of m > 0 elements that
//   holds a port releases it after model.send_port_time = min(g + beta_ij * units(m), the
//   transfer time), not at the transfer's end: its rank may then start another send or
//   (without overlap) compute, while the receiver's port stays held and both ops still
//   complete at the transfer's end. The release is an event of its own instant; at one
//   instant releases are applied with the completions, before anything starts.
// Receive gap (only when the model sets receive_gap). Likewise at the other end: a transfer of
//   m > 0 elements releases its receiver's port after model.receive_port_time = min(g_r +
//   beta_ij * units(m), the transfer time), counted from the transfer's start; the receiver
//   may then take another message or (without overlap) compute, and the Recv or RecvReduce
//   still completes (a RecvReduce: starts its reduction) at the transfer's end.
// Computation. A Copy of m elements takes copy_time(m) = copy * units(m), a Reduce
//   reduce_time(m) = gamma * units(m), the reduction of a RecvReduce reduce_time(m) once its
//   transfer ended. A rank runs up to cores_per_rank computations at once (its processor's
//   cores; 1 by default), each on a core of its own at its full rate. Without `overlap`
//   ports and processor are one resource: a computation starts only when the rank has no
//   communication in progress, and while any runs the rank starts no communication. With
//   `overlap`, computation and communication proceed independently. A computation that takes
//   no time (m = 0, or a zero rate) is still a computation: it needs the processor (and,
//   without overlap, a rank with no communication in progress) at the instant it runs. This
//   keeps the model continuous as copy or gamma tend to 0; only empty *messages* are free.
// Folded copies (only when the model sets folds_copies). A Copy whose only dependent is a
//   reduction into exactly its destination (copy_folds_into: a RecvReduce, or a Reduce whose
//   source lies outside it; each reduction takes the first such Copy in program order) is
//   folded into it, as the executors do: it completes as soon as it is ready, takes no time
//   and holds nothing (the reduction then combines from the Copy's source, at its own cost).
// In-place combines (only when the model sets combines_in_place; the thread backend). A
//   message into a RecvReduce is combined straight from the sender's buffer in one pass: its
//   transfer takes alpha_ij + h + reduce_time(m) (instead of beta_ij * units(m)), holds the
//   receiver's port to its end (no receive gap) and, with node_beta, asks for the
//   reduction's traffic (1.5 units(m)); the RecvReduce completes with it (no reduction
//   follows).
// Helped transfers (only when the model sets helped_bytes; the thread backend's shared
//   copies; not where the ranks outnumber the model's cores: they do not spin). A transfer
//   of at least helped_bytes is helped when its sender waits for it: at
//   the end of the instant it starts, the sender receives nothing, computes nothing and helps
//   no other transfer (its own sends in progress do not count: it waits for them), so a
//   receive or computation it starts at that instant rules it out, and of several such sends
//   of one rank the first in start order is helped. A helped transfer takes half its data
//   time: alpha_ij + h + beta_ij * units(m) / 2; into a
//   RecvReduce, the reduction is done in the same pass: alpha_ij + h + (beta_ij * units(m) +
//   reduce_time(m)) / 2 (in place: alpha_ij + h + reduce_time(m) / 2; with node_beta it asks
//   for the reduction's traffic as well), and the RecvReduce completes with it. Until it ends its
//   sender starts no receive and no computation (whatever overlap)
//   and, with cores, takes a processor; ports and gaps are as for any transfer.
// Shared processors and memory (only when the model sets cores or node_beta). Processors
//   (cores, shared by all ranks of the schedule whatever node each is on): a rank takes one
//   processor per computation it runs, or one while it runs none but holds a port (from its
//   transfer's start to its end, or to the gap's release; a transfer between nodes too, which
//   holds its NIC channels as well): with cores_per_rank = 1, one while it is busy. A rank
//   that waits for a message or a resource (a port, a NIC channel) is idle (it blocks or
//   yields its processor). Memory (node_beta, one node: never with a placement): every op in
//   progress with a duration
//   asks for its memory traffic over its duration (traffic / duration, units per time unit):
//   a Copy of m elements units(m) (kCopyTraffic), a Reduce or the reduction of a RecvReduce
//   1.5 units(m) (kReduceTraffic), a transfer units(m) when its Send is a kReceiver send and
//   2 units(m) otherwise. While b processors are taken and the ops in progress
//   ask for demand D, everything in progress advances at 1 / s of its rate, s = max(1,
//   b / cores, D * node_beta): the durations above are a rank's with a processor and the
//   memory of its own, and the clock between two instants runs s times slower. Nothing else
//   changes: the start order, and so the order of every event, is that of the run without
//   cores and node_beta.
// Release times. An op with not_before = t > 0 is not ready before t: its release is an
//   event of that instant, applied with the completions. Release times order nothing else
//   and hold nothing. (With cores or node_beta they are read on the unstretched clock.)
// Start order. Whenever work becomes ready or a resource is released, the work that may
//   start at that instant is started greedily in the order (ready time, rank, op index):
//   each item in turn starts if the resources it needs are free, otherwise it waits (it
//   reserves nothing, so later items may still start). A transfer's key is (the later of
//   its two sides' ready times, sender rank, Send op index); a computation's is its own, and
//   the reduction of a RecvReduce is keyed by the receiver (ready time = the transfer's end).
//   Completions at one instant are all applied before anything starts at that instant, so the
//   result does not depend on the order in which simultaneous events were found. Same input,
//   same output: nothing depends on hashing or addresses.
// Exactness. Times are only added (start + duration) and compared, never scaled or
//   accumulated otherwise: integer-valued parameters give exact integer times (below 2^53).
//   With cores or node_beta the time between two instants is scaled (by s): times may be
//   fractions.
// Deadlock. If ops remain but nothing is running and nothing can start, the result has
//   status kDeadlock, makespan = the last completion, no critical path, and `deadlock` names
//   up to 8 ops that are ready but wait for a partner that can never become ready (or, if
//   there are none, the first ops that never became ready).
// Critical path. Walking back from the op that completes last (ties: lowest rank, then op),
//   each op records why it started when it did, and the walk continues at that cause:
//     "dependency"      the latest op of its `after` set (on its own rank);
//     "message partner" a transfer that waited for the other side: the walk continues at the
//                       latest dependency of the partner op (on the partner's rank);
//     "port"/"processor" it was ready but a resource was busy: the walk continues at the op
//                       whose completion released it ("port" if that op communicated);
//     "start"           it was ready at time 0 (the first step);
//     "release time"    it waited for its release time: a step of the same op, from when its
//                       dependencies were met (and its partner's, for a transfer) to the
//                       release, comes before it, and the walk continues from that step.
//   A RecvReduce whose reduction had to wait for the processor appears with the start of its
//   reduction; otherwise an op's step spans its transfer start to its completion, except a
//   transfer whose early port release (send or receive gap) let the next step start: its
//   step ends at that release, while its message is still on its way (for a RecvReduce's
//   receive port the step names its Send, as for a completion). Every step starts exactly
//   when the previous one ends; the first starts at 0, the last ends at the makespan.
// Errors. A malformed schedule (require_well_formed) or an invalid model (validate_for)
//   throws Error(kInvalidArgument). A deadlock is a result, not an error.
// -------------------------------------------------------------------------------------------
#include "optcoll/sim/simulator.h"

#include <algorithm>

#include <fmt/format.h>

#include "optcoll/model/error.h"
#include "optcoll/schedule/validate.h"
#include "optcoll/sim/engine.h"

namespace optcoll {
namespace {

using sim::detail::Engine;
using sim::detail::Gid;
using sim::detail::kNoGid;
using sim::detail::OpKind;

constexpr std::size_t kMaxDeadlockOps = 8;

// The latest-finishing op of g's `after` set (ties: the highest op index), or kNoGid.
Gid latest_dependency(const Engine& engine, Gid g) {
  Gid best = kNoGid;
  const Rank r = engine.rank_of(g);
  for (const OpId d : engine.op(g).after) {
    const Gid dg = engine.gid(r, d);
    if (best == kNoGid || engine.end(dg) >= engine.end(best)) best = dg;
  }
  return best;
}

// When g's `after` set was complete (0 if empty).
Time dependency_time(const Engine& engine, Gid g) {
  const Gid d = latest_dependency(engine, g);
  return d == kNoGid ? 0 : engine.end(d);
}

// When g was ready: its `after` set complete and its release time reached.
Time ready_time(const Engine& engine, Gid g) {
  return std::max(dependency_time(engine, g), engine.release(g));
}

// What a blocker held: the Send or Recv of a transfer that ended held a port; a Copy, a
// Reduce or the reduction of a RecvReduce held the processor. (The engine names the Send
// when a RecvReduce's transfer released the receiver's port.)
const char* held_resource(const Engine& engine, Gid blocker) {
  const OpKind kind = engine.kind(blocker);
  return kind == OpKind::kSend || kind == OpKind::kRecv ? "port" : "processor";
}

// Whether `blocker` released what a step starting at `start` waited for at that instant: at
// its completion, or at a gap's early port release: a Send's own (send gap), a Recv's, or,
// when the engine names the Send for a RecvReduce, its partner's (receive gap).
bool released_at(const Engine& engine, Gid blocker, Time start) {
  if (engine.end(blocker) == start) return true;
  if (engine.released_early(blocker) && engine.port_release(blocker) == start) return true;
  const Gid other = engine.partner(blocker);
  return engine.kind(blocker) == OpKind::kSend && engine.released_early(other) &&
         engine.port_release(other) == start;
}

// The op that released what `step` waited for, released exactly at step.start.
Gid blocking_op(const Engine& engine, Gid blocker, CriticalStep& step) {
  OPTCOLL_CHECK(blocker != kNoGid && released_at(engine, blocker, step.start),
                "rank {} op {} started late with no blocker", step.rank, step.op);
  step.waited_for = held_resource(engine, blocker);
  return blocker;
}

std::vector<CriticalStep> critical_path(const Engine& engine) {
  std::vector<CriticalStep> path;
  // The op that completes last; ties: the first in program order (lowest rank, then op).
  const auto total = static_cast<Gid>(engine.op_count());
  Gid last = kNoGid;
  for (Gid g = 0; g < total; ++g) {
    if (last == kNoGid || engine.end_order(g) > engine.end_order(last) ||
        (engine.end_order(g) == engine.end_order(last) &&
         engine.order_of(g) < engine.order_of(last))) {
      last = g;
    }
  }
  Gid g = last;
  Time end = last == kNoGid ? 0 : engine.end(last);
  while (g != kNoGid) {
    OPTCOLL_CHECK(path.size() <= engine.op_count(), "critical path does not terminate");
    CriticalStep step;
    step.rank = engine.rank_of(g);
    step.op = engine.op_of(g);
    step.end = end;
    Gid next = kNoGid;
    const OpKind kind = engine.kind(g);
    const bool delayed_reduction =
        kind == OpKind::kRecvReduce && engine.start(g) > engine.end(engine.sender(g));
    // An op held until its release time: a step of its own for the wait, from when its
    // dependencies were met to the release, and the walk goes on from there.
    auto wait_for_release = [&](Time release, Time met) {
      step.waited_for = "release time";
      CriticalStep wait;
      wait.rank = step.rank;
      wait.op = step.op;
      wait.start = met;
      wait.end = release;
      path.push_back(std::move(step));
      step = std::move(wait);
    };
    if (sim::detail::is_computation(kind) || delayed_reduction) {
      step.start = engine.start(g);
      const Time ready = delayed_reduction ? engine.end(engine.sender(g)) : ready_time(engine, g);
      if (step.start > ready) {
        next = blocking_op(engine, engine.blocker(g), step);
      } else {
        const Time met = delayed_reduction ? ready : dependency_time(engine, g);
        if (!delayed_reduction && engine.release(g) > met) wait_for_release(step.start, met);
        next = latest_dependency(engine, g);
        step.waited_for = next == kNoGid ? "start" : "dependency";
      }
    } else {
      const Gid send = engine.sender(g);
      const Gid other = engine.partner(g);
      step.start = engine.start(send);
      const Time own_met = dependency_time(engine, g);
      const Time other_met = dependency_time(engine, other);
      const Time release = std::max(engine.release(g), engine.release(other));
      if (step.start > std::max({own_met, other_met, release})) {
        next = blocking_op(engine, engine.blocker(send), step);
      } else {
        if (release > std::max(own_met, other_met)) {
          wait_for_release(step.start, std::max(own_met, other_met));
        }
        if (own_met >= other_met) {
          next = latest_dependency(engine, g);
          step.waited_for = next == kNoGid ? "start" : "dependency";
        } else {
          next = latest_dependency(engine, other);
          step.waited_for = "message partner";
        }
      }
    }
    end = step.start;  // the next step (the cause) ends where this one starts
    path.push_back(std::move(step));
    g = next;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

std::string describe_deadlock(const Schedule& schedule, const Engine& engine) {
  std::vector<Gid> ready;        // the first ops, in program order, that are ready ...
  std::vector<Gid> never_ready;  // ... and that never became ready
  std::size_t waiting = 0;
  engine.for_each_in_program_order([&](Gid g) {
    if (engine.finished(g)) return;
    ++waiting;
    auto& list = engine.is_ready(g) ? ready : never_ready;
    if (list.size() < kMaxDeadlockOps) list.push_back(g);
  });
  const bool any_ready = !ready.empty();
  const std::vector<Gid>& stuck = any_ready ? ready : never_ready;
  std::string text =
      fmt::format("deadlock: {} of {} ops can never complete; ", waiting, engine.op_count());
  text += any_ready ? "ready but waiting for a partner that never becomes ready:" : "never ready:";
  for (const Gid g : stuck) {
    text += "\n  " + describe_op(schedule, engine.rank_of(g), engine.op_of(g));
  }
  if (waiting > stuck.size()) text += fmt::format("\n  ... and {} more", waiting - stuck.size());
  return text;
}

std::vector<std::vector<OpTiming>> timing(const Schedule& schedule, const Engine& engine) {
  std::vector<std::vector<OpTiming>> result(schedule.ranks.size());
  for (std::size_t r = 0; r < schedule.ranks.size(); ++r) {
    const auto rank = static_cast<Rank>(r);
    const auto& ops = schedule.ranks[r].ops;
    result[r].resize(ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Gid g = engine.gid(rank, static_cast<OpId>(i));
      OpTiming& t = result[r][i];
      bool deps_done = true;
      for (const OpId d : ops[i].after)
        deps_done = deps_done && engine.finished(engine.gid(rank, d));
      t.ready = deps_done ? ready_time(engine, g) : -1;
      t.start = sim::detail::is_computation(engine.kind(g)) ? engine.start(g)
                                                            : engine.start(engine.sender(g));
      t.end = engine.end(g);
      if (!sim::detail::is_computation(engine.kind(g)) && engine.released_early(g)) {
        t.port_release = engine.port_release(g);
      }
    }
  }
  return result;
}

}  // namespace

SimResult simulate(const Schedule& schedule, const CostModel& model, const SimOptions& options) {
  auto partners = well_formed_partners(schedule);
  validate_for(model, schedule.spec.nranks);
  Engine engine(schedule, model, std::move(partners));
  engine.run();

  SimResult result;
  result.ops = engine.op_count();
  result.events = engine.events();
  result.rank_finish.assign(schedule.ranks.size(), 0);
  // Each rank's last op by the engine's clock, then its real end (end_order: same order).
  std::vector<Gid> last_of_rank(schedule.ranks.size(), kNoGid);
  const auto total = static_cast<Gid>(engine.op_count());
  for (Gid g = 0; g < total; ++g) {  // in the engine's order: its arrays in memory order
    Gid& last = last_of_rank[static_cast<std::size_t>(engine.rank_of(g))];
    if (last == kNoGid || engine.end_order(g) > engine.end_order(last)) last = g;
  }
  for (std::size_t r = 0; r < last_of_rank.size(); ++r) {
    if (last_of_rank[r] != kNoGid) {
      result.rank_finish[r] = std::max<Time>(0, engine.end(last_of_rank[r]));
    }
  }
  for (const Time finish : result.rank_finish) result.makespan = std::max(result.makespan, finish);
  if (engine.complete()) {
    result.critical_path = critical_path(engine);
  } else {
    result.status = SimStatus::kDeadlock;
    result.deadlock = describe_deadlock(schedule, engine);
  }
  if (options.trace) result.timing = timing(schedule, engine);
  return result;
}

}  // namespace optcoll
