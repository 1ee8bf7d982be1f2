// SPDX-License-Identifier: Apache-2.0
// File: the simulator on small hand-built schedules, one model switch at a time: ports,
// duplex, overlap, copy cost, per-pair matrices, per-byte units, empty messages, tie
// breaking, deadlock, invalid input and the critical path. Every expected time is computed
// by hand from the semantics in simulator.cc (the derivation is in the comment of each test).
#include "optcoll/sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/error.h"
#include "optcoll/schedule/builder.h"
#include "tests/testing/registry_cases.h"
#include "tests/testing/textbook_model.h"

namespace optcoll {
namespace {

using testing::kAlpha;
using testing::kBeta;
using testing::kGamma;

CostModel model(int ports = 1, Duplex duplex = Duplex::kFull, bool overlap = false) {
  CostModel m = testing::textbook_model();
  m.ports = ports;
  m.duplex = duplex;
  m.overlap = overlap;
  return m;
}

Slice out(Count offset, Count count) { return Slice{Buf::kOutput, offset, count}; }
Slice in(Count offset, Count count) { return Slice{Buf::kInput, offset, count}; }

// Root 0 of a bcast sends the whole n-element message to ranks 1..3, in that order, with no
// dependencies between the sends.
Schedule star(Count n) {
  ScheduleBuilder b(make_spec(CollectiveKind::kBcast, 4, n), "test/star");
  for (Rank child = 1; child < 4; ++child) b.transfer(0, child, out(0, n), out(0, n));
  return std::move(b).finish();
}

// A bcast root sends its 10 elements to each of ranks 1..p-1, then copies them to scratch
// (independently of the sends).
Schedule sends_then_copy(Rank p) {
  ScheduleBuilder b(make_spec(CollectiveKind::kBcast, p, 10), "test/sends_then_copy");
  for (Rank child = 1; child < p; ++child) b.transfer(0, child, out(0, 10), out(0, 10));
  const Slice tmp = b.scratch(0, 10);
  b.copy(0, out(0, 10), tmp);
  return std::move(b).finish();
}

// Ranks 0 and 1 of an allgather swap their m-element blocks at the same time.
Schedule exchange(Count m) {
  ScheduleBuilder b(make_spec(CollectiveKind::kAllgather, 2, m), "test/exchange");
  b.transfer(0, 1, in(0, m), out(0, m));
  b.transfer(1, 0, in(0, m), out(m, m));
  return std::move(b).finish();
}

const OpTiming& timing(const SimResult& r, Rank rank, OpId op) {
  return r.timing.at(static_cast<std::size_t>(rank)).at(static_cast<std::size_t>(op));
}

TEST(Ports, RootWithThreeChildren) {
  const Schedule s = star(10);                     // one transfer: T = 100 + 10 = 110
  EXPECT_EQ(simulate(s, model(1)).makespan, 330);  // one port: T, T, T in turn
  EXPECT_EQ(simulate(s, model(2)).makespan, 220);  // two ports: children 1, 2 at once, then 3
  EXPECT_EQ(simulate(s, model(3)).makespan, 110);
  const auto two = simulate(s, model(2), {.trace = true});
  EXPECT_EQ(two.rank_finish, (std::vector<Time>{220, 110, 110, 220}));
  EXPECT_EQ(timing(two, 0, 2).start, 110);  // the third send waits for a free port
  // Half duplex with two ports: the root's sends are its only communications, same result.
  EXPECT_EQ(simulate(s, model(2, Duplex::kHalf)).makespan, 220);
}

// Shared sends (CostModel::shared_send_min_bytes): a send whose source slice is that of a
// send of its rank in progress joins it and holds no send port; receivers are unchanged.
TEST(SharedSends, IdenticalSendsJoinASendInProgress) {
  const Schedule s = star(10);  // 10 elements of 4 bytes: 40 bytes; T = 110
  CostModel m = model(1);
  m.send_mode = SendMode::kShared;
  m.send_mode_min_bytes = 0;
  const auto joined = simulate(s, m, {.trace = true});
  EXPECT_EQ(joined.makespan, 110);  // all three at once, one port
  EXPECT_EQ(joined.rank_finish, (std::vector<Time>{110, 110, 110, 110}));
  m.send_mode = SendMode::kShared;
  m.send_mode_min_bytes = 40;  // the threshold is inclusive
  EXPECT_EQ(simulate(s, m).makespan, 110);
  m.send_mode = SendMode::kShared;
  m.send_mode_min_bytes = 41;  // below it, one port: T, T, T in turn
  EXPECT_EQ(simulate(s, m).makespan, 330);
  // Half duplex: the joined sends hold no port either.
  m.send_mode = SendMode::kShared;
  m.send_mode_min_bytes = 0;
  m.duplex = Duplex::kHalf;
  EXPECT_EQ(simulate(s, m).makespan, 110);
}

TEST(SharedSends, DifferentSlicesAndOneReceiverDoNotShare) {
  CostModel m = model(1);
  m.send_mode = SendMode::kShared;
  m.send_mode_min_bytes = 0;
  // Root 0 of a scatter sends two different 10-element blocks: T = 110 each, in turn.
  ScheduleBuilder scatter(make_spec(CollectiveKind::kScatter, 3, 10), "test/scatter");
  scatter.transfer(0, 1, in(10, 10), out(0, 10));
  scatter.transfer(0, 2, in(20, 10), out(0, 10));
  EXPECT_EQ(simulate(std::move(scatter).finish(), m).makespan, 220);
  // The same slice twice to one rank: the sender shares, the receiver's port does not.
  ScheduleBuilder twice(make_spec(CollectiveKind::kBcast, 2, 10), "test/twice");
  twice.transfer(0, 1, out(0, 10), out(0, 10));
  twice.transfer(0, 1, out(0, 10), out(0, 10));
  EXPECT_EQ(simulate(std::move(twice).finish(), m).makespan, 220);
}

TEST(SharedSends, AJoinedSendStillKeepsTheProcessorWithoutOverlap) {
  // Root 0 sends to 1, 2, 3 (ops 0-2) and then copies (op 3, independent, copy = 2: 20). The
  // link 0 -> 2 is slow (beta 3: T = 130). The sends to 2 and 3 join the one to 1; without
  // overlap the copy waits for the last of them (130), then runs on [130, 150].
  const Schedule s = sends_then_copy(4);
  CostModel m = model(1);
  m.copy = 2;
  m.send_mode = SendMode::kShared;
  m.send_mode_min_bytes = 0;
  m.pair_nranks = 4;
  m.pair_alpha.assign(16, kAlpha);
  m.pair_beta.assign(16, kBeta);
  m.pair_beta[0 * 4 + 2] = 3;
  EXPECT_EQ(simulate(s, m).makespan, 150);
  m.overlap = true;  // with overlap the copy runs at once
  EXPECT_EQ(simulate(s, m).makespan, 130);
}

// A send gap (CostModel::send_gap, LogGP's g): a send holds its sender's port for
// g + beta * m only; the message still arrives alpha + beta * m after it started, and its
// receiver's port is held all that time.
TEST(SendGap, ARootStartsItsNextSendAfterTheGap) {
  const Schedule s = star(10);  // T = 100 + 10 = 110; port time with g = 5: 5 + 10 = 15
  CostModel m = model(1);
  m.send_gap = 5;
  const auto r = simulate(s, m, {.trace = true});
  // Sends start at 0, 15, 30 and arrive at 110, 125, 140.
  EXPECT_EQ(r.makespan, 140);
  EXPECT_EQ(r.rank_finish, (std::vector<Time>{140, 110, 125, 140}));
  EXPECT_EQ(timing(r, 0, 1).start, 15);
  EXPECT_EQ(timing(r, 0, 2).start, 30);
  // The critical path: the first two sends end at their port releases, the third's arrival
  // ends the path.
  using Step = std::tuple<Time, Time, std::string>;
  std::vector<Step> steps;
  for (const auto& step : r.critical_path)
    steps.emplace_back(step.start, step.end, step.waited_for);
  EXPECT_EQ(steps, (std::vector<Step>{{0, 15, "start"}, {15, 30, "port"}, {30, 140, "port"}}));
  // A gap as long as the transfer changes nothing; half duplex counts the port the same way.
  m.send_gap = 1000;
  EXPECT_EQ(simulate(s, m).makespan, 330);
  m.send_gap = 5;
  m.duplex = Duplex::kHalf;
  EXPECT_EQ(simulate(s, m).makespan, 140);
}

TEST(SendGap, ReceiversStillTakeTheWholeTransfer) {
  // Ranks 1..3 send 10 elements each to rank 0 (a gather's fan-in): one receive port, so
  // T, T, T in turn whatever the gap.
  ScheduleBuilder b(make_spec(CollectiveKind::kGather, 4, 10), "test/fan_in");
  for (Rank child = 1; child < 4; ++child) {
    b.transfer(child, 0, in(0, 10), out(10 * child, 10));
  }
  const Schedule s = std::move(b).finish();
  CostModel m = model(1);
  m.send_gap = 5;
  EXPECT_EQ(simulate(s, m).makespan, 330);
}

TEST(SendGap, TheSenderComputesOnceItsPortIsFree) {
  // Rank 0 sends 10 elements to rank 1 (T = 110, port time 15), then copies independently
  // (copy = 2: 20). Without overlap the copy waits for the port, not for the arrival:
  // [15, 35]; the transfer still ends at 110.
  const Schedule s = sends_then_copy(2);
  CostModel m = model(1);
  m.copy = 2;
  m.send_gap = 5;
  const auto r = simulate(s, m, {.trace = true});
  EXPECT_EQ(timing(r, 0, 1).start, 15);
  EXPECT_EQ(r.makespan, 110);
  // The transfer ends last, so the path is that one step.
  ASSERT_EQ(r.critical_path.size(), 1u);
  EXPECT_EQ(r.critical_path[0].end, 110);
  // A longer copy (copy = 10: 100 from 15) ends last: the path is the send up to its port release,
  // then the copy, which waited for the port (without overlap one resource with the processor,
  // named after the op that released it).
  m.copy = 10;
  const auto longer = simulate(s, m);
  EXPECT_EQ(longer.makespan, 115);
  ASSERT_EQ(longer.critical_path.size(), 2u);
  EXPECT_EQ(longer.critical_path[0].end, 15);
  EXPECT_EQ(longer.critical_path[1].start, 15);
  EXPECT_EQ(longer.critical_path[1].waited_for, "port");
  m.copy = 2;
  m.send_gap.reset();  // without a gap the copy waits for the whole transfer
  EXPECT_EQ(simulate(s, m).makespan, 130);
}

// A receive gap (CostModel::receive_gap, LogGP's g at the receiver): a transfer holds its
// receiver's port for g + beta * m from its start; its data still arrive alpha + beta * m
// after it started.
Schedule fan_in(bool reducing) {
  ScheduleBuilder b(make_spec(reducing ? CollectiveKind::kReduce : CollectiveKind::kGather, 4, 10),
                    "test/fan_in");
  for (Rank child = 1; child < 4; ++child) {
    if (reducing) {  // each into its own scratch slice, so that the receives are independent
      b.transfer_reduce(child, 0, in(0, 10), b.scratch(0, 10), Side::kLeft);
    } else {
      b.transfer(child, 0, in(0, 10), out(10 * child, 10));
    }
  }
  return std::move(b).finish();
}

std::vector<std::tuple<Rank, Time, Time, std::string>> path_of(const SimResult& r) {
  std::vector<std::tuple<Rank, Time, Time, std::string>> steps;
  for (const auto& step : r.critical_path) {
    steps.emplace_back(step.rank, step.start, step.end, step.waited_for);
  }
  return steps;
}

TEST(ReceiveGap, ARootTakesItsNextMessageAfterTheGap) {
  const Schedule s = fan_in(false);  // T = 110; the receiver's port time with g = 5: 15
  CostModel m = model(1);
  m.receive_gap = 5;
  const auto r = simulate(s, m, {.trace = true});
  // Transfers start at 0, 15, 30 and arrive at 110, 125, 140.
  EXPECT_EQ(r.makespan, 140);
  EXPECT_EQ(r.rank_finish, (std::vector<Time>{140, 110, 125, 140}));
  EXPECT_EQ(timing(r, 0, 0).port_release, 15);  // the root's receives show their releases
  EXPECT_EQ(timing(r, 0, 2).port_release, 45);
  EXPECT_EQ(timing(r, 1, 0).port_release, -1);  // the senders held theirs to the end
  // The path: the root's first two receives end at their port releases.
  using Step = std::tuple<Rank, Time, Time, std::string>;
  EXPECT_EQ(path_of(r),
            (std::vector<Step>{{0, 0, 15, "start"}, {0, 15, 30, "port"}, {0, 30, 140, "port"}}));
  // A gap as long as the transfer changes nothing; half duplex counts the port the same way;
  // a send gap alone does not shorten a fan-in, and both gaps together are the receive gap's.
  m.receive_gap = 1000;
  EXPECT_EQ(simulate(s, m).makespan, 330);
  m.receive_gap = 5;
  m.duplex = Duplex::kHalf;
  EXPECT_EQ(simulate(s, m).makespan, 140);
  m.duplex = Duplex::kFull;
  m.send_gap = 5;
  EXPECT_EQ(simulate(s, m).makespan, 140);
  m.receive_gap.reset();
  EXPECT_EQ(simulate(s, m).makespan, 330);
}

TEST(ReceiveGap, ARootFanOutIsUnchanged) {
  // Without a send gap the root's sends hold its send port throughout: T, T, T in turn.
  CostModel m = model(1);
  m.receive_gap = 5;
  EXPECT_EQ(simulate(star(10), m).makespan, 330);
}

TEST(ReceiveGap, ReductionsWaitForTheirDataNotForThePort) {
  // Three RecvReduce into separate slices (gamma = 3: 30 each), without overlap: the
  // transfers start at 0, 15, 30 (the receiver's port is free after each gap, and with no
  // communication holding a port the processor is free too) and arrive at 110, 125, 140;
  // the reductions then run in turn on the one processor: [110, 140], [140, 170], [170, 200].
  const Schedule s = fan_in(true);
  CostModel m = model(1);
  m.receive_gap = 5;
  const auto r = simulate(s, m, {.trace = true});
  EXPECT_EQ(r.makespan, 200);
  EXPECT_EQ(timing(r, 0, 0).port_release, 15);
  EXPECT_EQ(timing(r, 0, 1).start, 15);  // the transfer's start
  EXPECT_EQ(timing(r, 0, 1).end, 170);   // its reduction waited for the processor
  // Free reductions: the last arrival ends the path, and the steps before it are the
  // transfers whose receive ports released at 15 and 30, named by their Sends (ranks 1, 2).
  m.gamma = 0;
  const auto free = simulate(s, m);
  EXPECT_EQ(free.makespan, 140);
  using Step = std::tuple<Rank, Time, Time, std::string>;
  EXPECT_EQ(path_of(free),
            (std::vector<Step>{{1, 0, 15, "start"}, {2, 15, 30, "port"}, {0, 30, 140, "port"}}));
}

TEST(Duplex, TwoRanksExchanging) {
  const Schedule s = exchange(10);  // T = 110
  // Full duplex: each rank sends and receives at once.
  const auto full = simulate(s, model(1, Duplex::kFull));
  EXPECT_EQ(full.makespan, 110);
  // Half duplex: one communication per rank at a time; rank 0's send has the smaller key
  // (ready 0, sender rank 0) and goes first, rank 1's send waits for the port.
  const auto half = simulate(s, model(1, Duplex::kHalf), {.trace = true});
  EXPECT_EQ(half.makespan, 220);
  EXPECT_EQ(timing(half, 0, 0).start, 0);    // rank 0's send
  EXPECT_EQ(timing(half, 1, 1).start, 110);  // rank 1's send
  // Two half-duplex ports suffice for one send and one receive.
  EXPECT_EQ(simulate(s, model(2, Duplex::kHalf)).makespan, 110);
}

// Rank 0 of a reduce receives-and-reduces n elements from rank 1 into its output (op 0),
// receives n elements from rank 2 into scratch (op 1, independent of op 0), then reduces
// scratch into its output (op 2). One port, T = 100 + 10 = 110, reduction 3 * 10 = 30.
Schedule recv_reduce_then_recv(Count n) {
  ScheduleBuilder b(make_spec(CollectiveKind::kReduce, 3, n), "test/overlap");
  b.transfer_reduce(1, 0, in(0, n), out(0, n), Side::kLeft);
  const Slice tmp = b.scratch(0, n);
  b.transfer(2, 0, in(0, n), tmp);
  b.reduce(0, tmp, out(0, n), Side::kLeft);
  return std::move(b).finish();
}

TEST(Overlap, RecvReduceFollowedByAnotherReceive) {
  const Schedule s = recv_reduce_then_recv(10);
  // Both transfers are ready at 0; 1->0 has the smaller key (sender 1) and runs on [0, 110].
  // Without overlap: at 110 the transfer 2->0 (ready since 0) comes before the reduction
  // (ready at 110) and takes the port on [110, 220]; the reduction needs a rank with no
  // communication, so it runs on [220, 250]; the final Reduce on [250, 280].
  const auto off = simulate(s, model(1, Duplex::kFull, false), {.trace = true});
  EXPECT_EQ(off.makespan, 280);
  EXPECT_EQ(timing(off, 0, 0).start, 0);    // RecvReduce: its transfer's start
  EXPECT_EQ(timing(off, 0, 0).end, 250);    // ... and the end of its reduction
  EXPECT_EQ(timing(off, 0, 1).start, 110);  // the plain receive
  // With overlap: the reduction runs on [110, 140] while 2->0 runs on [110, 220]; the final
  // Reduce on [220, 250].
  const auto on = simulate(s, model(1, Duplex::kFull, true), {.trace = true});
  EXPECT_EQ(on.makespan, 250);
  EXPECT_EQ(timing(on, 0, 0).end, 140);
  EXPECT_EQ(timing(on, 0, 1).end, 220);
}

TEST(Copy, CostAndOverlap) {
  // Gather root 0 copies its own 10-element block (copy = 2: 20) and receives rank 1's.
  ScheduleBuilder b(make_spec(CollectiveKind::kGather, 2, 10), "test/copy");
  b.copy(0, in(0, 10), out(0, 10));
  b.transfer(1, 0, in(0, 10), out(10, 10));
  const Schedule s = std::move(b).finish();
  CostModel m = model();
  m.copy = 2;
  EXPECT_EQ(simulate(s, m).makespan, 20 + 110);  // the copy (op 0) first, then the transfer
  m.overlap = true;
  EXPECT_EQ(simulate(s, m).makespan, 110);  // side by side
  // A Reduce costs gamma per element.
  ScheduleBuilder r(make_spec(CollectiveKind::kAllreduce, 1, 7), "test/reduce");
  r.copy(0, in(0, 7), out(0, 7));
  r.reduce(0, in(0, 7), out(0, 7), Side::kLeft);
  m.overlap = false;
  EXPECT_EQ(simulate(std::move(r).finish(), m).makespan, 7 * 2 + 7 * kGamma);
}

TEST(Pairs, NonHomogeneousMatrices) {
  // bcast/linear on 3 ranks: root 0 sends to 1, then to 2 (program order, one port).
  const Schedule s = algorithms::build("bcast/linear", make_spec(CollectiveKind::kBcast, 3, 10));
  CostModel m = model();
  m.pair_nranks = 3;
  // [from][to]; the reverse directions are made huge so that a transposed lookup would show.
  m.pair_alpha = {0, 10, 50, 1e6, 0, 1e6, 1e6, 1e6, 0};
  m.pair_beta = {0, 1, 2, 1e6, 0, 1e6, 1e6, 1e6, 0};
  const auto r = simulate(s, m);
  // 0->1: 10 + 10 * 1 = 20 on [0, 20]; 0->2: 50 + 10 * 2 = 70 on [20, 90].
  EXPECT_EQ(r.rank_finish, (std::vector<Time>{90, 20, 90}));
}

TEST(Units, PerByteWithEightByteElements) {
  CollectiveSpec spec = make_spec(CollectiveKind::kBcast, 2, 10);
  spec.elem_bytes = 8;
  ScheduleBuilder b(spec, "test/bytes");
  b.transfer(0, 1, out(0, 10), out(0, 10));
  const Schedule s = std::move(b).finish();
  CostModel m = model();
  m.beta = 0.5;
  m.per_byte = true;
  EXPECT_EQ(simulate(s, m).makespan, 100 + 0.5 * 80);
  m.per_byte = false;
  EXPECT_EQ(simulate(s, m).makespan, 100 + 0.5 * 10);
}

TEST(EmptyMessages, CostNothingAndHoldNothing) {
  // Root 0 sends 5 elements to rank 2 (op 0), then 0 elements to rank 1 (op 1). If the empty
  // message needed the root's only port it would wait until 105; it completes at 0.
  ScheduleBuilder b(make_spec(CollectiveKind::kBcast, 3, 5), "test/empty");
  b.transfer(0, 2, out(0, 5), out(0, 5));
  b.transfer(0, 1, out(0, 5), out(0, 5));
  Schedule s = std::move(b).finish();
  std::get<Send>(s.ranks[0].ops[1].action).src.count = 0;
  std::get<Recv>(s.ranks[1].ops[0].action).dst.count = 0;
  const auto r = simulate(s, model(), {.trace = true});
  EXPECT_EQ(r.makespan, 105);
  EXPECT_EQ(r.rank_finish[1], 0);
  EXPECT_EQ(timing(r, 0, 1).start, 0);
  EXPECT_EQ(timing(r, 0, 1).end, 0);
  // An empty message still waits for both sides to be ready: make rank 1's receive depend
  // on nothing but the send depend on the 5-element transfer.
  s.ranks[0].ops[1].after = {0};
  EXPECT_EQ(simulate(s, model()).rank_finish[1], 105);
}

TEST(Order, SameInputSameOutput) {
  const Schedule s =
      algorithms::build("alltoall/linear", make_spec(CollectiveKind::kAlltoall, 7, 3));
  const auto a = simulate(s, model(2, Duplex::kHalf), {.trace = true});
  const auto b = simulate(s, model(2, Duplex::kHalf), {.trace = true});
  EXPECT_EQ(a.makespan, b.makespan);
  EXPECT_EQ(a.rank_finish, b.rank_finish);
  ASSERT_EQ(a.timing.size(), b.timing.size());
  for (std::size_t r = 0; r < a.timing.size(); ++r) {
    for (std::size_t i = 0; i < a.timing[r].size(); ++i) {
      EXPECT_EQ(a.timing[r][i].start, b.timing[r][i].start) << r << " " << i;
      EXPECT_EQ(a.timing[r][i].end, b.timing[r][i].end) << r << " " << i;
    }
  }
  ASSERT_EQ(a.critical_path.size(), b.critical_path.size());
  for (std::size_t k = 0; k < a.critical_path.size(); ++k) {
    EXPECT_EQ(a.critical_path[k].rank, b.critical_path[k].rank);
    EXPECT_EQ(a.critical_path[k].op, b.critical_path[k].op);
  }
}

TEST(Order, TransfersAreKeyedBySender) {
  // Root 0 of a gather posts its receive from rank 2 (op 0) before the one from rank 1
  // (op 1). Both transfers are ready at 0; the key is (ready, sender rank, sender op), so
  // rank 1's goes first regardless of the receiver's program order.
  ScheduleBuilder b(make_spec(CollectiveKind::kGather, 3, 10), "test/keys");
  b.transfer(2, 0, in(0, 10), out(20, 10));
  b.transfer(1, 0, in(0, 10), out(10, 10));
  const auto r = simulate(std::move(b).finish(), model());
  EXPECT_EQ(r.rank_finish, (std::vector<Time>{220, 110, 220}));
}

TEST(Order, EarlierReadyTimeFirst) {
  // Rank 2 sends two messages to root 0, both ready at 0 (the second waits for rank 2's
  // port until 110). Rank 1 relays a message from rank 3 and is ready to send to the root at
  // 110. At 110 the root's port frees: rank 2's second message (ready 0) goes before rank
  // 1's (ready 110), although rank 1 is the lower rank.
  ScheduleBuilder b(make_spec(CollectiveKind::kGather, 4, 10), "test/ready");
  b.transfer(2, 0, in(0, 10), out(20, 10));  // [0, 110]
  b.transfer(2, 0, in(0, 10), out(30, 10));  // ready 0, waits for rank 2's port
  const Slice relay = b.scratch(1, 10);
  b.transfer(3, 1, in(0, 10), relay);    // [0, 110]
  b.transfer(1, 0, relay, out(10, 10));  // ready 110
  const auto r = simulate(std::move(b).finish(), model());
  EXPECT_EQ(r.rank_finish, (std::vector<Time>{330, 330, 220, 110}));
}

TEST(Order, TiesFollowRanksNotOpIndices) {
  // The engine numbers ops by op index across ranks (op 1 of rank 2 before op 2 of rank 1);
  // ties must still go by rank. Copy = 1 per element. Rank 1 copies two 5-element halves
  // ([0, 5], [5, 10]) and sends them as its op 2; rank 2 copies 10 elements ([0, 10]) and
  // sends them as its op 1. Both transfers are ready at 10 and the root has one port: rank
  // 1's goes first, [10, 120], then rank 2's, [120, 230], whatever the root's program order.
  ScheduleBuilder b(make_spec(CollectiveKind::kGather, 3, 10), "test/tie");
  const Slice staged1 = b.scratch(1, 10);
  b.copy(1, in(0, 5), Slice{staged1.buf, staged1.offset, 5});
  b.copy(1, in(5, 5), Slice{staged1.buf, staged1.offset + 5, 5});
  const Slice staged2 = b.scratch(2, 10);
  b.copy(2, in(0, 10), staged2);
  b.transfer(2, 0, staged2, out(20, 10));
  b.transfer(1, 0, staged1, out(10, 10));
  const Schedule s = std::move(b).finish();
  ASSERT_EQ(s.ranks[1].ops.size(), 3u);
  ASSERT_EQ(s.ranks[2].ops.size(), 2u);
  CostModel m = model();
  m.copy = 1;
  const auto r = simulate(s, m);
  EXPECT_EQ(r.rank_finish, (std::vector<Time>{230, 120, 230}));
}

TEST(Deadlock, CyclicSchedule) {
  // Each rank receives before it sends, and each send waits for the receive: a cycle.
  Schedule s;
  s.spec = make_spec(CollectiveKind::kAllgather, 2, 1);
  s.algorithm = "test/cycle";
  s.ranks.resize(2);
  for (Rank r = 0; r < 2; ++r) {
    const Rank other = 1 - r;
    auto& ops = s.ranks[static_cast<std::size_t>(r)].ops;
    ops.push_back(Op{Recv{other, out(other, 1)}, {}, 0});
    ops.push_back(Op{Send{other, in(0, 1)}, {0}, 0});
  }
  const auto result = simulate(s, model());
  EXPECT_EQ(result.status, SimStatus::kDeadlock);
  EXPECT_TRUE(result.critical_path.empty());
  EXPECT_NE(result.deadlock.find("4 of 4 ops"), std::string::npos) << result.deadlock;
  EXPECT_NE(result.deadlock.find("rank 0 op 0: recv 1 elems from rank 1"), std::string::npos)
      << result.deadlock;
  EXPECT_NE(result.deadlock.find("rank 1 op 0: recv 1 elems from rank 0"), std::string::npos)
      << result.deadlock;
  EXPECT_EQ(result.deadlock.find("op 1"), std::string::npos) << result.deadlock;
}

TEST(Deadlock, NamesABoundedNumberOfOps) {
  // 40 ranks in a receive-before-send ring: every rank is stuck.
  const Rank p = 40;
  Schedule s;
  s.spec = make_spec(CollectiveKind::kAllgather, p, 1);
  s.algorithm = "test/ring-cycle";
  s.ranks.resize(static_cast<std::size_t>(p));
  for (Rank r = 0; r < p; ++r) {
    auto& ops = s.ranks[static_cast<std::size_t>(r)].ops;
    const Rank left = (r + p - 1) % p;
    ops.push_back(Op{Recv{left, out(left, 1)}, {}, 0});
    ops.push_back(Op{Send{(r + 1) % p, in(0, 1)}, {0}, 0});
  }
  const auto result = simulate(s, model());
  ASSERT_EQ(result.status, SimStatus::kDeadlock);
  EXPECT_NE(result.deadlock.find("and 72 more"), std::string::npos) << result.deadlock;
  EXPECT_LT(result.deadlock.size(), 1000u);
}

TEST(Errors, InvalidModelsAndSchedules) {
  const Schedule s = star(4);
  auto expect_invalid = [&](const CostModel& m, const char* fragment) {
    try {
      simulate(s, m);
      ADD_FAILURE() << "no error for " << fragment;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  CostModel m = model();
  m.alpha = std::numeric_limits<double>::quiet_NaN();
  expect_invalid(m, "alpha is NaN");
  m = model();
  m.beta = -1;
  expect_invalid(m, "beta is negative");
  m = model();
  m.gamma = std::numeric_limits<double>::infinity();
  expect_invalid(m, "gamma is infinite");
  m = model();
  m.ports = 0;
  expect_invalid(m, "ports");
  m = model();
  m.pair_nranks = 3;  // the schedule has 4 ranks
  m.pair_alpha.assign(9, 1);
  m.pair_beta.assign(9, 1);
  expect_invalid(m, "3 x 3 but the collective has 4 ranks");
  // A malformed schedule: a receive whose send is gone.
  Schedule broken = star(4);
  broken.ranks[0].ops.pop_back();
  try {
    simulate(broken, model());
    ADD_FAILURE() << "no error for a malformed schedule";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("malformed"), std::string::npos) << e.what();
  }
}

TEST(Trivial, NoOpsNoTime) {
  const auto r =
      simulate(algorithms::build("bcast/binomial", make_spec(CollectiveKind::kBcast, 1, 8)),
               model(), {.trace = true});
  EXPECT_EQ(r.status, SimStatus::kOk);
  EXPECT_EQ(r.makespan, 0);
  EXPECT_EQ(r.rank_finish, std::vector<Time>{0});
  EXPECT_TRUE(r.critical_path.empty());
}

TEST(CriticalPath, BinomialBroadcastOfFour) {
  // bcast/binomial, p = 4, root 0: 0->2 on [0, T], then 0->1 and 2->3 on [T, 2T]. The ops
  // that finish last are rank 0's send to 1, rank 1's receive, rank 2's send to 3 and rank
  // 3's receive; the lowest (rank, op) is rank 0 op 1. It was ready at 0 but waited for the
  // root's port, held by its send to 2 (op 0), which started at time 0.
  const auto r = simulate(
      algorithms::build("bcast/binomial", make_spec(CollectiveKind::kBcast, 4, 10)), model());
  ASSERT_EQ(r.critical_path.size(), 2u);
  EXPECT_EQ(r.critical_path[0].rank, 0);
  EXPECT_EQ(r.critical_path[0].op, 0);
  EXPECT_EQ(r.critical_path[0].start, 0);
  EXPECT_EQ(r.critical_path[0].end, 110);
  EXPECT_EQ(r.critical_path[0].waited_for, "start");
  EXPECT_EQ(r.critical_path[1].rank, 0);
  EXPECT_EQ(r.critical_path[1].op, 1);
  EXPECT_EQ(r.critical_path[1].start, 110);
  EXPECT_EQ(r.critical_path[1].end, 220);
  EXPECT_EQ(r.critical_path[1].waited_for, "port");
}

TEST(CriticalPath, OverlapCaseNamesEachCause) {
  // recv_reduce_then_recv without overlap (see Overlap above): the final Reduce (rank 0 op 2,
  // [250, 280]) waited for its dependency, the RecvReduce (op 0), whose reduction ran on
  // [220, 250] after waiting for the port held by the receive from rank 2 (op 1, [110, 220]),
  // which had waited for the port held by the transfer from rank 1; that transfer is named
  // by rank 1's send (op 0, [0, 110]), since the RecvReduce completes only later.
  const auto r = simulate(recv_reduce_then_recv(10), model());
  ASSERT_EQ(r.critical_path.size(), 4u);
  const std::vector<std::tuple<Rank, OpId, Time, Time, std::string>> expected{
      {1, 0, 0, 110, "start"},
      {0, 1, 110, 220, "port"},
      {0, 0, 220, 250, "port"},
      {0, 2, 250, 280, "dependency"}};
  for (std::size_t k = 0; k < expected.size(); ++k) {
    const auto& [rank, op, start, end, why] = expected[k];
    EXPECT_EQ(r.critical_path[k].rank, rank) << k;
    EXPECT_EQ(r.critical_path[k].op, op) << k;
    EXPECT_EQ(r.critical_path[k].start, start) << k;
    EXPECT_EQ(r.critical_path[k].end, end) << k;
    EXPECT_EQ(r.critical_path[k].waited_for, why) << k;
  }
}

TEST(CriticalPath, MessagePartnerAndProcessor) {
  // Rank 1 copies 10 elements (copy = 5: [0, 50]) before it can receive into them: rank 0's
  // send waits for its partner. Then the message [50, 160].
  ScheduleBuilder b(make_spec(CollectiveKind::kAllgather, 2, 10), "test/partner");
  b.copy(1, in(0, 10), out(0, 10));
  b.transfer(0, 1, in(0, 10), out(0, 10));
  CostModel m = model();
  m.copy = 5;
  const auto r = simulate(std::move(b).finish(), m);
  ASSERT_EQ(r.critical_path.size(), 2u);
  EXPECT_EQ(r.critical_path[0].rank, 1);
  EXPECT_EQ(r.critical_path[0].op, 0);
  EXPECT_EQ(r.critical_path[0].waited_for, "start");
  EXPECT_EQ(r.critical_path[1].rank, 0);
  EXPECT_EQ(r.critical_path[1].start, 50);
  EXPECT_EQ(r.critical_path[1].end, 160);
  EXPECT_EQ(r.critical_path[1].waited_for, "message partner");
  // Two copies on one rank: the second waits for the processor.
  ScheduleBuilder c(make_spec(CollectiveKind::kAllgather, 1, 10), "test/processor");
  const Slice tmp = c.scratch(0, 10);
  c.copy(0, in(0, 10), out(0, 10));
  c.copy(0, in(0, 10), tmp);
  const auto q = simulate(std::move(c).finish(), m);
  ASSERT_EQ(q.critical_path.size(), 2u);
  EXPECT_EQ(q.critical_path[1].start, 50);
  EXPECT_EQ(q.critical_path[1].end, 100);
  EXPECT_EQ(q.critical_path[1].waited_for, "processor");
}

TEST(CriticalPath, PropertiesOverTheRegistry) {
  // For every registry case at p in {5, 8} and several models: the path starts at 0 with
  // "start", ends at the makespan, every step starts exactly when the previous one ended,
  // and each step ends when its op completed, or, under a send or receive gap, a transfer's
  // step may end earlier, at a port release, when the next step waited for that port or
  // processor.
  const std::vector<CostModel> models = [] {
    std::vector<CostModel> list{model(1),
                                model(2, Duplex::kHalf),
                                model(1, Duplex::kFull, true),
                                model(1),
                                model(1),
                                model(2, Duplex::kHalf, true),
                                model(1),
                                model(1, Duplex::kHalf, true),
                                model(1),
                                model(1)};
    list[0].copy = 1;
    list[1].gamma = 0;
    list[3].copy = 1;
    list[3].send_mode = SendMode::kShared;
    list[3].send_mode_min_bytes = 0;
    list[4].copy = 1;
    list[4].send_gap = 7;
    list[5].send_gap = 0;
    list[6].copy = 1;
    list[6].receive_gap = 7;
    list[7].send_gap = 3;
    list[7].receive_gap = 0;
    list[8].copy = 1;  // what the thread backend's executor does beyond the ops
    list[8].folds_copies = true;
    list[8].combines_in_place = true;
    list[8].helped_bytes = 8;
    list[9].helped_bytes = 8;
    list[9].send_gap = 3;
    list[9].receive_gap = 7;
    return list;
  }();
  const std::vector<std::string> reasons{"dependency", "message partner", "port", "processor"};
  std::size_t early_ends = 0;          // steps that ended at a port release: the rule is exercised
  std::size_t early_receive_ends = 0;  // ... under a model with a receive gap only
  for (const auto& c : testing::registry_cases({5, 8})) {
    const Schedule s = algorithms::build(*c.algorithm, c.spec);
    for (const auto& m : models) {
      const auto r = simulate(s, m, {.trace = true});
      ASSERT_EQ(r.status, SimStatus::kOk) << c.name;
      if (s.op_count() == 0) {
        EXPECT_TRUE(r.critical_path.empty()) << c.name;
        continue;
      }
      ASSERT_FALSE(r.critical_path.empty()) << c.name;
      EXPECT_EQ(r.critical_path.front().start, 0) << c.name;
      EXPECT_EQ(r.critical_path.front().waited_for, "start") << c.name;
      EXPECT_EQ(r.critical_path.back().end, r.makespan) << c.name;
      for (std::size_t k = 0; k < r.critical_path.size(); ++k) {
        const auto& step = r.critical_path[k];
        const Time op_end = timing(r, step.rank, step.op).end;
        if (step.end != op_end) {
          ++early_ends;
          if (!m.send_gap) ++early_receive_ends;
          const Action& action = s.ranks[step.rank].ops[step.op].action;
          const bool is_send = std::holds_alternative<Send>(action);
          EXPECT_TRUE(is_send ? m.send_gap || m.receive_gap
                              : m.receive_gap && !std::holds_alternative<Copy>(action) &&
                                    !std::holds_alternative<Reduce>(action))
              << c.name << " step " << k;
          // At the op's own release, or at its receiver's (a RecvReduce's, named by its Send).
          EXPECT_TRUE(timing(r, step.rank, step.op).port_release == step.end ||
                      (is_send && m.receive_gap))
              << c.name << " step " << k;
          EXPECT_LT(step.end, op_end) << c.name << " step " << k;
          ASSERT_LT(k + 1, r.critical_path.size()) << c.name << " step " << k;
          EXPECT_TRUE(r.critical_path[k + 1].waited_for == "port" ||
                      r.critical_path[k + 1].waited_for == "processor")
              << c.name << " step " << k;
        }
        EXPECT_LE(step.start, step.end) << c.name << " step " << k;
        if (k == 0) continue;
        EXPECT_EQ(step.start, r.critical_path[k - 1].end) << c.name << " step " << k;
        EXPECT_NE(std::find(reasons.begin(), reasons.end(), step.waited_for), reasons.end())
            << c.name << " step " << k << ": " << step.waited_for;
      }
    }
  }
  EXPECT_GT(early_ends, early_receive_ends);
  EXPECT_GT(early_receive_ends, 0u);
}

// Release times (Op::not_before): an op is not ready before its release time; the critical
// path shows the wait as a step of its own. A chain bcast 0 -> 1 -> 2 of 10 elements (T =
// 110), the first send held until 50: [50, 160], then [160, 270]. (The path names the first
// transfer by rank 1's receive, the dependency of rank 1's send.)
TEST(ReleaseTime, HoldsTheOpAndShowsOnTheCriticalPath) {
  ScheduleBuilder b(make_spec(CollectiveKind::kBcast, 3, 10), "test/chain");
  const auto first = b.transfer(0, 1, out(0, 10), out(0, 10));
  b.transfer(1, 2, out(0, 10), out(0, 10));
  b.set_not_before(0, first.send, 50);
  const Schedule s = std::move(b).finish();
  const auto r = simulate(s, model(1), {.trace = true});
  EXPECT_EQ(r.makespan, 270);
  EXPECT_EQ(timing(r, 0, 0).ready, 50);
  EXPECT_EQ(timing(r, 0, 0).start, 50);
  EXPECT_EQ(path_of(r),
            (std::vector<std::tuple<Rank, Time, Time, std::string>>{
                {1, 0, 50, "start"}, {1, 50, 160, "release time"}, {1, 160, 270, "dependency"}}));
  // On the receiving side it holds the transfer just the same.
  Schedule on_recv = s;
  on_recv.ranks[0].ops[0].not_before = 0;
  on_recv.ranks[1].ops[0].not_before = 70;
  const auto rr = simulate(on_recv, model(1));
  EXPECT_EQ(rr.makespan, 290);
  EXPECT_EQ(path_of(rr).front(), (std::tuple<Rank, Time, Time, std::string>{1, 0, 70, "start"}));
  // A release time already past when the op is ready changes nothing.
  Schedule past = s;
  past.ranks[0].ops[0].not_before = 0;
  past.ranks[1].ops[1].not_before = 100;  // its send is ready at 110
  const auto rp = simulate(past, model(1));
  EXPECT_EQ(rp.makespan, 220);
  for (const auto& step : rp.critical_path) EXPECT_NE(step.waited_for, "release time");
}

// A computation held by its release time after its dependency: the wait step starts where
// the dependency ends. Rank 1 receives 10 elements ([0, 110]) and copies them (copy = 2: 20),
// the copy held until 200: [200, 220].
TEST(ReleaseTime, ComputationWaitsAfterItsDependency) {
  ScheduleBuilder b(make_spec(CollectiveKind::kBcast, 2, 10), "test/recv_copy");
  b.transfer(0, 1, out(0, 10), out(0, 10));
  const Slice tmp = b.scratch(1, 10);
  const OpId copy = b.copy(1, out(0, 10), tmp);
  b.set_not_before(1, copy, 200);
  const Schedule s = std::move(b).finish();
  CostModel m = model(1);
  m.copy = 2;
  const auto r = simulate(s, m);
  EXPECT_EQ(r.makespan, 220);
  EXPECT_EQ(path_of(r),
            (std::vector<std::tuple<Rank, Time, Time, std::string>>{
                {1, 0, 110, "start"}, {1, 110, 200, "dependency"}, {1, 200, 220, "release time"}}));
}

}  // namespace
}  // namespace optcoll
