// SPDX-License-Identifier: Apache-2.0
// File: hand-built schedules that are correct but unusual (custom combination orders, local
// reductions, pipelining, multi-run messages, orderings that are only transitive) verify
// clean; near-identical wrong ones do not. Also the rank-set algebra the checks rest on.
#include <gtest/gtest.h>

#include "optcoll/schedule/builder.h"
#include "optcoll/verify/rank_sets.h"
#include "optcoll/verify/verify.h"
#include "tests/verify/mutations.h"

namespace optcoll {
namespace {

CollectiveSpec spec_of(CollectiveKind kind, Rank p, Count n, Rank root, bool commutative) {
  CollectiveSpec spec = make_spec(kind, p, n, root);
  spec.commutative = commutative;
  return spec;
}

// reduce p=4 at root 1, combining 2, then 0, then 3 on the sides that keep rank order.
Schedule custom_order_reduce(bool commutative, Side side_of_0) {
  ScheduleBuilder b(spec_of(CollectiveKind::kReduce, 4, 3, 1, commutative), "test/custom");
  const Slice in{Buf::kInput, 0, 3};
  const Slice out{Buf::kOutput, 0, 3};
  b.copy(1, in, out);
  b.transfer_reduce(2, 1, in, out, Side::kRight);  // {1..2}
  b.transfer_reduce(0, 1, in, out, side_of_0);     // {0..2} when on the left
  b.transfer_reduce(3, 1, in, out, Side::kRight);  // {0..3}
  return std::move(b).finish();
}

TEST(VerifyHandBuilt, ReduceRootCombinesInACustomOrder) {
  for (const bool commutative : {true, false}) {
    const auto report = verify(custom_order_reduce(commutative, Side::kLeft));
    EXPECT_TRUE(report.ok()) << report.summary();
  }
  EXPECT_TRUE(verify(custom_order_reduce(true, Side::kRight)).ok());
  const auto wrong = verify(custom_order_reduce(false, Side::kRight));
  EXPECT_TRUE(testing::find_diagnostic(wrong, VerifyCheck::kSemantics, "out of rank order"))
      << wrong.summary();
}

TEST(VerifyHandBuilt, LocalReduceOfAReceivedOperand) {
  // Rank 0 receives x1 into scratch and combines it locally: out = op(x0, x1).
  for (const Side side : {Side::kRight, Side::kLeft}) {
    ScheduleBuilder b(spec_of(CollectiveKind::kReduce, 2, 4, 0, false), "test/local");
    const Slice tmp = b.scratch(0, 4);
    b.transfer(1, 0, {Buf::kInput, 0, 4}, tmp);
    b.copy(0, {Buf::kInput, 0, 4}, {Buf::kOutput, 0, 4});
    b.reduce(0, tmp, {Buf::kOutput, 0, 4}, side);
    const auto report = verify(std::move(b).finish());
    EXPECT_EQ(report.ok(), side == Side::kRight) << report.summary();
  }
}

TEST(VerifyHandBuilt, PipelinedChainBroadcastOutOfOrderSegments) {
  // 0 -> 1 -> 2, in three segments that the root sends last-first.
  ScheduleBuilder b(make_spec(CollectiveKind::kBcast, 3, 10), "test/pipeline");
  const Slice segments[] = {{Buf::kOutput, 8, 2}, {Buf::kOutput, 4, 4}, {Buf::kOutput, 0, 4}};
  for (const Slice& seg : segments) {
    b.transfer(0, 1, seg, seg);
    b.transfer(1, 2, seg, seg);
  }
  const auto report = verify(std::move(b).finish());
  EXPECT_TRUE(report.ok()) << report.summary();
  EXPECT_EQ(report.messages, 6u);
}

TEST(VerifyHandBuilt, OneMessageCarriesBlocksOfSeveralRanks) {
  // gather p=3 at root 0: rank 1 collects [x1 x2] in scratch and forwards both blocks in
  // one message, which the root receives as one slice holding two runs.
  ScheduleBuilder b(make_spec(CollectiveKind::kGather, 3, 2), "test/relay");
  const Slice area = b.scratch(1, 4);
  b.copy(1, {Buf::kInput, 0, 2}, {Buf::kScratch, area.offset, 2});
  b.transfer(2, 1, {Buf::kInput, 0, 2}, {Buf::kScratch, area.offset + 2, 2});
  b.transfer(1, 0, area, {Buf::kOutput, 2, 4});
  b.copy(0, {Buf::kInput, 0, 2}, {Buf::kOutput, 0, 2});
  const Schedule good = std::move(b).finish();
  EXPECT_TRUE(verify(good).ok()) << verify(good).summary();

  Schedule swapped = good;  // rank 1 stores the blocks the other way round
  for (auto& op : swapped.ranks[1].ops) {
    if (auto* c = std::get_if<Copy>(&op.action)) c->dst.offset = area.offset + 2;
    if (auto* r = std::get_if<Recv>(&op.action)) r->dst.offset = area.offset;
  }
  const auto report = verify(swapped);
  const Diagnostic* d = testing::find_diagnostic(report, VerifyCheck::kSemantics, "out[2]");
  ASSERT_NE(d, nullptr) << report.summary();
  EXPECT_EQ(d->expected, "x[0]{1}");
  EXPECT_EQ(d->actual, "x[0]{2}");
}

TEST(VerifyHandBuilt, TransitiveOrderingIsNotARace) {
  // Rank 1 receives the message twice into the same scratch, copying it out in between;
  // the second receive and the second copy are ordered after the first ones only through
  // intermediate ops.
  Schedule s;
  s.spec = make_spec(CollectiveKind::kBcast, 2, 2);
  s.algorithm = "test/transitive";
  s.ranks.resize(2);
  const Slice out{Buf::kOutput, 0, 2};
  const Slice tmp{Buf::kScratch, 0, 2};
  s.ranks[0].ops = {{Send{1, out}, {}, 0}, {Send{1, out}, {}, 1}};
  s.ranks[1].scratch_count = 2;
  s.ranks[1].ops = {{Recv{0, tmp}, {}, 0},
                    {Copy{tmp, out}, {0}, -1},
                    {Recv{0, tmp}, {1}, 1},
                    {Copy{tmp, out}, {2}, -1}};
  EXPECT_TRUE(verify(s).ok()) << verify(s).summary();

  s.ranks[1].ops[3].after = {};  // the last copy may now overlap the second receive
  const auto report = verify(s);
  const Diagnostic* d = testing::find_diagnostic(report, VerifyCheck::kRace);
  ASSERT_NE(d, nullptr) << report.summary();
  EXPECT_EQ(d->rank, 1);
  EXPECT_EQ(d->op, 3);
}

TEST(VerifyHandBuilt, CopyOntoItselfIsRejected) {
  // An overlapping copy is a race inside one op: its reads and writes are unordered.
  Schedule s;
  s.spec = make_spec(CollectiveKind::kAllgather, 1, 4);
  s.ranks.resize(1);
  s.ranks[0].ops = {{Copy{{Buf::kInput, 0, 4}, {Buf::kOutput, 0, 4}}, {}, -1},
                    {Copy{{Buf::kOutput, 0, 2}, {Buf::kOutput, 1, 2}}, {0}, -1}};
  const auto report = verify(s);
  const Diagnostic* d = testing::find_diagnostic(report, VerifyCheck::kRace, "overlap");
  ASSERT_NE(d, nullptr) << report.summary();
  EXPECT_EQ(d->op, 1);
  EXPECT_EQ(d->element, 1);
}

TEST(VerifyHandBuilt, AlltoallThroughScratch) {
  ScheduleBuilder b(make_spec(CollectiveKind::kAlltoall, 2, 2), "test/alltoall");
  for (Rank r = 0; r < 2; ++r) {
    const Slice tmp = b.scratch(r, 2);
    b.copy(r, {Buf::kInput, 2 * r, 2}, tmp);
    b.copy(r, tmp, {Buf::kOutput, 2 * r, 2});
    b.transfer(r, 1 - r, {Buf::kInput, 2 * (1 - r), 2}, {Buf::kOutput, 2 * r, 2});
  }
  const auto report = verify(std::move(b).finish());
  EXPECT_TRUE(report.ok()) << report.summary();
}

TEST(VerifyHandBuilt, CombiningDifferentElementsIsRejected) {
  // reduce p=2 n=2 where rank 1 sends its elements crosswise.
  ScheduleBuilder b(make_spec(CollectiveKind::kReduce, 2, 2), "test/crosswise");
  b.copy(0, {Buf::kInput, 0, 2}, {Buf::kOutput, 0, 2});
  b.transfer_reduce(1, 0, {Buf::kInput, 1, 1}, {Buf::kOutput, 0, 1}, Side::kRight);
  b.transfer_reduce(1, 0, {Buf::kInput, 0, 1}, {Buf::kOutput, 1, 1}, Side::kRight);
  const auto report = verify(std::move(b).finish());
  const Diagnostic* d =
      testing::find_diagnostic(report, VerifyCheck::kSemantics, "element indices differ (0 vs 1)");
  ASSERT_NE(d, nullptr) << report.summary();
  EXPECT_EQ(d->rank, 0);
  EXPECT_EQ(d->element, 0);
}

TEST(VerifyHandBuilt, LargeMessagesCostCellsNotElements) {
  // 2^40 elements would take forever per element; per cell it is three messages.
  ScheduleBuilder b(make_spec(CollectiveKind::kBcast, 4, Count{1} << 40), "test/huge");
  const Slice all{Buf::kOutput, 0, Count{1} << 40};
  b.transfer(0, 1, all, all);
  b.transfer(0, 2, all, all);
  b.transfer(2, 3, all, all);
  const auto report = verify(std::move(b).finish());
  EXPECT_TRUE(report.ok()) << report.summary();
}

using verify_detail::kInvalid;
using verify_detail::RankRange;
using verify_detail::RankSets;

TEST(VerifyRankSets, UnionsAreCanonical) {
  RankSets sets(16);
  RankRange shared;
  const auto a = RankSets::range(0, 2);
  const auto b = RankSets::range(5, 5);
  const auto ab = sets.unite(a, b, shared);
  EXPECT_FALSE(RankSets::is_range(ab));
  EXPECT_EQ(sets.format_set(ab), "{0..2,5}");
  EXPECT_EQ(sets.unite(b, a, shared), ab);  // same set, same id
  const auto all = sets.unite(ab, RankSets::range(3, 4), shared);
  EXPECT_EQ(all, RankSets::range(0, 5));  // adjacent ranges merge back into one range
  EXPECT_EQ(sets.format_value(7, all), "x[7]{0..5}");
  EXPECT_EQ(sets.interned(), 1u);
}

TEST(VerifyRankSets, RangesThatWrapAroundAreNotInterned) {
  RankSets sets(16);
  RankRange shared;
  const auto tail = sets.unite(RankSets::range(14, 15), RankSets::range(0, 0), shared);
  EXPECT_EQ(sets.format_set(tail), "{0,14..15}");
  const auto longer = sets.unite(tail, RankSets::range(13, 13), shared);
  EXPECT_EQ(sets.format_set(longer), "{0,13..15}");
  EXPECT_EQ(sets.unite(longer, RankSets::range(1, 12), shared), RankSets::range(0, 15));
  EXPECT_EQ(sets.unite(longer, RankSets::range(15, 15), shared), kInvalid);
  EXPECT_EQ(shared.first, 15);
  EXPECT_EQ(sets.interned(), 0u);
  // Not touching both ends: interned, and equal sets still get equal ids.
  const auto gap = sets.unite(RankSets::range(0, 0), RankSets::range(5, 5), shared);
  EXPECT_EQ(sets.interned(), 1u);
  EXPECT_EQ(sets.unite(RankSets::range(5, 5), RankSets::range(0, 0), shared), gap);
  EXPECT_NE(gap, sets.unite(RankSets::range(0, 0), RankSets::range(15, 15), shared));
}

TEST(VerifyRankSets, OverlapNamesTheSharedRanks) {
  RankSets sets(16);
  RankRange shared;
  const auto ab = sets.unite(RankSets::range(0, 2), RankSets::range(6, 9), shared);
  EXPECT_EQ(sets.unite(ab, RankSets::range(8, 12), shared), kInvalid);
  EXPECT_EQ(shared.first, 8);
  EXPECT_EQ(shared.last, 9);
  EXPECT_EQ(sets.unite(RankSets::range(1, 4), RankSets::range(4, 4), shared), kInvalid);
  EXPECT_EQ(shared.first, 4);
  EXPECT_EQ(shared.last, 4);
  EXPECT_EQ(sets.format_value(0, verify_detail::kUndefined), "undefined");
}

}  // namespace
}  // namespace optcoll
