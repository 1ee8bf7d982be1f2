// SPDX-License-Identifier: Apache-2.0
// File: hang reports (optcoll/api/hang_report.h): the line round-trips (quotes, newlines and
// mpirun's tag), malformed lines name the field, and the diagnosis names the rank that never
// reached the call, the rank that reached it late, or, when every rank reached it, the one
// that timed out first; tests/capi/check_hang.sh does the same under a real mpirun.
#include "optcoll/api/hang_report.h"

#include <string>

#include <gtest/gtest.h>

#include "optcoll/model/error.h"

namespace optcoll {
namespace {

HangReport report(Rank rank, std::int64_t entered, std::int64_t failed, bool timed_out,
                  std::vector<Rank> waiting_for, std::uint64_t call = 12) {
  HangReport r;
  r.rank = rank;
  r.size = 8;
  r.call = call;
  r.collective = "allreduce";
  r.algorithm = "allreduce/ring";
  r.entered_ms = entered;
  r.failed_ms = failed;
  r.timed_out = timed_out;
  r.waiting_for = std::move(waiting_for);
  r.reason = timed_out ? "rank timed out: no progress" : "rank 4 failed: \"x\"\nsecond line";
  return r;
}

TEST(HangReport, TheLineRoundTripsAndSkipsMpirunsTag) {
  const HangReport r = report(5, 1000, 31000, false, {4, 6});
  const std::string line = format_hang_report(r);
  EXPECT_EQ(line.find("optcoll-hang: rank=5 size=8 call=12 collective=allreduce "
                      "algorithm=allreduce/ring entered_ms=1000 failed_ms=31000 timed_out=no "
                      "waiting_for=4,6 reason="),
            0u)
      << line;
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const auto back = parse_hang_report("[1,5]<stderr>:" + line + "\n");
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->rank, 5);
  EXPECT_EQ(back->call, 12u);
  EXPECT_EQ(back->waiting_for, (std::vector<Rank>{4, 6}));
  EXPECT_FALSE(back->timed_out);
  EXPECT_EQ(back->reason, "rank 4 failed: \"x\" second line");  // the newline became a space
  EXPECT_FALSE(parse_hang_report("some other line").has_value());
  const auto none = parse_hang_report(format_hang_report(report(1, 0, 0, true, {})));
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->waiting_for.empty());
}

TEST(HangReport, MalformedLinesNameTheField) {
  const auto message = [](const std::string& line) {
    try {
      parse_hang_report(line);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kParse);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string good = format_hang_report(report(5, 1000, 2000, true, {4}));
  std::string bad = good;
  bad.replace(bad.find("rank=5"), 6, "rank=x");
  EXPECT_NE(message(bad).find("field 'rank'"), std::string::npos);
  bad = good;
  bad.replace(bad.find("timed_out=yes"), 13, "timed_out=maybe");
  EXPECT_NE(message(bad).find("field 'timed_out'"), std::string::npos);
  EXPECT_NE(message(good.substr(0, good.find(" reason="))).find("field 'reason'"),
            std::string::npos);
  bad = good;
  bad.replace(bad.find("size=8"), 6, "size=5");  // rank 5 of 5
  EXPECT_NE(message(bad).find("field 'rank'"), std::string::npos);
  try {
    diagnose_hangs({});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no hang reports"), std::string::npos);
  }
}

TEST(HangReport, RankRanges) {
  EXPECT_EQ(rank_ranges({0, 1, 2, 3, 4, 6, 7}), "0-4,6,7");
  EXPECT_EQ(rank_ranges({5}), "5");
  EXPECT_EQ(rank_ranges({3, 1, 2, 9, 10}), "1-3,9,10");
}

TEST(HangReport, TheRankThatNeverReachedTheCallIsNamed) {
  // Rank 5 of 8 never reported call 12; 4 and 6 waited for it; an older call's report of
  // rank 5 does not count.
  std::vector<HangReport> reports;
  for (const Rank r : {0, 1, 2, 3, 4, 6, 7}) {
    std::vector<Rank> waits = (r == 4 || r == 6) ? std::vector<Rank>{5} : std::vector<Rank>{};
    reports.push_back(report(r, 1000, r == 4 ? 31000 : 31005, r == 4, waits));
  }
  reports.push_back(report(5, 10, 20, true, {}, 11));
  const std::string text = diagnose_hangs(reports);
  EXPECT_NE(text.find("rank 5 never reached allreduce #12 (no report from it"), std::string::npos)
      << text;
  EXPECT_NE(text.find("ranks 0-4,6,7 reported it, and ranks 4,6 waited for it"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  rank 4: allreduce (allreduce/ring), entered at +0 ms, failed at +30000 "
                      "ms, timed out, waiting for 5"),
            std::string::npos)
      << text;
}

TEST(HangReport, TheRankThatReachedTheCallLateIsNamed) {
  // Ranks 0, 1, 3 of 4 timed out at 2000; rank 2 entered at 4000 and failed by notice.
  std::vector<HangReport> reports = {
      report(0, 1000, 2000, true, {1, 2}), report(1, 1000, 2010, true, {0, 3}),
      report(3, 1000, 2005, true, {2}), report(2, 4000, 4001, false, {0, 3})};
  for (auto& r : reports) r.size = 4;
  const std::string text = diagnose_hangs(reports);
  EXPECT_NE(text.find("rank 2 reached allreduce #12 only after rank 0 had timed out in it (up to "
                      "2000 ms later); ranks 0,3 waited for rank 2"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("never reached"), std::string::npos) << text;
}

TEST(HangReport, WhenEveryRankReachedTheCallTheFirstTimeoutIsNamed) {
  std::vector<HangReport> reports = {report(0, 1000, 2100, false, {1}),
                                     report(1, 1000, 2000, true, {0})};
  for (auto& r : reports) r.size = 2;
  reports[1].collective = "bcast";  // a mismatch is reported too
  const std::string text = diagnose_hangs(reports);
  EXPECT_NE(text.find("every rank reached allreduce #12; rank 1 timed out first, waiting for "
                      "rank 0"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("the ranks disagree on the collective: rank 0 allreduce; rank 1 bcast"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace optcoll
