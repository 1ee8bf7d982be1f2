// SPDX-License-Identifier: Apache-2.0
// File: hang reports. When a collective of the C API (or the PMPI library) fails because a
// rank timed out or another rank's failure ended it, every rank that failed writes one line
// on stderr in a fixed format; `optcoll diagnose` reads the lines of all ranks (mpirun's
// merged stderr, or per-rank files) and says who held the call up:
//
//   optcoll-hang: rank=5 size=8 call=12 collective=allreduce algorithm=allreduce/ring
//     entered_ms=1764239112345 failed_ms=1764239142350 timed_out=yes waiting_for=4,6
//     reason="rank 5 timed out: no progress for 30000 ms; waiting on: ..."   (one line)
//
//   call: the communicator's collective call number (the same on every rank); entered_ms
//   and failed_ms: wall-clock milliseconds since the epoch when the rank entered the call and
//   when it failed; waiting_for: the peers of its messages in flight ("-": none).
//
// The diagnosis of the latest failed call: the ranks that never reported it ("never reached
// allreduce #12": stalled or died before it), those that reached it only after another rank
// had timed out in it (late), and who waited for them.
//
// Example:
//   diagnose_hangs(parse_hang_reports(text))
//     -> "rank 5 never reached allreduce #12 (no report from it: it stalled before the call
//         or died); ranks 0-4,6,7 reported it, and ranks 4,6 waited for rank 5"
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "optcoll/model/types.h"

namespace optcoll {

inline constexpr std::string_view kHangReportPrefix = "optcoll-hang:";

struct HangReport {
  Rank rank = 0;
  Rank size = 0;
  std::uint64_t call = 0;
  std::string collective;  // what ran when it failed ("allreduce"), or "-"
  std::string algorithm;   // the registry algorithm, or "-"
  std::int64_t entered_ms = 0;
  std::int64_t failed_ms = 0;
  bool timed_out = false;
  std::vector<Rank> waiting_for;
  std::string reason;
};

// The line (without a newline), as the file comment shows it.
std::string format_hang_report(const HangReport& report);
// The report in a line that contains kHangReportPrefix (anything before it, such as mpirun's
// "[1,3]<stderr>:" tag, is skipped); nullopt for other lines. Throws Error(kParse) naming the
// field for a line with the prefix that is malformed.
std::optional<HangReport> parse_hang_report(std::string_view line);
// Every report in `text` (one per line; other lines are skipped).
std::vector<HangReport> parse_hang_reports(std::string_view text);
// The diagnosis (file comment), one paragraph, then one line per reporting rank. Throws
// Error(kInvalidArgument) when there are no reports.
std::string diagnose_hangs(const std::vector<HangReport>& reports);
// "0-4,6,7"
std::string rank_ranges(std::vector<Rank> ranks);

}  // namespace optcoll
