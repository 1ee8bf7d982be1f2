// SPDX-License-Identifier: Apache-2.0
// File: structural checks and message matching.
#include "optcoll/schedule/validate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <tuple>

#include <fmt/format.h>

#include "optcoll/model/error.h"
#include "optcoll/model/huge_pages.h"

namespace optcoll {
namespace {

// One message endpoint, as seen from the rank that owns it: 16 bytes, for the tables hold
// every message twice (12 M endpoints for the two-level allreduce at p = 65,536), and the
// first touch of their pages was a large part of the structure check.
struct Endpoint {
  static constexpr std::int32_t kOtherCount = std::numeric_limits<std::int32_t>::min();

  Rank peer;
  std::int32_t seq;
  OpId op;
  // The message's element count if in [0, 2^31), else kOtherCount (message_count() reads it
  // from the op). check_matches() replaces a receive's, once compared, with ~(the op of the
  // first send found to match it): a value below 0 other than kOtherCount, as ops are below
  // 2^31 - 1.
  std::int32_t count_or_match;

  static std::int32_t compact(Count count) {
    return count >= 0 && count <= std::numeric_limits<std::int32_t>::max()
               ? static_cast<std::int32_t>(count)
               : kOtherCount;
  }
  bool matched() const { return count_or_match < 0 && count_or_match != kOtherCount; }
  OpId match_op() const { return ~count_or_match; }
  void set_match(OpId send_op) { count_or_match = ~send_op; }
  bool operator<(const Endpoint& other) const {
    return std::tie(peer, seq, op) < std::tie(other.peer, other.seq, other.op);
  }
};

// The element count of rank r's endpoint `e` (not a matched receive).
Count message_count(const Schedule& schedule, std::size_t r, const Endpoint& e) {
  if (e.count_or_match != Endpoint::kOtherCount) return e.count_or_match;
  return ::optcoll::message_count(schedule.ranks[r].ops[static_cast<std::size_t>(e.op)].action);
}

// Whether rank r's send `s` and rank s.peer's receive `v` (not yet matched) have one count.
bool same_count(const Schedule& schedule, std::size_t r, const Endpoint& s, const Endpoint& v) {
  if (s.count_or_match != Endpoint::kOtherCount || v.count_or_match != Endpoint::kOtherCount) {
    return s.count_or_match == v.count_or_match;
  }
  return message_count(schedule, r, s) ==
         message_count(schedule, static_cast<std::size_t>(s.peer), v);
}

class IssueList {
 public:
  explicit IssueList(std::size_t max) : max_(max) {}
  bool full() const { return issues_.size() >= max_; }
  bool empty() const { return issues_.empty(); }
  template <typename... Args>
  void add(Rank rank, OpId op, fmt::format_string<Args...> format, Args&&... args) {
    if (!full()) issues_.push_back({rank, op, fmt::format(format, std::forward<Args>(args)...)});
  }
  std::vector<StructureIssue> take() { return std::move(issues_); }

 private:
  std::size_t max_;
  std::vector<StructureIssue> issues_;
};

// Message endpoints of every rank in one flat array (no per-rank allocations, which
// dominate at p = 2^20): rank r's are items[start[r] .. start[r+1]), sorted by (peer, seq, op).
struct EndpointTable {
  std::vector<Endpoint> items;
  std::vector<std::size_t> start;  // p + 1 offsets

  std::span<const Endpoint> of(std::size_t r) const {
    return std::span<const Endpoint>(items).subspan(start[r], start[r + 1] - start[r]);
  }
  void sort_each_rank() {
    for (std::size_t r = 0; r + 1 < start.size(); ++r) {
      const auto first = items.begin() + static_cast<std::ptrdiff_t>(start[r]);
      const auto last = items.begin() + static_cast<std::ptrdiff_t>(start[r + 1]);
      if (!std::is_sorted(first, last)) std::sort(first, last);
    }
  }
};

struct Endpoints {
  EndpointTable sends;
  EndpointTable recvs;
};

// Appends op `id`'s endpoint, if it is a message, to rank r's tables (which must be the last).
void add_endpoint(Endpoints& e, const Op& op, OpId id) {
  if (const auto* s = std::get_if<Send>(&op.action)) {
    e.sends.items.push_back({s->peer, op.seq, id, Endpoint::compact(s->src.count)});
  } else if (const auto* v = std::get_if<Recv>(&op.action)) {
    e.recvs.items.push_back({v->peer, op.seq, id, Endpoint::compact(v->dst.count)});
  } else if (const auto* rr = std::get_if<RecvReduce>(&op.action)) {
    e.recvs.items.push_back({rr->peer, op.seq, id, Endpoint::compact(rr->dst.count)});
  } else if (const auto* ss = std::get_if<SendSlices>(&op.action)) {
    e.sends.items.push_back({ss->peer, op.seq, id, Endpoint::compact(total_count(ss->src))});
  } else if (const auto* rs = std::get_if<RecvSlices>(&op.action)) {
    e.recvs.items.push_back({rs->peer, op.seq, id, Endpoint::compact(total_count(rs->dst))});
  }
}

void begin_rank(Endpoints& e, std::size_t r) {
  e.sends.start[r] = e.sends.items.size();
  e.recvs.start[r] = e.recvs.items.size();
}

void finish_endpoints(Endpoints& e, std::size_t p) {
  begin_rank(e, p);
  e.sends.sort_each_rank();
  e.recvs.sort_each_rank();
}

Endpoints empty_endpoints(const Schedule& schedule) {
  Endpoints e;
  const std::size_t p = schedule.ranks.size();
  e.sends.start.assign(p + 1, 0);
  e.recvs.start.assign(p + 1, 0);
  reserve_on_huge_pages(e.sends.items, schedule.op_count() / 2);
  reserve_on_huge_pages(e.recvs.items, schedule.op_count() / 2);
  return e;
}

// Collects message endpoints; assumes peers are in range.
Endpoints collect_endpoints(const Schedule& schedule) {
  Endpoints e = empty_endpoints(schedule);
  const std::size_t p = schedule.ranks.size();
  for (std::size_t r = 0; r < p; ++r) {
    begin_rank(e, r);
    const auto& ops = schedule.ranks[r].ops;
    for (std::size_t i = 0; i < ops.size(); ++i) add_endpoint(e, ops[i], static_cast<OpId>(i));
  }
  finish_endpoints(e, p);
  return e;
}

// Calls fn(r, i, match) for endpoint i of every rank r in `from`, where `match` points to the
// first endpoint in `to` of rank `peer` that names r with the same seq, or is nullptr (a
// pointer to const when `to` is const). Walks each (rank, peer) block of both tables in step,
// in linear time: ranks are walked in increasing order, so the block of rank q's table that
// names the walked rank only moves forward, and a cursor per rank finds it without a binary
// search (whose ~log2 cache misses per block, in tables of hundreds of MB, dominated the
// check at p = 65,536). Assumes peers are in range.
template <typename Table, typename Fn>
void for_each_match(const EndpointTable& from, Table& to, Fn&& fn) {
  const std::size_t p = from.start.size() - 1;
  // next[q]: in rank q's `to` endpoints, the first whose peer is not below the walked rank.
  std::vector<std::size_t> next(to.start.begin(), to.start.end() - 1);
  for (std::size_t r = 0; r < p; ++r) {
    const auto mine = from.of(r);
    std::size_t cursor = 0;
    std::size_t end = 0;
    const auto me = static_cast<Rank>(r);
    for (std::size_t i = 0; i < mine.size(); ++i) {
      const Endpoint& x = mine[i];
      if (i == 0 || x.peer != mine[i - 1].peer) {
        const auto q = static_cast<std::size_t>(x.peer);
        end = to.start[q + 1];
        while (next[q] < end && to.items[next[q]].peer < me) ++next[q];
        cursor = next[q];
      }
      while (cursor < end && to.items[cursor].peer == me && to.items[cursor].seq < x.seq) {
        ++cursor;
      }
      const bool found =
          cursor < end && to.items[cursor].peer == me && to.items[cursor].seq == x.seq;
      fn(r, i, found ? &to.items[cursor] : nullptr);
    }
  }
}

// The flat numbering of match_messages_flat(): op i of rank r is base[r] + i (p + 1 entries).
std::vector<std::uint32_t> flat_bases(const Schedule& schedule) {
  const std::size_t p = schedule.ranks.size();
  std::vector<std::uint32_t> base(p + 1, 0);
  for (std::size_t r = 0; r < p; ++r) {
    const std::size_t next = base[r] + schedule.ranks[r].ops.size();
    OPTCOLL_CHECK(next < kNoPartner, "match_messages_flat: {} ops exceed 2^32 - 1", next);
    base[r + 1] = static_cast<std::uint32_t>(next);
  }
  return base;
}

// match_messages_flat() over collected endpoints of a well-formed schedule.
std::vector<std::uint32_t> flat_partners(const Schedule& schedule, const Endpoints& e) {
  const std::vector<std::uint32_t> base = flat_bases(schedule);
  std::vector<std::uint32_t> partner(base.back(), kNoPartner);
  for_each_match(e.sends, e.recvs, [&](std::size_t r, std::size_t i, const Endpoint* v) {
    OPTCOLL_CHECK(v != nullptr, "match_messages_flat on a malformed schedule");
    const Endpoint& s = e.sends.of(r)[i];
    const std::uint32_t send = base[r] + static_cast<std::uint32_t>(s.op);
    const std::uint32_t recv =
        base[static_cast<std::size_t>(s.peer)] + static_cast<std::uint32_t>(v->op);
    partner[send] = recv;
    partner[recv] = send;
  });
  return partner;
}

// Where check_matches() also records the matching (match_messages_flat's), as it goes: each
// pass sets the partners of its own endpoints only, so both write rank by rank in order.
struct FlatMatch {
  std::vector<std::uint32_t> base;  // flat_bases()
  std::vector<std::uint32_t> partner;

  void set(std::size_t r, OpId op, Rank peer, OpId peer_op) {
    partner[base[r] + static_cast<std::uint32_t>(op)] =
        base[static_cast<std::size_t>(peer)] + static_cast<std::uint32_t>(peer_op);
  }
};

// Software prefetching for the pass over every op. Each rank's ops are a heap block of
// their own, as is every op's `after` list; hardware prefetchers stop at page boundaries,
// so without this a pass over 5M ops waits on a cache (and TLB) miss per op.
constexpr std::size_t kPrefetchAhead = 16;

void prefetch_rank(const Schedule& schedule, std::size_t r) {
  if (r + kPrefetchAhead >= schedule.ranks.size()) return;
  const auto* ops = reinterpret_cast<const char*>(schedule.ranks[r + kPrefetchAhead].ops.data());
  if (ops == nullptr) return;  // a rank without ops (no pointer arithmetic on null)
  __builtin_prefetch(ops);
  __builtin_prefetch(ops + 64);
  __builtin_prefetch(ops + 128);
}

void prefetch_op(const std::vector<Op>& ops, std::size_t i) {
  if (i + kPrefetchAhead < ops.size()) __builtin_prefetch(ops[i + kPrefetchAhead].after.data());
  if (i + 3 * kPrefetchAhead < ops.size()) {
    const auto* ahead = reinterpret_cast<const char*>(&ops[i + 3 * kPrefetchAhead]);
    __builtin_prefetch(ahead);
    __builtin_prefetch(ahead + 64);
  }
}

// What the checks of one rank's ops need to know about the rank.
struct RankContext {
  Rank r = 0;
  Rank p = 0;
  Count sizes[3] = {0, 0, 0};  // its buffers' sizes, indexed by Buf
};

RankContext rank_context(const Layout& layout, const RankProgram& program, Rank r) {
  return {r,
          layout.nranks(),
          {layout.buffer_count(r, Buf::kInput), layout.buffer_count(r, Buf::kOutput),
           program.scratch_count}};
}

void check_slice(IssueList& issues, const RankContext& rank, OpId id, const Slice& slice,
                 const char* role) {
  if (slice.count < 0 || slice.offset < 0) {
    issues.add(rank.r, id, "{} slice {} has a negative offset or count", role, describe(slice));
    return;
  }
  const Count size = rank.sizes[static_cast<std::size_t>(slice.buf)];
  if (slice.offset > size || slice.count > size - slice.offset) {
    issues.add(rank.r, id, "{} slice {} exceeds the {}-element {} buffer", role, describe(slice),
               size, buf_name(slice.buf));
  }
}

// Returns whether the peer is another rank in range: matching needs every peer to be.
bool check_peer(IssueList& issues, const RankContext& rank, OpId id, Rank peer) {
  if (peer < 0 || peer >= rank.p) {
    issues.add(rank.r, id, "peer {} out of range for nranks {}", peer, rank.p);
    return false;
  }
  if (peer == rank.r) {
    issues.add(rank.r, id, "rank {} sends to or receives from itself", rank.r);
    return false;
  }
  return true;
}

void check_dependencies(IssueList& issues, const RankContext& rank, const Op& op, OpId id) {
  bool sorted_unique = true;
  for (std::size_t k = 0; k < op.after.size(); ++k) {
    const OpId dep = op.after[k];
    if (dep < 0 || dep >= id) {
      issues.add(rank.r, id, "dependency on op {} does not point backwards", dep);
    }
    if (k > 0 && !(op.after[k - 1] < dep)) sorted_unique = false;
  }
  if (!(op.not_before >= 0) || !std::isfinite(op.not_before)) {
    issues.add(rank.r, id, "release time (not_before) {} is not a finite time >= 0", op.not_before);
  }
  if (!sorted_unique) issues.add(rank.r, id, "dependency list is not sorted and unique");
}

// A message endpoint's own checks, after its slice's: its peer, its seq; then it joins its
// rank's endpoints (which must be the last in `table`). Returns check_peer()'s answer.
bool check_endpoint(IssueList& issues, const RankContext& rank, const Op& op, OpId id, Rank peer,
                    Count count, EndpointTable& table) {
  const bool peer_ok = check_peer(issues, rank, id, peer);
  if (op.seq < 0) issues.add(rank.r, id, "message has no seq (got {})", op.seq);
  table.items.push_back({peer, op.seq, id, Endpoint::compact(count)});
  return peer_ok;
}

// A slice list's checks (SendSlices, RecvSlices): each slice, the total (at most kMaxCount),
// and for a receive (`disjoint`) that no two slices overlap: the message would write the
// same elements twice. Returns the total (0 after an issue that makes it meaningless).
Count check_slice_list(IssueList& issues, const RankContext& rank, OpId id,
                       const std::vector<Slice>& slices, const char* role, bool disjoint) {
  Count total = 0;
  for (const Slice& slice : slices) {
    check_slice(issues, rank, id, slice, role);
    if (slice.count < 0 || slice.count > kMaxCount - total) {
      issues.add(rank.r, id, "{} slices hold more than {} elements in all", role, kMaxCount);
      return 0;
    }
    total += slice.count;
  }
  if (!disjoint) return total;
  std::vector<Slice> sorted;
  for (const Slice& slice : slices) {
    if (slice.count > 0) sorted.push_back(slice);
  }
  std::sort(sorted.begin(), sorted.end(), [](const Slice& a, const Slice& b) {
    return std::tie(a.buf, a.offset) < std::tie(b.buf, b.offset);
  });
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i].buf == sorted[i - 1].buf && sorted[i].offset < sorted[i - 1].end()) {
      issues.add(rank.r, id, "{} slices {} and {} overlap", role, describe(sorted[i - 1]),
                 describe(sorted[i]));
    }
  }
  return total;
}

// The checks of one op on its own, in one visit of its action: dependencies, release time,
// slices, peers and seq; a message also joins its rank's endpoints in `e`. Returns false if
// a message's peer is out of range or the rank itself.
bool check_op(IssueList& issues, const RankContext& rank, const Op& op, OpId id, Endpoints& e) {
  check_dependencies(issues, rank, op, id);
  return std::visit(
      [&](const auto& a) {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<A, Send>) {
          check_slice(issues, rank, id, a.src, "send");
          return check_endpoint(issues, rank, op, id, a.peer, a.src.count, e.sends);
        } else if constexpr (std::is_same_v<A, Recv> || std::is_same_v<A, RecvReduce>) {
          check_slice(issues, rank, id, a.dst, "recv");
          return check_endpoint(issues, rank, op, id, a.peer, a.dst.count, e.recvs);
        } else if constexpr (std::is_same_v<A, SendSlices>) {
          const Count total = check_slice_list(issues, rank, id, a.src, "send", false);
          return check_endpoint(issues, rank, op, id, a.peer, total, e.sends);
        } else if constexpr (std::is_same_v<A, RecvSlices>) {
          const Count total = check_slice_list(issues, rank, id, a.dst, "recv", true);
          return check_endpoint(issues, rank, op, id, a.peer, total, e.recvs);
        } else {
          static_assert(std::is_same_v<A, Copy> || std::is_same_v<A, Reduce>);
          check_slice(issues, rank, id, a.src, "source");
          check_slice(issues, rank, id, a.dst, "destination");
          if (a.src.count != a.dst.count) {
            issues.add(rank.r, id, "source has {} elements but destination {}", a.src.count,
                       a.dst.count);
          }
          return true;
        }
      },
      op.action);
}

// Every send has one receive of the same size with its (peer, seq), and no receive is left.
// With `match`, also records each endpoint's partner (complete only if there is no issue).
// One walk over the sends finds each one's receive and notes on that receive the first send
// that found it, so the receives are then checked in order, without a second search.
void check_matches(IssueList& issues, const Schedule& schedule, Endpoints& e, FlatMatch* match) {
  for_each_match(e.sends, e.recvs, [&](std::size_t r, std::size_t i, Endpoint* v) {
    const auto sends = e.sends.of(r);
    const Endpoint& s = sends[i];
    const auto rank = static_cast<Rank>(r);
    const auto peer = static_cast<std::size_t>(s.peer);
    if (i > 0 && sends[i - 1].peer == s.peer && sends[i - 1].seq == s.seq) {
      issues.add(rank, s.op, "second send to rank {} with seq {} (first: op {})", s.peer, s.seq,
                 sends[i - 1].op);
    } else if (v == nullptr) {
      issues.add(rank, s.op, "send of {} elems to rank {} (seq {}) has no matching receive",
                 message_count(schedule, r, s), s.peer, s.seq);
    } else if (!same_count(schedule, r, s, *v)) {
      issues.add(s.peer, v->op, "recv of {} elems from rank {} (seq {}) matched a send of {} elems",
                 message_count(schedule, peer, *v), rank, s.seq, message_count(schedule, r, s));
    } else if (match != nullptr) {
      match->set(r, s.op, s.peer, v->op);
    }
    // The first send to find a receive is the first with its seq (sends are in seq order,
    // the later ones are duplicates): only it compares counts.
    if (v != nullptr && !v->matched()) v->set_match(s.op);
  });
  for (std::size_t r = 0; r + 1 < e.recvs.start.size(); ++r) {
    const auto recvs = e.recvs.of(r);
    const auto rank = static_cast<Rank>(r);
    for (std::size_t i = 0; i < recvs.size(); ++i) {
      const Endpoint& v = recvs[i];
      if (i > 0 && recvs[i - 1].peer == v.peer && recvs[i - 1].seq == v.seq) {
        issues.add(rank, v.op, "second receive from rank {} with seq {} (first: op {})", v.peer,
                   v.seq, recvs[i - 1].op);
      } else if (!v.matched()) {
        issues.add(rank, v.op, "recv of {} elems from rank {} (seq {}) has no matching send",
                   message_count(schedule, r, v), v.peer, v.seq);
      } else if (match != nullptr) {
        match->set(r, v.op, v.peer, v.match_op());
      }
    }
  }
}

std::vector<StructureIssue> check_structure(const Schedule& schedule, std::size_t max_issues,
                                            std::vector<std::uint32_t>* partner) {
  IssueList issues(max_issues);
  std::optional<Layout> layout;
  try {
    layout.emplace(schedule.spec);
  } catch (const Error& e) {
    issues.add(kNoRank, kNoOp, "invalid collective spec: {}", e.what());
    return issues.take();
  }
  const Rank p = layout->nranks();
  if (schedule.ranks.size() != static_cast<std::size_t>(p)) {
    issues.add(kNoRank, kNoOp, "schedule has {} rank programs for nranks {}", schedule.ranks.size(),
               p);
    return issues.take();
  }
  bool peers_ok = true;
  Endpoints e = empty_endpoints(schedule);
  for (Rank r = 0; r < p && !issues.full(); ++r) {
    const auto& program = schedule.ranks[static_cast<std::size_t>(r)];
    begin_rank(e, static_cast<std::size_t>(r));
    prefetch_rank(schedule, static_cast<std::size_t>(r));
    if (program.scratch_count < 0 || program.scratch_count > kMaxCount) {
      issues.add(r, kNoOp, "scratch size {} out of range", program.scratch_count);
    }
    const RankContext rank = rank_context(*layout, program, r);
    for (std::size_t i = 0; i < program.ops.size() && !issues.full(); ++i) {
      prefetch_op(program.ops, i);
      peers_ok = check_op(issues, rank, program.ops[i], static_cast<OpId>(i), e) && peers_ok;
    }
  }
  if (!peers_ok || issues.full()) return issues.take();

  finish_endpoints(e, static_cast<std::size_t>(p));
  std::optional<FlatMatch> match;
  if (partner != nullptr) {
    match.emplace();
    match->base = flat_bases(schedule);
    reserve_on_huge_pages(match->partner, match->base.back());
    match->partner.assign(match->base.back(), kNoPartner);
  }
  check_matches(issues, schedule, e, match ? &*match : nullptr);
  if (match && issues.empty()) *partner = std::move(match->partner);
  return issues.take();
}

}  // namespace

std::vector<StructureIssue> structure_issues(const Schedule& schedule, std::size_t max_issues) {
  return check_structure(schedule, max_issues, nullptr);
}

std::vector<StructureIssue> structure_issues(const Schedule& schedule, std::size_t max_issues,
                                             std::vector<std::uint32_t>& partner) {
  return check_structure(schedule, max_issues, &partner);
}

namespace {

// Throws Error(kInvalidArgument) listing `issues`, if there are any.
void throw_if_malformed(const Schedule& schedule, const std::vector<StructureIssue>& issues) {
  if (issues.empty()) return;
  std::string text = fmt::format("schedule '{}' is malformed:", schedule.algorithm);
  for (const auto& issue : issues) {
    if (issue.rank == kNoRank) {
      text += fmt::format(" {};", issue.message);
    } else if (issue.op == kNoOp) {
      text += fmt::format(" rank {}: {};", issue.rank, issue.message);
    } else {
      text += fmt::format(" rank {} op {}: {};", issue.rank, issue.op, issue.message);
    }
  }
  text.pop_back();
  throw Error(ErrorCode::kInvalidArgument, text);
}

}  // namespace

void require_well_formed(const Schedule& schedule) {
  throw_if_malformed(schedule, structure_issues(schedule, 5));
}

std::vector<std::uint32_t> well_formed_partners(const Schedule& schedule) {
  std::vector<std::uint32_t> partner;
  throw_if_malformed(schedule, structure_issues(schedule, 5, partner));
  return partner;
}

std::vector<std::vector<OpRef>> match_messages(const Schedule& schedule) {
  const std::size_t p = schedule.ranks.size();
  std::vector<std::vector<OpRef>> match(p);
  for (std::size_t r = 0; r < p; ++r) match[r].resize(schedule.ranks[r].ops.size());
  const Endpoints e = collect_endpoints(schedule);
  for_each_match(e.sends, e.recvs, [&](std::size_t r, std::size_t i, const Endpoint* v) {
    OPTCOLL_CHECK(v != nullptr, "match_messages on a malformed schedule");
    const Endpoint& s = e.sends.of(r)[i];
    match[r][static_cast<std::size_t>(s.op)] = {s.peer, v->op};
    match[static_cast<std::size_t>(s.peer)][static_cast<std::size_t>(v->op)] = {
        static_cast<Rank>(r), s.op};
  });
  return match;
}

std::vector<std::uint32_t> match_messages_flat(const Schedule& schedule) {
  return flat_partners(schedule, collect_endpoints(schedule));
}

}  // namespace optcoll
