// SPDX-License-Identifier: Apache-2.0
// File: tests of ScheduleBuilder: both halves of a transfer, seq numbering per ordered pair,
// and the dependencies it infers from data hazards.
#include "optcoll/schedule/builder.h"

#include <gtest/gtest.h>

#include <string>

#include "optcoll/model/error.h"

namespace optcoll {
namespace {

const Op& op_at(const Schedule& s, Rank r, OpId i) {
  return s.ranks[static_cast<std::size_t>(r)].ops[static_cast<std::size_t>(i)];
}

TEST(Builder, TransferEmitsBothHalvesWithPerPairSeq) {
  ScheduleBuilder b(make_spec(CollectiveKind::kAllgather, 3, 2), "test/seq");
  const Slice in{Buf::kInput, 0, 2};
  const auto t0 = b.transfer(0, 1, in, Slice{Buf::kOutput, 0, 2});
  const auto t1 = b.transfer(0, 1, in, Slice{Buf::kOutput, 2, 2});
  const auto t2 = b.transfer(0, 2, in, Slice{Buf::kOutput, 0, 2});
  const auto t3 = b.transfer(1, 0, in, Slice{Buf::kOutput, 2, 2});
  const Schedule s = std::move(b).finish();
  EXPECT_EQ(op_at(s, 0, t0.send).seq, 0);
  EXPECT_EQ(op_at(s, 0, t1.send).seq, 1);
  EXPECT_EQ(op_at(s, 0, t2.send).seq, 0);  // a different ordered pair
  EXPECT_EQ(op_at(s, 1, t3.send).seq, 0);  // (1, 0) is not (0, 1)
  const auto& recv = std::get<Recv>(op_at(s, 1, t1.recv).action);
  EXPECT_EQ(recv.peer, 0);
  EXPECT_EQ(recv.dst, (Slice{Buf::kOutput, 2, 2}));
  EXPECT_EQ(op_at(s, 1, t1.recv).seq, 1);
}

TEST(Builder, InfersReadAfterWriteWriteAfterReadAndWriteAfterWrite) {
  ScheduleBuilder b(make_spec(CollectiveKind::kAllreduce, 2, 8), "test/hazards");
  const Slice lo{Buf::kOutput, 0, 4};
  const Slice hi{Buf::kOutput, 4, 4};
  const OpId w_lo = b.copy(0, Slice{Buf::kInput, 0, 4}, lo);  // op 0 writes lo
  const OpId w_hi = b.copy(0, Slice{Buf::kInput, 4, 4}, hi);  // op 1 writes hi
  const auto send = b.transfer(0, 1, Slice{Buf::kOutput, 2, 4}, Slice{Buf::kOutput, 0, 4});
  const auto recv = b.transfer(1, 0, Slice{Buf::kInput, 0, 4}, lo);
  const Schedule s = std::move(b).finish();
  // The send reads out[2,6): read-after-write on both copies.
  EXPECT_EQ(op_at(s, 0, send.send).after, (std::vector<OpId>{w_lo, w_hi}));
  // The receive writes out[0,4): write-after-write on copy 0, write-after-read on the send.
  EXPECT_EQ(op_at(s, 0, recv.recv).after, (std::vector<OpId>{w_lo, send.send}));
  // Independent ops get no edges.
  EXPECT_TRUE(op_at(s, 0, w_hi).after.empty());
}

TEST(Builder, DisjointSlicesStayUnordered) {
  ScheduleBuilder b(make_spec(CollectiveKind::kGather, 4, 3), "test/disjoint");
  for (Rank r = 1; r < 4; ++r) {
    b.transfer(r, 0, Slice{Buf::kInput, 0, 3}, Slice{Buf::kOutput, 3 * r, 3});
  }
  const Schedule s = std::move(b).finish();
  for (const auto& op : s.ranks[0].ops) EXPECT_TRUE(op.after.empty());
}

TEST(Builder, ReduceReadsAndWritesItsDestination) {
  ScheduleBuilder b(make_spec(CollectiveKind::kReduce, 3, 4), "test/reduce");
  const Slice out{Buf::kOutput, 0, 4};
  const OpId c = b.copy(0, Slice{Buf::kInput, 0, 4}, out);
  const auto r1 = b.transfer_reduce(1, 0, Slice{Buf::kInput, 0, 4}, out, Side::kRight);
  const auto r2 = b.transfer_reduce(2, 0, Slice{Buf::kInput, 0, 4}, out, Side::kRight);
  const Schedule s = std::move(b).finish();
  EXPECT_EQ(op_at(s, 0, r1.recv).after, (std::vector<OpId>{c}));
  EXPECT_EQ(op_at(s, 0, r2.recv).after, (std::vector<OpId>{r1.recv}));
  EXPECT_EQ(std::get<RecvReduce>(op_at(s, 0, r2.recv).action).incoming, Side::kRight);
}

TEST(Builder, ScratchGrowsAndIsBoundsChecked) {
  ScheduleBuilder b(make_spec(CollectiveKind::kBcast, 2, 4), "test/scratch");
  const Slice a = b.scratch(1, 3);
  const Slice c = b.scratch(1, 5);
  EXPECT_EQ(a, (Slice{Buf::kScratch, 0, 3}));
  EXPECT_EQ(c, (Slice{Buf::kScratch, 3, 5}));
  EXPECT_THROW(b.copy(1, Slice{Buf::kScratch, 6, 3}, Slice{Buf::kOutput, 0, 3}), InternalError);
  EXPECT_THROW(b.transfer(0, 1, Slice{Buf::kOutput, 2, 4}, c), InternalError);  // out of bounds
  EXPECT_THROW(b.transfer(0, 1, Slice{Buf::kOutput, 0, 4}, a), InternalError);  // 4 into 3
  EXPECT_THROW(b.transfer(1, 1, a, a), InternalError);                          // to itself
  EXPECT_THROW(b.copy(1, Slice{Buf::kScratch, 0, 4}, Slice{Buf::kScratch, 2, 4}), InternalError);
  EXPECT_EQ(std::move(b).finish().ranks[1].scratch_count, 8);
}

TEST(Builder, ScratchBeyond2To48IsACallerError) {
  // The spec may be valid while an algorithm's scratch for it is not addressable: an
  // invalid-argument error naming the algorithm and rank, not an internal check.
  ScheduleBuilder b(make_spec(CollectiveKind::kReduce, 2, 4), "test/huge");
  b.scratch(1, kMaxCount - 1);
  try {
    b.scratch(1, 2);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(
        std::string(e.what()).find("test/huge needs more than 2^48 elements of scratch on rank 1"),
        std::string::npos)
        << e.what();
  }
}

TEST(Builder, ZeroElementWorkEmitsNothing) {
  ScheduleBuilder b(make_spec(CollectiveKind::kBcast, 2, 4), "test/empty");
  const auto t = b.transfer(0, 1, Slice{Buf::kOutput, 0, 0}, Slice{Buf::kOutput, 1, 0});
  EXPECT_EQ(t.send, kNoOp);
  EXPECT_EQ(t.recv, kNoOp);
  EXPECT_EQ(b.copy(0, Slice{Buf::kOutput, 0, 0}, Slice{Buf::kOutput, 1, 0}), kNoOp);
  b.add_dependency(0, kNoOp, kNoOp);  // ignored
  const auto real = b.transfer(0, 1, Slice{Buf::kOutput, 0, 4}, Slice{Buf::kOutput, 0, 4});
  const Schedule s = std::move(b).finish();
  EXPECT_EQ(s.op_count(), 2u);
  EXPECT_EQ(op_at(s, 0, real.send).seq, 0);  // the empty transfer consumed no seq
}

TEST(Builder, AddDependencyKeepsListSortedAndRejectsForwardEdges) {
  ScheduleBuilder b(make_spec(CollectiveKind::kGather, 3, 2), "test/deps");
  const auto t1 = b.transfer(1, 0, Slice{Buf::kInput, 0, 2}, Slice{Buf::kOutput, 2, 2});
  const auto t2 = b.transfer(2, 0, Slice{Buf::kInput, 0, 2}, Slice{Buf::kOutput, 4, 2});
  const OpId c = b.copy(0, Slice{Buf::kInput, 0, 2}, Slice{Buf::kOutput, 0, 2});
  b.add_dependency(0, t2.recv, c);
  b.add_dependency(0, t1.recv, c);
  b.add_dependency(0, t1.recv, c);  // duplicate
  EXPECT_THROW(b.add_dependency(0, c, t1.recv), InternalError);
  const Schedule s = std::move(b).finish();
  EXPECT_EQ(op_at(s, 0, c).after, (std::vector<OpId>{t1.recv, t2.recv}));
}

TEST(Builder, RejectsInvalidSpec) {
  CollectiveSpec spec;
  spec.kind = CollectiveKind::kBcast;
  spec.nranks = 0;
  EXPECT_THROW(ScheduleBuilder(spec, "x"), Error);
}

}  // namespace
}  // namespace optcoll
