// SPDX-License-Identifier: Apache-2.0
// File: structural checks of schedules and message matching.
#include "optcoll/schedule/validate.h"

#include <limits>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/error.h"

namespace optcoll {
namespace {

Schedule ring() {
  return algorithms::build("allgather/ring", make_spec(CollectiveKind::kAllgather, 4, 3));
}

bool has_issue(const Schedule& s, const std::string& fragment) {
  for (const auto& issue : structure_issues(s)) {
    if (issue.message.find(fragment) != std::string::npos) return true;
  }
  return false;
}

Op& first_op_of_kind(Schedule& s, Rank r, std::size_t index_in_kind, bool send) {
  std::size_t seen = 0;
  for (auto& op : s.ranks[static_cast<std::size_t>(r)].ops) {
    const bool is_send = std::holds_alternative<Send>(op.action);
    const bool is_recv = std::holds_alternative<Recv>(op.action);
    if ((send && is_send) || (!send && is_recv)) {
      if (seen++ == index_in_kind) return op;
    }
  }
  throw std::runtime_error("no such op");
}

TEST(Structure, RegistryScheduleIsWellFormed) {
  EXPECT_TRUE(structure_issues(ring()).empty());
  EXPECT_NO_THROW(require_well_formed(ring()));
}

TEST(Structure, FindsEachKindOfDamage) {
  {
    Schedule s = ring();
    std::get<Recv>(first_op_of_kind(s, 1, 0, false).action).dst.offset = 11;
    EXPECT_TRUE(has_issue(s, "exceeds the 12-element out buffer"));
  }
  {
    Schedule s = ring();
    std::get<Send>(first_op_of_kind(s, 1, 0, true).action).peer = 9;
    EXPECT_TRUE(has_issue(s, "peer 9 out of range"));
  }
  {
    Schedule s = ring();
    first_op_of_kind(s, 0, 0, true).seq = 42;
    EXPECT_TRUE(has_issue(s, "(seq 42) has no matching receive"));
    EXPECT_TRUE(has_issue(s, "has no matching send"));
  }
  {
    Schedule s = ring();
    std::get<Recv>(first_op_of_kind(s, 1, 0, false).action).dst.count = 2;
    EXPECT_TRUE(has_issue(s, "recv of 2 elems from rank 0 (seq 0) matched a send of 3 elems"));
  }
  {
    Schedule s = ring();
    s.ranks[2].ops[1].after = {5};
    EXPECT_TRUE(has_issue(s, "does not point backwards"));
  }
  {
    Schedule s = ring();
    s.ranks.pop_back();
    EXPECT_TRUE(has_issue(s, "3 rank programs for nranks 4"));
  }
  {
    Schedule s = ring();
    s.spec.root = 2;  // allgather has no root
    EXPECT_TRUE(has_issue(s, "invalid collective spec"));
  }
}

// docs/errors.md: the remaining kinds of damage, each with its own message.
TEST(Structure, FindsEveryOtherKindOfDamage) {
  {
    Schedule s = ring();
    std::get<Send>(first_op_of_kind(s, 1, 0, true).action).src.count = -1;
    EXPECT_TRUE(has_issue(s, "send slice out[3:+-1] has a negative offset or count"));
  }
  {
    Schedule s = ring();
    std::get<Send>(first_op_of_kind(s, 1, 0, true).action).peer = 1;
    EXPECT_TRUE(has_issue(s, "rank 1 sends to or receives from itself"));
  }
  {
    Schedule s = ring();
    s.ranks[3].scratch_count = -2;
    EXPECT_TRUE(has_issue(s, "scratch size -2 out of range"));
  }
  {
    Schedule s = ring();
    s.ranks[2].ops[1].not_before = -1;
    EXPECT_TRUE(has_issue(s, "release time (not_before) -1 is not a finite time >= 0"));
    s.ranks[2].ops[1].not_before = std::numeric_limits<Time>::quiet_NaN();
    EXPECT_TRUE(has_issue(s, "release time (not_before) nan is not a finite time >= 0"));
    s.ranks[2].ops[1].not_before = 3;
    EXPECT_TRUE(structure_issues(s).empty());
  }
  {
    Schedule s = ring();
    s.ranks[2].ops[2].after = {1, 0};
    EXPECT_TRUE(has_issue(s, "dependency list is not sorted and unique"));
  }
  {
    Schedule s = ring();
    s.ranks[0].ops.push_back(Op{Copy{Slice{Buf::kInput, 0, 3}, Slice{Buf::kOutput, 0, 2}}, {}});
    EXPECT_TRUE(has_issue(s, "source has 3 elements but destination 2"));
  }
  {
    Schedule s = ring();
    first_op_of_kind(s, 0, 0, true).seq = -1;
    EXPECT_TRUE(has_issue(s, "message has no seq (got -1)"));
  }
  {
    Schedule s = ring();
    first_op_of_kind(s, 0, 1, true).seq = first_op_of_kind(s, 0, 0, true).seq;
    EXPECT_TRUE(has_issue(s, "second send to rank 1 with seq 0 (first: op"));
  }
  {
    Schedule s = ring();
    first_op_of_kind(s, 1, 1, false).seq = first_op_of_kind(s, 1, 0, false).seq;
    EXPECT_TRUE(has_issue(s, "second receive from rank 0 with seq 0 (first: op"));
  }
}

// A peer of -1 (kNoRank) is out of range like any other, so messages are not matched: matching
// it once indexed the endpoint tables at rank -1.
TEST(Structure, PeerMinusOneIsOutOfRangeAndNotMatched) {
  for (const bool send : {true, false}) {
    Schedule s = ring();
    Op& op = first_op_of_kind(s, 2, 0, send);
    if (send) {
      std::get<Send>(op.action).peer = kNoRank;
    } else {
      std::get<Recv>(op.action).peer = kNoRank;
    }
    std::vector<std::uint32_t> partner;
    const auto issues = structure_issues(s, 64, partner);
    ASSERT_EQ(issues.size(), 1u);
    EXPECT_EQ(issues[0].rank, 2);
    EXPECT_EQ(issues[0].message, "peer -1 out of range for nranks 4");
    EXPECT_TRUE(partner.empty());
  }
}

// Counts of 2^31 elements and more, and negative ones, are matched and reported exactly (the
// endpoint tables keep smaller counts only and read the others from the ops).
TEST(Structure, MatchesAndReportsCountsOfAnySize) {
  const Count big = Count{3} << 30;  // 3 * 2^30 > 2^31
  const auto ring_of = [](Count n) {
    return algorithms::build("allgather/ring", make_spec(CollectiveKind::kAllgather, 4, n));
  };
  EXPECT_TRUE(structure_issues(ring_of(big)).empty());
  {
    Schedule s = ring_of(big);
    std::get<Recv>(first_op_of_kind(s, 1, 0, false).action).dst.count = big - 1;
    EXPECT_TRUE(has_issue(s,
                          "recv of 3221225471 elems from rank 0 (seq 0) matched a send of "
                          "3221225472 elems"));
  }
  {
    Schedule s = ring_of(big);
    std::get<Recv>(first_op_of_kind(s, 1, 0, false).action).dst.count = 2;
    EXPECT_TRUE(has_issue(s,
                          "recv of 2 elems from rank 0 (seq 0) matched a send of "
                          "3221225472 elems"));
  }
  {
    Schedule s = ring_of(big);
    first_op_of_kind(s, 0, 0, true).seq = 42;
    EXPECT_TRUE(
        has_issue(s, "send of 3221225472 elems to rank 1 (seq 42) has no matching receive"));
    EXPECT_TRUE(has_issue(s, "recv of 3221225472 elems from rank 0 (seq 0) has no matching send"));
  }
  {
    Schedule s = ring_of(3);
    std::get<Send>(first_op_of_kind(s, 0, 0, true).action).src.count = -1;
    EXPECT_TRUE(has_issue(s, "recv of 3 elems from rank 0 (seq 0) matched a send of -1 elems"));
  }
}

TEST(Structure, RequireWellFormedThrowsNamingTheProblem) {
  Schedule s = ring();
  first_op_of_kind(s, 0, 0, true).seq = 42;
  try {
    require_well_formed(s);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("rank 0 op"), std::string::npos) << e.what();
  }
}

TEST(Matching, PairsEverySendWithItsReceive) {
  const Schedule s = ring();
  const auto match = match_messages(s);
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    for (std::size_t i = 0; i < s.ranks[r].ops.size(); ++i) {
      const auto& op = s.ranks[r].ops[i];
      const OpRef other = match[r][i];
      if (!is_communication(op.action)) {
        EXPECT_EQ(other.rank, kNoRank);
        continue;
      }
      ASSERT_NE(other.rank, kNoRank);
      EXPECT_EQ(other.rank, peer_of(op.action));
      const auto& peer_op =
          s.ranks[static_cast<std::size_t>(other.rank)].ops[static_cast<std::size_t>(other.op)];
      EXPECT_EQ(peer_op.seq, op.seq);
      EXPECT_EQ(peer_of(peer_op.action), static_cast<Rank>(r));
    }
  }
}

TEST(Matching, FlatFormAgreesWithPerRankForm) {
  const Schedule s = algorithms::build("reduce/binomial", make_spec(CollectiveKind::kReduce, 7, 5));
  const auto match = match_messages(s);
  const auto flat = match_messages_flat(s);
  std::vector<std::uint32_t> base{0};
  for (const auto& program : s.ranks) {
    base.push_back(base.back() + static_cast<std::uint32_t>(program.ops.size()));
  }
  ASSERT_EQ(flat.size(), base.back());
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    for (std::size_t i = 0; i < s.ranks[r].ops.size(); ++i) {
      const OpRef other = match[r][i];
      const std::uint32_t expected =
          other.rank == kNoRank
              ? kNoPartner
              : base[static_cast<std::size_t>(other.rank)] + static_cast<std::uint32_t>(other.op);
      EXPECT_EQ(flat[base[r] + i], expected) << "rank " << r << " op " << i;
    }
  }
  // The structure check hands out the same matching when the schedule is sound...
  std::vector<std::uint32_t> partner;
  EXPECT_TRUE(structure_issues(s, 64, partner).empty());
  EXPECT_EQ(partner, flat);
  // ...and none when it is not.
  Schedule broken = s;
  first_op_of_kind(broken, 1, 0, true).seq = 42;
  std::vector<std::uint32_t> untouched;
  EXPECT_FALSE(structure_issues(broken, 64, untouched).empty());
  EXPECT_TRUE(untouched.empty());
}

}  // namespace
}  // namespace optcoll
