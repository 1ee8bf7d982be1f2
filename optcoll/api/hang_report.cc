// SPDX-License-Identifier: Apache-2.0
// File: hang reports: the line format and the diagnosis (hang_report.h).
#include "optcoll/api/hang_report.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include <fmt/format.h>

#include "optcoll/model/error.h"

namespace optcoll {
namespace {

std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return out + "\"";
}

std::string rank_list(const std::vector<Rank>& ranks) {
  if (ranks.empty()) return "-";
  std::string out;
  for (const Rank r : ranks) out += fmt::format("{}{}", out.empty() ? "" : ",", r);
  return out;
}

[[noreturn]] void bad_field(std::string_view field, std::string_view line) {
  throw Error(ErrorCode::kParse,
              fmt::format("hang report: bad or missing field '{}' in: {}", field, line));
}

template <typename T>
T number(std::string_view text, std::string_view field, std::string_view line) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) bad_field(field, line);
  return value;
}

// key=value fields up to ` reason="`, and the reason.
struct Fields {
  std::map<std::string, std::string, std::less<>> values;
  std::string reason;
};

Fields split_fields(std::string_view body, std::string_view line) {
  Fields f;
  const auto reason_at = body.find(" reason=\"");
  if (reason_at == std::string_view::npos || body.back() != '"') bad_field("reason", line);
  const std::string_view quoted_reason = body.substr(reason_at + 9, body.size() - reason_at - 10);
  for (std::size_t i = 0; i < quoted_reason.size(); ++i) {
    if (quoted_reason[i] == '\\' && i + 1 < quoted_reason.size()) ++i;
    f.reason += quoted_reason[i];
  }
  std::string_view rest = body.substr(0, reason_at);
  while (!rest.empty()) {
    const auto start = rest.find_first_not_of(' ');
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    const auto end = std::min(rest.find(' '), rest.size());
    const std::string_view token = rest.substr(0, end);
    const auto eq = token.find('=');
    if (eq == std::string_view::npos) bad_field(token, line);
    f.values.emplace(std::string(token.substr(0, eq)), std::string(token.substr(eq + 1)));
    rest.remove_prefix(end);
  }
  return f;
}

const std::string& field(const Fields& f, std::string_view name, std::string_view line) {
  const auto it = f.values.find(name);
  if (it == f.values.end()) bad_field(name, line);
  return it->second;
}

std::vector<Rank> parse_ranks(std::string_view text, std::string_view line) {
  std::vector<Rank> ranks;
  if (text == "-") return ranks;
  while (!text.empty()) {
    const auto comma = std::min(text.find(','), text.size());
    ranks.push_back(number<Rank>(text.substr(0, comma), "waiting_for", line));
    text.remove_prefix(std::min(comma + 1, text.size()));
  }
  return ranks;
}

std::string plural(std::size_t n, std::string_view word) {
  return n == 1 ? std::string(word) : fmt::format("{}s", word);
}

std::string who(const std::vector<Rank>& ranks) {
  return fmt::format("{} {}", plural(ranks.size(), "rank"), rank_ranges(ranks));
}

// The reporters whose messages in flight had a peer in `targets`.
std::vector<Rank> waiters_for(const std::vector<const HangReport*>& reports,
                              const std::vector<Rank>& targets) {
  std::vector<Rank> out;
  for (const auto* r : reports) {
    const bool waits = std::any_of(r->waiting_for.begin(), r->waiting_for.end(), [&](Rank q) {
      return std::find(targets.begin(), targets.end(), q) != targets.end();
    });
    if (waits) out.push_back(r->rank);
  }
  return out;
}

}  // namespace

std::string rank_ranges(std::vector<Rank> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j >= i + 2   ? fmt::format("{}-{}", ranks[i], ranks[j])
           : j == i + 1 ? fmt::format("{},{}", ranks[i], ranks[j])
                        : fmt::format("{}", ranks[i]);
    i = j + 1;
  }
  return out;
}

std::string format_hang_report(const HangReport& r) {
  return fmt::format(
      "{} rank={} size={} call={} collective={} algorithm={} entered_ms={} failed_ms={} "
      "timed_out={} waiting_for={} reason={}",
      kHangReportPrefix, r.rank, r.size, r.call, r.collective.empty() ? "-" : r.collective,
      r.algorithm.empty() ? "-" : r.algorithm, r.entered_ms, r.failed_ms,
      r.timed_out ? "yes" : "no", rank_list(r.waiting_for), quoted(r.reason));
}

std::optional<HangReport> parse_hang_report(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  const auto at = line.find(kHangReportPrefix);
  if (at == std::string_view::npos) return std::nullopt;
  const Fields f = split_fields(line.substr(at + kHangReportPrefix.size()), line);
  HangReport r;
  r.rank = number<Rank>(field(f, "rank", line), "rank", line);
  r.size = number<Rank>(field(f, "size", line), "size", line);
  r.call = number<std::uint64_t>(field(f, "call", line), "call", line);
  r.collective = field(f, "collective", line);
  r.algorithm = field(f, "algorithm", line);
  r.entered_ms = number<std::int64_t>(field(f, "entered_ms", line), "entered_ms", line);
  r.failed_ms = number<std::int64_t>(field(f, "failed_ms", line), "failed_ms", line);
  const std::string& timed_out = field(f, "timed_out", line);
  if (timed_out != "yes" && timed_out != "no") bad_field("timed_out", line);
  r.timed_out = timed_out == "yes";
  r.waiting_for = parse_ranks(field(f, "waiting_for", line), line);
  r.reason = f.reason;
  if (r.size < 1 || r.rank < 0 || r.rank >= r.size) bad_field("rank", line);
  return r;
}

std::vector<HangReport> parse_hang_reports(std::string_view text) {
  std::vector<HangReport> out;
  while (!text.empty()) {
    const auto end = std::min(text.find('\n'), text.size());
    if (auto r = parse_hang_report(text.substr(0, end))) out.push_back(std::move(*r));
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return out;
}

namespace {

// One line per reporting rank, times from the first rank's entry into the call.
std::string per_rank_lines(const std::vector<const HangReport*>& in_call) {
  std::string out;
  std::int64_t start = in_call.front()->entered_ms;
  for (const auto* r : in_call) start = std::min(start, r->entered_ms);
  for (const auto* r : in_call) {
    out += fmt::format(
        "  rank {}: {} ({}), entered at +{} ms, failed at +{} ms, {}, waiting for {}\n", r->rank,
        r->collective, r->algorithm, r->entered_ms - start, r->failed_ms - start,
        r->timed_out ? "timed out" : "ended by another failure", rank_list(r->waiting_for));
  }
  return out;
}

}  // namespace

std::string diagnose_hangs(const std::vector<HangReport>& reports) {
  if (reports.empty()) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("no hang reports (lines with '{}') to diagnose", kHangReportPrefix));
  }
  // The latest failed call; one report per rank (the last one given).
  std::uint64_t call = 0;
  for (const auto& r : reports) call = std::max(call, r.call);
  std::map<Rank, const HangReport*> by_rank;
  for (const auto& r : reports) {
    if (r.call == call) by_rank[r.rank] = &r;
  }
  std::vector<const HangReport*> in_call;
  for (const auto& [rank, r] : by_rank) in_call.push_back(r);
  const Rank size = in_call.front()->size;
  std::vector<Rank> reporters, missing;
  for (const auto* r : in_call) reporters.push_back(r->rank);
  for (Rank q = 0; q < size; ++q) {
    if (!by_rank.contains(q)) missing.push_back(q);
  }
  std::set<std::string> collectives;
  for (const auto* r : in_call) collectives.insert(r->collective);
  const std::string what = fmt::format("{} #{}", *collectives.begin(), call);
  // The first rank that timed out in it (else the first that failed).
  const HangReport* first = in_call.front();
  for (const auto* r : in_call) {
    const bool earlier =
        r->timed_out != first->timed_out ? r->timed_out : r->failed_ms < first->failed_ms;
    if (earlier) first = r;
  }
  std::vector<Rank> late;
  for (const auto* r : in_call) {
    if (r->entered_ms > first->failed_ms) late.push_back(r->rank);
  }
  std::string out;
  if (!missing.empty()) {
    const auto waiters = waiters_for(in_call, missing);
    out += fmt::format(
        "{} never reached {} (no report from {}: stalled before the call, or died); {} "
        "reported it",
        who(missing), what, missing.size() == 1 ? "it" : "them", who(reporters));
    if (!waiters.empty()) {
      out +=
          fmt::format(", and {} waited for {}", who(waiters), missing.size() == 1 ? "it" : "them");
    }
    out += ".\n";
  }
  if (!late.empty()) {
    std::int64_t latest = 0;
    for (const auto* r : in_call) {
      if (std::find(late.begin(), late.end(), r->rank) != late.end()) {
        latest = std::max(latest, r->entered_ms - first->failed_ms);
      }
    }
    const auto waiters = waiters_for(in_call, late);
    out +=
        fmt::format("{} reached {} only after rank {} had {} in it (up to {} ms later)", who(late),
                    what, first->rank, first->timed_out ? "timed out" : "failed", latest);
    if (!waiters.empty()) out += fmt::format("; {} waited for {}", who(waiters), who(late));
    out += ".\n";
  }
  if (missing.empty() && late.empty()) {
    out += fmt::format(
        "every rank reached {}; rank {} {} first, waiting for {}.\n", what, first->rank,
        first->timed_out ? "timed out" : "failed",
        first->waiting_for.empty() ? std::string("no message") : who(first->waiting_for));
  }
  if (collectives.size() > 1) {
    out += "the ranks disagree on the collective:";
    for (const auto* r : in_call) out += fmt::format(" rank {} {};", r->rank, r->collective);
    out.back() = '\n';
  }
  out += per_rank_lines(in_call);
  return out;
}

}  // namespace optcoll
