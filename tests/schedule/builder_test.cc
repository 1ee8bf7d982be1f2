// SPDX-License-Identifier: Apache-2.0
// File: tests of ScheduleBuilder: both halves of a transfer, seq numbering per ordered pair,
// and the dependencies it infers from data hazards.
#include "optcoll/schedule/builder.h"

#include <algorithm>
#include <array>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

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
  EXPECT_EQ(op_at(s, 0, send.send).after, (OpDeps{w_lo, w_hi}));
  // The receive writes out[0,4): write-after-write on copy 0, write-after-read on the send.
  EXPECT_EQ(op_at(s, 0, recv.recv).after, (OpDeps{w_lo, send.send}));
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
  EXPECT_EQ(op_at(s, 0, r1.recv).after, (OpDeps{c}));
  EXPECT_EQ(op_at(s, 0, r2.recv).after, (OpDeps{r1.recv}));
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
  EXPECT_EQ(op_at(s, 0, c).after, (OpDeps{t1.recv, t2.recv}));
}

// An independent account of the hazards on one rank: per element, the op that last wrote
// it and the ops that read it since.
class ElementHazards {
 public:
  explicit ElementHazards(Count elements) {
    for (auto& buffer : buffers_) buffer.resize(static_cast<std::size_t>(elements));
  }
  struct Access {
    Slice slice;
    bool write;
  };
  // The ops an op with these accesses must follow (sorted, unique); then records it.
  std::vector<OpId> emit(OpId op, const std::vector<Access>& accesses) {
    std::vector<OpId> deps;
    for (const Access& a : accesses) {
      for (Count e = a.slice.offset; e < a.slice.end(); ++e) {
        const Element& el = element(a.slice.buf, e);
        if (el.writer != kNoOp) deps.push_back(el.writer);
        if (a.write) deps.insert(deps.end(), el.readers.begin(), el.readers.end());
      }
    }
    for (const Access& a : accesses) {
      for (Count e = a.slice.offset; e < a.slice.end(); ++e) {
        Element& el = element(a.slice.buf, e);
        if (a.write) {
          el.writer = op;
          el.readers.clear();
        } else {
          el.readers.push_back(op);
        }
      }
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    return deps;
  }

 private:
  struct Element {
    OpId writer = kNoOp;
    std::vector<OpId> readers;
  };
  Element& element(Buf buf, Count e) {
    return buffers_[static_cast<std::size_t>(buf)][static_cast<std::size_t>(e)];
  }
  std::array<std::vector<Element>, 3> buffers_;
};

// Random local and remote accesses on rank 0 (overlapping, partial, nested, in any order,
// and blocks walked downwards with a wrap as ring algorithms do): every op's inferred
// dependencies equal the element-by-element account.
TEST(Builder, InferredDependenciesEqualAnElementByElementAccount) {
  constexpr Count kElements = 48;
  constexpr Count kBlock = 6;
  for (const unsigned seed : {1u, 2u, 3u, 4u, 5u}) {
    std::mt19937 random(seed);
    ScheduleBuilder b(make_spec(CollectiveKind::kAllreduce, 2, kElements), "test/random");
    b.scratch(0, kElements);
    ElementHazards expected(kElements);
    std::vector<std::vector<OpId>> expected_deps;
    auto random_slice = [&](Buf buf) {
      const Count offset = std::uniform_int_distribution<Count>(0, kElements - 1)(random);
      const Count count = std::uniform_int_distribution<Count>(1, kElements - offset)(random);
      return Slice{buf, offset, count};
    };
    auto any_buffer = [&] {
      return static_cast<Buf>(std::uniform_int_distribution<int>(0, 2)(random));
    };
    // The input is read-only: writes go to the output or the scratch.
    auto writable_buffer = [&] {
      return std::uniform_int_distribution<int>(0, 1)(random) == 0 ? Buf::kOutput : Buf::kScratch;
    };
    auto record = [&](OpId op, std::vector<ElementHazards::Access> accesses) {
      ASSERT_EQ(op, static_cast<OpId>(expected_deps.size()));
      expected_deps.push_back(expected.emit(op, accesses));
    };
    for (int i = 0; i < 400; ++i) {
      const int kind = std::uniform_int_distribution<int>(0, 4)(random);
      if (kind == 0) {  // a send from rank 0 reads
        const Slice src = random_slice(any_buffer());
        record(b.transfer(0, 1, src, Slice{Buf::kOutput, 0, src.count}).send, {{src, false}});
      } else if (kind == 1) {  // a receive into rank 0 writes
        const Slice dst = random_slice(writable_buffer());
        record(b.transfer(1, 0, Slice{Buf::kInput, 0, dst.count}, dst).recv, {{dst, true}});
      } else if (kind == 2) {  // a local copy between different buffers
        const Buf from = any_buffer();
        const Buf to = from == Buf::kOutput ? Buf::kScratch : Buf::kOutput;
        const Slice src = random_slice(from);
        const Slice dst{to, std::uniform_int_distribution<Count>(0, kElements - src.count)(random),
                        src.count};
        record(b.copy(0, src, dst), {{src, false}, {dst, true}});
      } else {  // a ring's blocks: read block k, write block k - 1, downwards with a wrap
        const Buf buf = writable_buffer();
        const Count blocks = kElements / kBlock;
        const Count start = std::uniform_int_distribution<Count>(0, blocks - 1)(random);
        for (Count step = 0; step < blocks; ++step) {
          const Count k = (start - step + blocks) % blocks;
          const Slice read{buf, k * kBlock, kBlock};
          const Slice write{buf, ((k + blocks - 1) % blocks) * kBlock, kBlock};
          record(b.transfer(0, 1, read, Slice{Buf::kOutput, 0, kBlock}).send, {{read, false}});
          record(b.transfer(1, 0, Slice{Buf::kInput, 0, kBlock}, write).recv, {{write, true}});
        }
      }
    }
    const Schedule s = std::move(b).finish();
    ASSERT_EQ(s.ranks[0].ops.size(), expected_deps.size());
    for (std::size_t op = 0; op < expected_deps.size(); ++op) {
      ASSERT_EQ(std::vector<OpId>(s.ranks[0].ops[op].after.begin(), s.ranks[0].ops[op].after.end()),
                expected_deps[op])
          << "seed " << seed << ", op " << op;
    }
  }
}

// The input is read-only: an op that writes it is a builder's bug, refused where it is
// emitted (the executors refuse such a program too).
TEST(Builder, RefusesAWriteToTheInput) {
  ScheduleBuilder b(make_spec(CollectiveKind::kAllreduce, 2, 8), "test/writes_input");
  EXPECT_THROW(b.copy(0, Slice{Buf::kOutput, 0, 4}, Slice{Buf::kInput, 0, 4}), InternalError);
  EXPECT_THROW(b.transfer(1, 0, Slice{Buf::kInput, 0, 4}, Slice{Buf::kInput, 4, 4}), InternalError);
  EXPECT_NO_THROW(b.copy(0, Slice{Buf::kInput, 0, 4}, Slice{Buf::kOutput, 0, 4}));
}

TEST(Builder, RejectsInvalidSpec) {
  CollectiveSpec spec;
  spec.kind = CollectiveKind::kBcast;
  spec.nranks = 0;
  EXPECT_THROW(ScheduleBuilder(spec, "x"), Error);
}

}  // namespace
}  // namespace optcoll
