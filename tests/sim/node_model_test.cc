// SPDX-License-Identifier: Apache-2.0
// File: the simulator's node model: sends the receiver does (SendMode::kReceiver) and the
// node's shared memory (CostModel::node_beta). Hand-built schedules whose expected times are
// derived in each test's comment from the semantics in simulator.cc, and a property over the
// registry: node_beta changes the clock, never the order in which things happen.
#include <algorithm>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"
#include "optcoll/sim/simulator.h"
#include "tests/testing/registry_cases.h"

namespace optcoll {
namespace {

// alpha = 100, beta = 1, gamma = 1, copy = 1: a transfer of 10 elements takes 110.
CostModel base_model() {
  CostModel m;
  m.alpha = 100;
  m.beta = 1;
  m.gamma = 1;
  m.copy = 1;
  return m;
}

CostModel receiver_model(std::size_t min_bytes = 0) {
  CostModel m = base_model();
  m.send_mode = SendMode::kReceiver;
  m.send_mode_min_bytes = min_bytes;
  return m;
}

Slice in(Count offset, Count count) { return Slice{Buf::kInput, offset, count}; }
Slice out(Count offset, Count count) { return Slice{Buf::kOutput, offset, count}; }

// Root 0 sends its 10 elements (4-byte int32: 40 bytes) to ranks 1..3, no dependencies.
Schedule star() {
  ScheduleBuilder b(make_spec(CollectiveKind::kBcast, 4, 10), "test/star");
  for (Rank child = 1; child < 4; ++child) b.transfer(0, child, out(0, 10), out(0, 10));
  return std::move(b).finish();
}

const OpTiming& timing(const SimResult& r, Rank rank, OpId op) {
  return r.timing.at(static_cast<std::size_t>(rank)).at(static_cast<std::size_t>(op));
}

TEST(ReceiverSends, EveryReceiverCopiesAtOnce) {
  // The root holds no port for a send its receiver does: all three transfers run over
  // [0, 110]. Below the threshold (41 bytes > 40) the root's one port takes them in turn.
  const Schedule s = star();
  const auto all = simulate(s, receiver_model(), {.trace = true});
  EXPECT_EQ(all.makespan, 110);
  EXPECT_EQ(all.rank_finish, (std::vector<Time>{110, 110, 110, 110}));
  EXPECT_EQ(simulate(s, receiver_model(40)).makespan, 110);  // the threshold is inclusive
  EXPECT_EQ(simulate(s, receiver_model(41)).makespan, 330);
  // Half duplex: still no port at the root, and each receiver has its own.
  CostModel half = receiver_model();
  half.duplex = Duplex::kHalf;
  EXPECT_EQ(simulate(s, half).makespan, 110);
}

TEST(ReceiverSends, TheSenderPaysItsSendGapOnly) {
  // With a send gap of 5 the root posts one send per 5: the transfers start at 0, 5, 10 and
  // end at 110, 115, 120.
  CostModel m = receiver_model();
  m.send_gap = 5;
  const auto r = simulate(star(), m, {.trace = true});
  EXPECT_EQ(r.makespan, 120);
  EXPECT_EQ(timing(r, 0, 1).start, 5);
  EXPECT_EQ(timing(r, 0, 2).start, 10);
}

TEST(ReceiverSends, TheSendersProcessorStaysFree) {
  // Root 0 sends to 1 and 2, and copies its 10 elements to scratch (copy = 1: 10), with no
  // dependency between them, without overlap. Port sends: the copy waits for both sends
  // (one port: 110, 220), then runs [220, 230]. Receiver sends hold nothing at the root:
  // the copy runs [0, 10] while its data are read.
  ScheduleBuilder b(make_spec(CollectiveKind::kBcast, 3, 10), "test/sends_then_copy");
  b.transfer(0, 1, out(0, 10), out(0, 10));
  b.transfer(0, 2, out(0, 10), out(0, 10));
  b.copy(0, out(0, 10), b.scratch(0, 10));
  const Schedule s = std::move(b).finish();
  const auto port = simulate(s, base_model(), {.trace = true});
  EXPECT_EQ(timing(port, 0, 2).start, 220);
  EXPECT_EQ(port.makespan, 230);
  const auto receiver = simulate(s, receiver_model(), {.trace = true});
  EXPECT_EQ(timing(receiver, 0, 2).start, 0);
  EXPECT_EQ(timing(receiver, 0, 2).end, 10);
  EXPECT_EQ(receiver.makespan, 110);
}

TEST(NodeMemory, ConcurrentReceiversShareTheNodesBandwidth) {
  // Receiver sends: each of the three transfers moves 10 units once over its 110: demand
  // 3 * 10 / 110. node_beta = 11: demand * node_beta = 3, so the three run 3x slower: 330
  // (30 units of traffic at 1 / 11 per time unit). node_beta = 1: 30 / 110 < 1, unchanged.
  const Schedule s = star();
  CostModel m = receiver_model();
  m.node_beta = 11;
  EXPECT_DOUBLE_EQ(simulate(s, m).makespan, 330);
  m.node_beta = 1;
  EXPECT_DOUBLE_EQ(simulate(s, m).makespan, 110);
  // Port sends: one at a time through the root's port, each moving its 10 units twice (into
  // a shared buffer and out): demand 20 / 110, times 11 = 2: each takes 220, in turn 660.
  CostModel port = base_model();
  port.node_beta = 11;
  EXPECT_DOUBLE_EQ(simulate(s, port).makespan, 660);
}

TEST(NodeMemory, CopiesAndReductionsAskForTheirTraffic) {
  // Ranks 0 and 1 each copy 10 elements at once (copy = 1: 10 each, traffic 10: rate 1).
  // node_beta = 1: demand 2, both take 20. node_beta = 0.5: demand * node_beta = 1: 10.
  ScheduleBuilder copies(make_spec(CollectiveKind::kAllgather, 2, 10), "test/two_copies");
  copies.copy(0, in(0, 10), out(0, 10));
  copies.copy(1, in(0, 10), out(10, 10));
  const Schedule s = std::move(copies).finish();
  CostModel m = base_model();
  m.node_beta = 1;
  EXPECT_DOUBLE_EQ(simulate(s, m).makespan, 20);
  m.node_beta = 0.5;
  EXPECT_DOUBLE_EQ(simulate(s, m).makespan, 10);
  // One reduction of 10 elements (gamma = 1: 10) reads two operands and writes one: traffic
  // 15, rate 1.5; node_beta = 1 stretches it to 15.
  ScheduleBuilder reduce(make_spec(CollectiveKind::kReduce, 1, 10), "test/reduce");
  const Slice tmp = reduce.scratch(0, 10);
  reduce.copy(0, in(0, 10), tmp);
  reduce.reduce(0, in(0, 10), tmp, Side::kLeft);
  reduce.copy(0, tmp, out(0, 10));
  CostModel r = base_model();
  r.copy = 0;  // only the reduction takes time (and asks for bandwidth)
  r.node_beta = 1;
  EXPECT_DOUBLE_EQ(simulate(std::move(reduce).finish(), r).makespan, 15);
}

TEST(NodeMemory, ChangesTheClockNotTheOrderOverTheRegistry) {
  // Every op in progress slows alike, so a run with node_beta is the run without it on a
  // slower clock: the times of its ops map through one non-decreasing function with slope at
  // least 1, and the makespan is at least the plain one and at least the memory bound (every
  // element that must arrive crosses the memory once).
  std::size_t stretched = 0;
  for (const auto& c : testing::registry_cases({5, 8})) {
    const Schedule s = algorithms::build(*c.algorithm, c.spec);
    for (const SendMode mode : {SendMode::kPort, SendMode::kReceiver}) {
      CostModel base = base_model();
      base.send_mode = mode;
      const auto plain = simulate(s, base, {.trace = true});
      CostModel m = base;
      m.node_beta = 0.5;
      const auto node = simulate(s, m, {.trace = true});
      ASSERT_EQ(node.status, SimStatus::kOk) << c.name;
      std::vector<std::pair<Time, Time>> pairs;
      for (std::size_t r = 0; r < plain.timing.size(); ++r) {
        for (std::size_t i = 0; i < plain.timing[r].size(); ++i) {
          pairs.emplace_back(plain.timing[r][i].start, node.timing[r][i].start);
          pairs.emplace_back(plain.timing[r][i].end, node.timing[r][i].end);
        }
      }
      std::sort(pairs.begin(), pairs.end());
      for (std::size_t k = 1; k < pairs.size(); ++k) {
        const auto [t0, u0] = pairs[k - 1];
        const auto [t1, u1] = pairs[k];
        const double tolerance = 1e-9 * std::max(1.0, u1);
        EXPECT_GE(u1 - u0, (t1 - t0) - tolerance) << c.name;
        if (u1 - u0 > (t1 - t0) + tolerance) ++stretched;
      }
      EXPECT_GE(node.makespan, plain.makespan) << c.name;
      const auto bound = lower_bound(Layout(c.spec), m);
      ASSERT_TRUE(bound.has_value());
      EXPECT_LE(*bound, node.makespan * (1 + 1e-12)) << c.name;
    }
  }
  EXPECT_GT(stretched, 0u);
}

}  // namespace
}  // namespace optcoll
