// SPDX-License-Identifier: Apache-2.0
// File: targeted mutations of valid schedules; each must trip the one check it breaks, with
// a diagnostic that says where and what.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/verify/verify.h"
#include "tests/verify/mutations.h"

namespace optcoll {
namespace {

using testing::append_after_all;
using testing::drop_message;
using testing::find_diagnostic;
using testing::find_ops;
using testing::has_check;
using testing::OpAt;
using testing::ops_of_kind;
using testing::partner_of;
using testing::remove_op;
using testing::unused_seq;

Schedule build(std::string_view name, CollectiveKind kind, Rank p, Count n, Rank root = 0,
               bool commutative = true) {
  CollectiveSpec spec = make_spec(kind, p, n, root);
  spec.commutative = commutative;
  return algorithms::build(name, spec);
}

// The receive ops of rank r.
std::vector<OpAt> recvs_on(const Schedule& s, Rank r) {
  return find_ops(s, [r](Rank at, const Op& op) {
    return at == r && (std::holds_alternative<Recv>(op.action) ||
                       std::holds_alternative<RecvReduce>(op.action));
  });
}

TEST(VerifyMutation, ValidSchedulesAreClean) {
  const auto report = verify(build("bcast/linear", CollectiveKind::kBcast, 3, 1));
  EXPECT_TRUE(report.ok());
  EXPECT_EQ(report.summary(), "ok (4 ops, 2 messages)");
  EXPECT_EQ(report.ops, 4u);
  EXPECT_EQ(report.messages, 2u);
}

TEST(VerifyMutation, DroppedMessageLeavesOutputUndefined) {
  Schedule s = build("bcast/binomial", CollectiveKind::kBcast, 4, 5);
  const auto recvs = recvs_on(s, 3);
  ASSERT_EQ(recvs.size(), 1u);
  drop_message(s, recvs[0]);
  const auto report = verify(s);
  ASSERT_FALSE(report.ok());
  EXPECT_FALSE(has_check(report, VerifyCheck::kStructure)) << report.summary();
  EXPECT_FALSE(has_check(report, VerifyCheck::kRace)) << report.summary();
  const Diagnostic* d = find_diagnostic(report, VerifyCheck::kSemantics, "rank 3: out[0]");
  ASSERT_NE(d, nullptr) << report.summary();
  EXPECT_EQ(d->rank, 3);
  EXPECT_EQ(d->op, kNoOp);
  EXPECT_EQ(d->element, 0);
  EXPECT_EQ(d->expected, "x[0]{0}");
  EXPECT_EQ(d->actual, "undefined");
  EXPECT_NE(d->message.find("5 of 5 output elements are wrong"), std::string::npos) << d->message;
}

TEST(VerifyMutation, DroppedReceiveIsAStructureError) {
  Schedule s = build("bcast/binomial", CollectiveKind::kBcast, 4, 5);
  remove_op(s, recvs_on(s, 3).at(0));
  const auto report = verify(s);
  const Diagnostic* d = find_diagnostic(report, VerifyCheck::kStructure, "has no matching receive");
  ASSERT_NE(d, nullptr) << report.summary();
  EXPECT_EQ(report.diagnostics.size(), 1u) << report.summary();  // later checks do not run
}

TEST(VerifyMutation, ShiftedReceiveSlice) {
  // gather/linear p=4, blocks of 3 at root 0: the block of rank 1 lands at out[4] not out[3].
  Schedule s = build("gather/linear", CollectiveKind::kGather, 4, 3);
  const auto recvs = recvs_on(s, 0);
  const auto from1 = std::find_if(recvs.begin(), recvs.end(), [&](const OpAt& at) {
    return peer_of(testing::op_at(s, at).action) == 1;
  });
  ASSERT_NE(from1, recvs.end());
  std::get<Recv>(testing::op_at(s, *from1).action).dst.offset += 1;
  const auto report = verify(s);
  EXPECT_FALSE(has_check(report, VerifyCheck::kStructure)) << report.summary();
  const Diagnostic* undefined = find_diagnostic(report, VerifyCheck::kSemantics, "out[3] holds");
  ASSERT_NE(undefined, nullptr) << report.summary();
  EXPECT_EQ(undefined->actual, "undefined");
  EXPECT_EQ(undefined->expected, "x[0]{1}");
  const Diagnostic* shifted = find_diagnostic(report, VerifyCheck::kSemantics, "out[4] holds");
  ASSERT_NE(shifted, nullptr) << report.summary();
  EXPECT_EQ(shifted->actual, "x[0]{1}");
  EXPECT_EQ(shifted->expected, "x[1]{1}");
  // out[6] is now written by the receives from ranks 1 and 2, which nothing orders.
  const Diagnostic* race = find_diagnostic(report, VerifyCheck::kRace, "race on out[6]");
  ASSERT_NE(race, nullptr) << report.summary();
  EXPECT_EQ(race->rank, 0);
  EXPECT_EQ(race->element, 6);
}

TEST(VerifyMutation, ReductionCountedTwice) {
  Schedule s = build("reduce/binomial", CollectiveKind::kReduce, 4, 5);
  // Repeat, at the end, the root's receive from rank 2 (whose subtree is ranks 2..3).
  const auto reduces = ops_of_kind<RecvReduce>(s);
  const auto at_root = std::find_if(reduces.begin(), reduces.end(), [&](const OpAt& at) {
    return at.rank == 0 && peer_of(testing::op_at(s, at).action) == 2;
  });
  ASSERT_NE(at_root, reduces.end());
  const RecvReduce recv = std::get<RecvReduce>(testing::op_at(s, *at_root).action);
  const OpAt send_at = partner_of(s, *at_root);
  const Send send = std::get<Send>(testing::op_at(s, send_at).action);
  const std::int32_t seq = unused_seq(s, 2, 0);
  append_after_all(s, 2, send, seq);
  const OpId again = append_after_all(s, 0, recv, seq);
  const auto report = verify(s);
  ASSERT_FALSE(report.ok());
  EXPECT_FALSE(has_check(report, VerifyCheck::kStructure)) << report.summary();
  EXPECT_FALSE(has_check(report, VerifyCheck::kRace)) << report.summary();
  EXPECT_FALSE(has_check(report, VerifyCheck::kDeadlock)) << report.summary();
  const Diagnostic* d = find_diagnostic(report, VerifyCheck::kSemantics, "counted twice");
  ASSERT_NE(d, nullptr) << report.summary();
  EXPECT_EQ(d->rank, 0);
  EXPECT_EQ(d->op, again);
  EXPECT_EQ(d->element, 0);
  EXPECT_NE(d->message.find("ranks 2..3 counted twice"), std::string::npos) << d->message;
  EXPECT_NE(d->message.find("combines incoming x[0]{2..3} with x[0]{0..3}"), std::string::npos)
      << d->message;
}

TEST(VerifyMutation, SendWithoutReceive) {
  Schedule s = build("allgather/ring", CollectiveKind::kAllgather, 3, 2);
  append_after_all(s, 1, Send{2, Slice{Buf::kOutput, 0, 2}}, unused_seq(s, 1, 2));
  const auto report = verify(s);
  const Diagnostic* d = find_diagnostic(report, VerifyCheck::kStructure, "has no matching receive");
  ASSERT_NE(d, nullptr) << report.summary();
  EXPECT_EQ(d->rank, 1);
  EXPECT_EQ(d->op, static_cast<OpId>(s.ranks[1].ops.size() - 1));
}

// allgather p=2, count 1, written by hand: each rank copies its block, receives the other's
// and sends its own. With `send_waits_for_recv`, each send also waits for the receive.
Schedule exchange(bool send_waits_for_recv) {
  Schedule s;
  s.spec = make_spec(CollectiveKind::kAllgather, 2, 1);
  s.algorithm = "test/exchange";
  s.ranks.resize(2);
  for (Rank r = 0; r < 2; ++r) {
    auto& ops = s.ranks[static_cast<std::size_t>(r)].ops;
    const Rank other = 1 - r;
    ops.push_back({Copy{{Buf::kInput, 0, 1}, {Buf::kOutput, r, 1}}, {}, -1});
    ops.push_back({Recv{other, {Buf::kOutput, other, 1}}, {}, 0});
    ops.push_back(
        {Send{other, {Buf::kOutput, r, 1}}, send_waits_for_recv ? OpDeps{0, 1} : OpDeps{0}, 0});
  }
  return s;
}

TEST(VerifyMutation, CyclicWait) {
  EXPECT_TRUE(verify(exchange(false)).ok()) << verify(exchange(false)).summary();
  const auto report = verify(exchange(true));
  ASSERT_EQ(report.diagnostics.size(), 1u) << report.summary();
  const Diagnostic& d = report.diagnostics[0];
  EXPECT_EQ(d.check, VerifyCheck::kDeadlock);
  EXPECT_EQ(d.actual, "wait cycle of 4 ops");
  for (const char* op :
       {"rank 0 op 1: recv", "rank 0 op 2: send", "rank 1 op 1: recv", "rank 1 op 2: send"}) {
    EXPECT_NE(d.message.find(op), std::string::npos) << op << " missing from " << d.message;
  }
  EXPECT_NE(d.message.find("4 ops can never complete"), std::string::npos) << d.message;
}

TEST(VerifyMutation, SendThenReceiveDeadlocksUnderRendezvous) {
  // Both ranks send first and receive only once their send has completed: fine with eager
  // sends, a deadlock when sends wait for the receiver.
  Schedule s = exchange(false);
  for (auto& program : s.ranks) {
    std::swap(program.ops[1], program.ops[2]);
    program.ops[1].after = {0};
    program.ops[2].after = {1};
  }
  const auto report = verify(s);
  ASSERT_TRUE(has_check(report, VerifyCheck::kDeadlock)) << report.summary();
}

TEST(VerifyMutation, NonCommutativeOperandsOutOfOrder) {
  for (const bool commutative : {false, true}) {
    Schedule s = build("reduce/linear", CollectiveKind::kReduce, 4, 2, 0, commutative);
    ASSERT_TRUE(verify(s).ok()) << verify(s).summary();
    const auto reduces = ops_of_kind<RecvReduce>(s);
    const auto first =
        std::find_if(reduces.begin(), reduces.end(), [](const OpAt& at) { return at.rank == 0; });
    ASSERT_NE(first, reduces.end());
    auto& recv = std::get<RecvReduce>(testing::op_at(s, *first).action);
    ASSERT_EQ(recv.peer, 1);
    ASSERT_EQ(recv.incoming, Side::kRight);  // out = op(x0, x1)
    recv.incoming = Side::kLeft;             // out = op(x1, x0)
    const auto report = verify(s);
    if (commutative) {
      EXPECT_TRUE(report.ok()) << report.summary();
      continue;
    }
    const Diagnostic* d =
        find_diagnostic(report, VerifyCheck::kSemantics, "operands out of rank order");
    ASSERT_NE(d, nullptr) << report.summary();
    EXPECT_EQ(d->rank, 0);
    EXPECT_EQ(d->op, first->op);
    EXPECT_EQ(d->actual, "op(x[0]{1}, x[0]{0})");
  }
}

TEST(VerifyMutation, RaceWhenDependencyRemoved) {
  Schedule s = build("reduce/linear", CollectiveKind::kReduce, 4, 3);
  const auto reduces = find_ops(s, [](Rank r, const Op& op) {
    return r == 0 && std::holds_alternative<RecvReduce>(op.action);
  });
  ASSERT_EQ(reduces.size(), 3u);
  Op& second = testing::op_at(s, reduces[1]);
  ASSERT_FALSE(second.after.empty());
  second.after.clear();  // now unordered with the copy and the first recv-reduce into out
  const auto report = verify(s);
  const Diagnostic* d = find_diagnostic(report, VerifyCheck::kRace);
  ASSERT_NE(d, nullptr) << report.summary();
  EXPECT_EQ(d->rank, 0);
  EXPECT_EQ(d->op, reduces[1].op);
  EXPECT_EQ(d->element, 0);
  EXPECT_NE(d->message.find(fmt::format("op {} after op {}", reduces[1].op, reduces[0].op)),
            std::string::npos)
      << report.summary();
}

TEST(VerifyMutation, BarrierRankThatNeverHearsFromOthers) {
  Schedule s = build("barrier/linear", CollectiveKind::kBarrier, 4, 0);
  drop_message(s, recvs_on(s, 3).at(0));  // rank 0 never releases rank 3
  const auto report = verify(s);
  ASSERT_EQ(report.diagnostics.size(), 1u) << report.summary();
  const Diagnostic& d = report.diagnostics[0];
  EXPECT_EQ(d.check, VerifyCheck::kSynchronization);
  EXPECT_EQ(d.rank, 3);
  EXPECT_NE(d.message.find("rank 3 can leave the barrier before rank 0 has entered it"),
            std::string::npos)
      << d.message;
  EXPECT_NE(d.message.find("nor of 2 other ranks"), std::string::npos) << d.message;
}

TEST(VerifyMutation, DisseminationMissingOneSignal) {
  Schedule s = build("barrier/dissemination", CollectiveKind::kBarrier, 4, 0);
  ASSERT_TRUE(verify(s).ok());
  // Round 1 (r -> r + 2): drop 0 -> 2; rank 2 then only knows ranks 1 and 2.
  const auto recvs = recvs_on(s, 2);
  const auto from0 = std::find_if(recvs.begin(), recvs.end(), [&](const OpAt& at) {
    return peer_of(testing::op_at(s, at).action) == 0;
  });
  ASSERT_NE(from0, recvs.end());
  drop_message(s, *from0);
  const auto report = verify(s);
  const Diagnostic* d = find_diagnostic(report, VerifyCheck::kSynchronization, "rank 2 can");
  ASSERT_NE(d, nullptr) << report.summary();
  EXPECT_NE(d->message.find("before rank 0 has entered it"), std::string::npos) << d->message;
  EXPECT_NE(d->message.find("nor of 1 other ranks"), std::string::npos) << d->message;
}

TEST(VerifyMutation, BarrierWithIdleRanks) {
  Schedule s;
  s.spec = make_spec(CollectiveKind::kBarrier, 2, 0);
  s.ranks.resize(2);
  const auto report = verify(s);
  ASSERT_EQ(report.diagnostics.size(), 2u) << report.summary();
  EXPECT_EQ(report.diagnostics[1].rank, 1);
  EXPECT_NE(report.diagnostics[1].message.find("rank 1 has no ops"), std::string::npos);
  Schedule alone;
  alone.spec = make_spec(CollectiveKind::kBarrier, 1, 0);
  alone.ranks.resize(1);
  EXPECT_TRUE(verify(alone).ok());
}

TEST(VerifyMutation, OutputElementNeverWritten) {
  Schedule s = build("gather/linear", CollectiveKind::kGather, 3, 2, 1);
  const auto recvs = recvs_on(s, 1);
  const auto from2 = std::find_if(recvs.begin(), recvs.end(), [&](const OpAt& at) {
    return peer_of(testing::op_at(s, at).action) == 2;
  });
  ASSERT_NE(from2, recvs.end());
  drop_message(s, *from2);
  const auto report = verify(s);
  ASSERT_EQ(report.diagnostics.size(), 1u) << report.summary();
  const Diagnostic& d = report.diagnostics[0];
  EXPECT_EQ(d.check, VerifyCheck::kSemantics);
  EXPECT_EQ(d.rank, 1);
  EXPECT_EQ(d.element, 4);
  EXPECT_EQ(d.expected, "x[0]{2}");
  EXPECT_EQ(d.actual, "undefined");
  EXPECT_EQ(d.message,
            "rank 1: out[4] holds undefined but the postcondition requires x[0]{2} "
            "(2 of 6 output elements are wrong)");
}

TEST(VerifyMutation, CopyFromTheWrongOffset) {
  Schedule s = build("scatter/linear", CollectiveKind::kScatter, 4, 3, 2);
  const auto copies = ops_of_kind<Copy>(s);
  ASSERT_EQ(copies.size(), 1u);
  auto& copy = std::get<Copy>(testing::op_at(s, copies[0]).action);
  ASSERT_EQ(copy.src.offset, 6);
  copy.src.offset = 3;
  const auto report = verify(s);
  ASSERT_EQ(report.diagnostics.size(), 1u) << report.summary();
  const Diagnostic& d = report.diagnostics[0];
  EXPECT_EQ(d.rank, 2);
  EXPECT_EQ(d.element, 0);
  EXPECT_EQ(d.expected, "x[6]{2}");
  EXPECT_EQ(d.actual, "x[3]{2}");
}

TEST(VerifyMutation, ReductionWithAnUndefinedOperand) {
  Schedule s = build("reduce/linear", CollectiveKind::kReduce, 3, 2);
  const auto copies = find_ops(
      s, [](Rank r, const Op& op) { return r == 0 && std::holds_alternative<Copy>(op.action); });
  ASSERT_EQ(copies.size(), 1u);
  remove_op(s, copies[0]);  // the root no longer seeds out with its own input
  const auto report = verify(s);
  const Diagnostic* d = find_diagnostic(report, VerifyCheck::kSemantics, "never written");
  ASSERT_NE(d, nullptr) << report.summary();
  EXPECT_EQ(d->rank, 0);
  EXPECT_NE(d->message.find("the destination operand was never written"), std::string::npos);
}

TEST(VerifyMutation, DiagnosticsAreCapped) {
  Schedule s = build("allgather/linear", CollectiveKind::kAllgather, 8, 4);
  for (auto& program : s.ranks) {
    for (auto& op : program.ops) {
      if (auto* recv = std::get_if<Recv>(&op.action)) recv->dst.offset = 0;  // all collide
    }
  }
  const auto report = verify(s, VerifyOptions{5});
  EXPECT_EQ(report.diagnostics.size(), 5u);
  EXPECT_TRUE(report.truncated);
  EXPECT_NE(report.summary().find("5+ problems"), std::string::npos) << report.summary();
}

TEST(VerifyMutation, CheckNames) {
  EXPECT_EQ(verify_check_name(VerifyCheck::kStructure), "structure");
  EXPECT_EQ(verify_check_name(VerifyCheck::kDeadlock), "deadlock");
  EXPECT_EQ(verify_check_name(VerifyCheck::kRace), "race");
  EXPECT_EQ(verify_check_name(VerifyCheck::kSemantics), "semantics");
  EXPECT_EQ(verify_check_name(VerifyCheck::kSynchronization), "synchronization");
}

}  // namespace
}  // namespace optcoll
