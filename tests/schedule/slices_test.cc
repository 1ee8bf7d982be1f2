// SPDX-License-Identifier: Apache-2.0
// File: several-slice messages (SendSlices / RecvSlices) in the schedule format: describe(),
// text and JSON round trips (empty lists and empty slices too) and their parse errors, the
// structural checks (totals, overlapping receive slices, matching on the total), the
// builder's transfers between a slice list and a slice, the stitcher's renaming, and the
// verifier on them (right results, a swapped receive order, a race on one of the slices).
#include <gtest/gtest.h>

#include "optcoll/model/error.h"
#include "optcoll/schedule/builder.h"
#include "optcoll/schedule/io/io.h"
#include "optcoll/schedule/stitch.h"
#include "optcoll/schedule/validate.h"
#include "optcoll/verify/verify.h"
#include "tests/testing/slice_patterns.h"

namespace optcoll {
namespace {

// Gatherv of 3,3,3,200,3,3,3 at root 3 by hand: every other rank sends its block to rank 6,
// which sends them on in one SendSlices (its own block last); the root receives that message
// in one RecvSlices over its two runs (ranks 0-2 and 4-6) and copies its own block.
Schedule two_runs_gather() {
  Schedule s;
  s.spec = make_spec_v(CollectiveKind::kGatherv, 7, {3, 3, 3, 200, 3, 3, 3}, 3);
  s.algorithm = "test/two_runs";
  s.ranks.resize(7);
  s.ranks[6].scratch_count = 15;
  int k = 0;
  for (const Rank r : {0, 1, 2, 4, 5}) {
    s.ranks[static_cast<std::size_t>(r)].ops.push_back(Op{Send{6, {Buf::kInput, 0, 3}}, {}, 0});
    s.ranks[6].ops.push_back(Op{Recv{r, {Buf::kScratch, 3 * k++, 3}}, {}, 0});
  }
  s.ranks[6].ops.push_back(
      Op{SendSlices{3, {{Buf::kScratch, 0, 15}, {Buf::kInput, 0, 0}, {Buf::kInput, 0, 3}}},
         {0, 1, 2, 3, 4},
         0});
  s.ranks[3].ops.push_back(Op{Copy{{Buf::kInput, 0, 200}, {Buf::kOutput, 9, 200}}, {}, -1});
  s.ranks[3].ops.push_back(
      Op{RecvSlices{6, {{Buf::kOutput, 0, 9}, {Buf::kOutput, 209, 9}}}, {}, 0});
  return s;
}

TEST(Slices, DescribeListsTheSlices) {
  const Schedule s = two_runs_gather();
  EXPECT_EQ(describe(s.ranks[3].ops[1].action),
            "recv 18 elems from rank 6 into out[0:+9] out[209:+9]");
  EXPECT_EQ(describe(s.ranks[6].ops[5].action),
            "send 18 elems from scratch[0:+15] in[0:+0] in[0:+3] to rank 3");
  EXPECT_EQ(describe_op(s, 3, 1),
            "rank 3 op 1: recv 18 elems from rank 6 into out[0:+9] out[209:+9] (seq 0)");
  EXPECT_EQ(describe(RecvSlices{1, {}}), "recv 0 elems from rank 1 into nothing");
  EXPECT_TRUE(is_communication(SendSlices{}) && is_send(SendSlices{}) && !is_receive(SendSlices{}));
  EXPECT_TRUE(is_communication(RecvSlices{}) && is_receive(RecvSlices{}) && !is_send(RecvSlices{}));
  EXPECT_EQ(peer_of(s.ranks[3].ops[1].action), 6);
  EXPECT_EQ(message_count(s.ranks[6].ops[5].action), 18);
  EXPECT_EQ(message_count(Copy{{Buf::kInput, 0, 4}, {Buf::kOutput, 0, 4}}), 0);
}

TEST(Slices, TextAndJsonRoundTrip) {
  std::vector<Schedule> schedules{two_runs_gather()};
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    schedules.push_back(
        testing::slice_pattern_case(3, static_cast<Count>(seed * 3), seed).schedule);
  }
  for (const Schedule& s : schedules) {
    const std::string text = io::to_text(s);
    EXPECT_EQ(io::parse_text(text), s) << text;
    EXPECT_EQ(io::to_text(io::parse_text(text)), text);
    const std::string json = io::to_json(s);
    EXPECT_EQ(io::parse_json(json), s) << json;
    EXPECT_EQ(io::to_json(io::parse_json(json)), json);
  }
  const std::string text = io::to_text(two_runs_gather());
  EXPECT_NE(text.find("1 recvslices 6 seq 0 2 out[0:+9] out[209:+9]"), std::string::npos) << text;
  EXPECT_NE(io::to_json(two_runs_gather())
                .find(R"("dst":[["out",0,9],["out",209,9]],"op":"recvslices","peer":6,"seq":0)"),
            std::string::npos);
}

// `text` (a schedule) with `from` replaced by `to` must fail to parse with `fragment`.
void expect_parse_error(const std::string& text, const std::string& from, const std::string& to,
                        const std::string& fragment) {
  std::string bad = text;
  const auto at = bad.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  bad.replace(at, from.size(), to);
  try {
    (void)io::parse_schedule(bad);
    ADD_FAILURE() << "parsed: " << to;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kParse);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Slices, ParseErrorsNameTheProblem) {
  const std::string text = io::to_text(two_runs_gather());
  expect_parse_error(text, "recvslices 6 seq 0 2 out[0:+9] out[209:+9]",
                     "recvslices 6 seq 0 3 out[0:+9] out[209:+9]", "missing operands");
  expect_parse_error(text, "recvslices 6 seq 0 2 out[0:+9]", "recvslices 6 seq 0 2 out[0:9]",
                     "expected a slice");
  expect_parse_error(text, "recvslices 6 seq 0 2", "recvslices 6 seq 0 -1", "slice count");
  const std::string json = io::to_json(two_runs_gather());
  expect_parse_error(json, R"("dst":[["out",0,9],["out",209,9]])", R"("dst":["out",0,9])",
                     "dst[0]");
  expect_parse_error(json, R"("dst":[["out",0,9],["out",209,9]])", R"("dst":7)",
                     "expected a list of slices");
}

// The issues' messages, joined.
std::string issues_of(const Schedule& s) {
  std::string text;
  for (const auto& issue : structure_issues(s)) text += issue.message + "\n";
  return text;
}

TEST(Slices, StructureChecksEachSliceTheTotalAndOverlaps) {
  EXPECT_EQ(issues_of(two_runs_gather()), "");
  Schedule s = two_runs_gather();
  std::get<RecvSlices>(s.ranks[3].ops[1].action).dst[1] = {Buf::kOutput, 5, 9};
  EXPECT_NE(issues_of(s).find("recv slices out[0:+9] and out[5:+9] overlap"), std::string::npos)
      << issues_of(s);
  s = two_runs_gather();
  std::get<RecvSlices>(s.ranks[3].ops[1].action).dst[1].count = 10;
  EXPECT_NE(issues_of(s).find("exceeds the 218-element out buffer"), std::string::npos);
  s = two_runs_gather();
  std::get<RecvSlices>(s.ranks[3].ops[1].action).dst[1].count = 8;
  EXPECT_NE(issues_of(s).find("recv of 17 elems from rank 6 (seq 0) matched a send of 18 elems"),
            std::string::npos)
      << issues_of(s);
  s = two_runs_gather();
  std::get<SendSlices>(s.ranks[6].ops[5].action).src.push_back({Buf::kScratch, 0, 15});
  EXPECT_NE(issues_of(s).find("matched a send of 33 elems"), std::string::npos) << issues_of(s);
  // A send may read the same elements twice (it overlaps nothing it writes).
  s = two_runs_gather();
  std::get<SendSlices>(s.ranks[6].ops[5].action).src = {{Buf::kScratch, 0, 9},
                                                        {Buf::kScratch, 0, 9}};
  EXPECT_EQ(issues_of(s), "");
  const auto match = match_messages(two_runs_gather());
  EXPECT_EQ(match[3][1].rank, 6);
  EXPECT_EQ(match[3][1].op, 5);
  EXPECT_EQ(match[6][5].rank, 3);
}

TEST(Slices, BuilderTransfersBetweenAListAndASlice) {
  ScheduleBuilder b(make_spec_v(CollectiveKind::kGatherv, 3, {4, 2, 3}, 0), "test/builder");
  // Into three slices, one of them empty (dropped): a RecvSlices of two.
  const auto t =
      b.transfer_into_slices(1, 0, {Buf::kInput, 0, 2},
                             {{Buf::kOutput, 5, 1}, {Buf::kOutput, 0, 0}, {Buf::kOutput, 4, 1}});
  // From one non-empty slice: a plain Send.
  const auto u = b.transfer_from_slices(2, 0, {{Buf::kInput, 1, 0}, {Buf::kInput, 0, 3}},
                                        {Buf::kOutput, 6, 3});
  // A zero total emits nothing.
  const auto v = b.transfer_into_slices(2, 1, {Buf::kInput, 0, 0}, {{Buf::kOutput, 0, 0}});
  EXPECT_EQ(v.send, kNoOp);
  EXPECT_EQ(v.recv, kNoOp);
  // A write after the receive depends on it (write-after-write on out[4:+1]).
  const OpId copy = b.copy(0, {Buf::kInput, 0, 1}, {Buf::kOutput, 4, 1});
  EXPECT_THROW(b.transfer_into_slices(1, 0, {Buf::kInput, 0, 2},
                                      {{Buf::kOutput, 0, 2}, {Buf::kOutput, 1, 1}}),
               InternalError);
  EXPECT_THROW(b.transfer_from_slices(1, 0, {{Buf::kInput, 0, 1}}, {Buf::kOutput, 0, 2}),
               InternalError);
  const Schedule s = std::move(b).finish();
  EXPECT_EQ(s.ranks[0].ops[static_cast<std::size_t>(t.recv)].action,
            Action(RecvSlices{1, {{Buf::kOutput, 5, 1}, {Buf::kOutput, 4, 1}}}));
  EXPECT_EQ(s.ranks[1].ops[static_cast<std::size_t>(t.send)].action,
            Action(Send{0, {Buf::kInput, 0, 2}}));
  EXPECT_EQ(s.ranks[2].ops[static_cast<std::size_t>(u.send)].action,
            Action(Send{0, {Buf::kInput, 0, 3}}));
  EXPECT_EQ(s.ranks[0].ops[static_cast<std::size_t>(u.recv)].action,
            Action(Recv{2, {Buf::kOutput, 6, 3}}));
  EXPECT_EQ(s.ranks[0].ops[static_cast<std::size_t>(copy)].after, OpDeps{t.recv});
  EXPECT_EQ(issues_of(s), "");
}

TEST(Slices, BuilderSendSlicesReadsEverySlice) {
  ScheduleBuilder b(make_spec(CollectiveKind::kAllgather, 2, 4), "test/builder");
  const OpId write = b.copy(0, {Buf::kInput, 0, 1}, {Buf::kOutput, 6, 1});
  const auto t = b.transfer_from_slices(0, 1, {{Buf::kOutput, 0, 2}, {Buf::kOutput, 6, 2}},
                                        {Buf::kOutput, 0, 4});
  const Schedule s = std::move(b).finish();
  EXPECT_EQ(s.ranks[0].ops[static_cast<std::size_t>(t.send)].action,
            Action(SendSlices{1, {{Buf::kOutput, 0, 2}, {Buf::kOutput, 6, 2}}}));
  EXPECT_EQ(s.ranks[0].ops[static_cast<std::size_t>(t.send)].after, OpDeps{write});
}

TEST(Slices, StitcherRenamesEverySlice) {
  const Schedule part = two_runs_gather();
  const CollectiveSpec whole =
      make_spec_v(CollectiveKind::kGatherv, 8, {5, 3, 3, 3, 200, 3, 3, 3}, 4);
  Stitcher st(whole, "test/stitched");
  const std::vector<Rank> members{1, 2, 3, 4, 5, 6, 7};
  st.append(part, members, [](Rank r, Buf buf) {
    // Part rank i is rank i + 1; the root's output is the whole output after rank 0's block.
    if (buf == Buf::kOutput && r == 3) return Slice{Buf::kOutput, 5, 218};
    return Slice{buf, 0, buf == Buf::kInput ? (r == 3 ? 200 : 3) : 0};
  });
  const Schedule s = std::move(st).finish();
  EXPECT_EQ(s.ranks[4].ops[1].action,
            Action(RecvSlices{7, {{Buf::kOutput, 5, 9}, {Buf::kOutput, 214, 9}}}));
  EXPECT_EQ(std::get<SendSlices>(s.ranks[7].ops[5].action).peer, 4);
}

// The verifier's diagnostics, joined.
std::string verdict(const Schedule& s) {
  const auto report = verify(s);
  std::string text;
  for (const auto& d : report.diagnostics) {
    text += std::string(verify_check_name(d.check)) + ": " + d.message + "\n";
  }
  return text;
}

TEST(Slices, VerifierFollowsTheSlicesInOrder) {
  EXPECT_EQ(verdict(two_runs_gather()), "");
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const auto c = testing::slice_pattern_case(2 + static_cast<Rank>(seed % 4),
                                               static_cast<Count>(seed % 7) * 5, seed);
    EXPECT_EQ(verdict(c.schedule), "") << seed;
  }
  // The receive's two runs swapped: ranks 4-6's blocks land where ranks 0-2's belong.
  Schedule s = two_runs_gather();
  auto& dst = std::get<RecvSlices>(s.ranks[3].ops[1].action).dst;
  std::swap(dst[0], dst[1]);
  EXPECT_NE(verdict(s).find("semantics"), std::string::npos) << verdict(s);
  // The send's slices in another order: the same.
  s = two_runs_gather();
  auto& src = std::get<SendSlices>(s.ranks[6].ops[5].action).src;
  std::swap(src[0], src[2]);
  EXPECT_NE(verdict(s).find("semantics"), std::string::npos) << verdict(s);
  // The sub-root's send no longer waits for one of its receives: a race on scratch[6:+3].
  s = two_runs_gather();
  s.ranks[6].ops[5].after = {0, 1, 3, 4};
  EXPECT_NE(verdict(s).find("race on scratch[6]"), std::string::npos) << verdict(s);
  // The root's own copy into one of the receive's runs: a race on out[209].
  s = two_runs_gather();
  std::get<Copy>(s.ranks[3].ops[0].action).dst = {Buf::kOutput, 18, 200};
  EXPECT_NE(verdict(s).find("race on out[209]"), std::string::npos) << verdict(s);
}

}  // namespace
}  // namespace optcoll
