// SPDX-License-Identifier: Apache-2.0
// File: ScheduleBuilder: transfer emission, seq numbering and hazard-inferred dependencies.
#include "optcoll/schedule/builder.h"

#include <algorithm>

#include <fmt/format.h>

#include "optcoll/model/error.h"

namespace optcoll {

// Covers the touched part of one buffer with disjoint segments [start, end), each with the
// op that last wrote it and the ops that read it since. Untouched gaps are absent.
struct ScheduleBuilder::HazardMap {
  struct Segment {
    Count end = 0;
    OpId writer = kNoOp;
    std::vector<OpId> readers;
  };
  std::map<Count, Segment> segments;  // keyed by start

  // Appends to `deps` the ops an access of [a, b) must follow.
  void collect(Count a, Count b, bool write, std::vector<OpId>& deps) const {
    auto it = segments.upper_bound(a);
    if (it != segments.begin()) --it;
    for (; it != segments.end() && it->first < b; ++it) {
      if (it->second.end <= a) continue;
      if (it->second.writer != kNoOp) deps.push_back(it->second.writer);
      if (write) deps.insert(deps.end(), it->second.readers.begin(), it->second.readers.end());
    }
  }

  // Makes `at` a segment boundary (if it falls inside a segment).
  void split(Count at) {
    auto it = segments.upper_bound(at);
    if (it == segments.begin()) return;
    --it;
    if (it->first == at || it->second.end <= at) return;
    Segment tail = it->second;
    it->second.end = at;
    segments.emplace_hint(std::next(it), at, std::move(tail));
  }

  void record(Count a, Count b, OpId op, bool write) {
    split(a);
    split(b);
    if (write) {
      auto first = segments.lower_bound(a);
      auto last = segments.lower_bound(b);
      segments.erase(first, last);
      segments.emplace(a, Segment{b, op, {}});
      return;
    }
    // Read: add `op` to every covered segment, creating segments for untouched gaps.
    Count cursor = a;
    auto it = segments.lower_bound(a);
    while (cursor < b) {
      if (it == segments.end() || it->first > cursor) {
        const Count gap_end = it == segments.end() ? b : std::min(b, it->first);
        it = segments.emplace_hint(it, cursor, Segment{gap_end, kNoOp, {op}});
        cursor = gap_end;
        ++it;
        continue;
      }
      it->second.readers.push_back(op);
      cursor = it->second.end;
      ++it;
    }
  }
};

ScheduleBuilder::ScheduleBuilder(CollectiveSpec spec, std::string algorithm)
    : layout_(std::move(spec)) {
  schedule_.spec = layout_.spec();
  schedule_.algorithm = std::move(algorithm);
  schedule_.ranks.resize(static_cast<std::size_t>(layout_.nranks()));
  hazards_.resize(static_cast<std::size_t>(layout_.nranks()) * 3);
}

ScheduleBuilder::~ScheduleBuilder() = default;
ScheduleBuilder::ScheduleBuilder(ScheduleBuilder&&) noexcept = default;
ScheduleBuilder& ScheduleBuilder::operator=(ScheduleBuilder&&) noexcept = default;

ScheduleBuilder::HazardMap& ScheduleBuilder::hazards(Rank at, Buf buf) {
  auto& slot = hazards_[static_cast<std::size_t>(at) * 3 + static_cast<std::size_t>(buf)];
  if (!slot) slot = std::make_unique<HazardMap>();
  return *slot;
}

void ScheduleBuilder::check_slice(Rank at, const Slice& slice, const char* what) const {
  OPTCOLL_CHECK(at >= 0 && at < nranks(), "{}: rank {} out of range for nranks {}",
                schedule_.algorithm, at, nranks());
  const Count size = slice.buf == Buf::kScratch
                         ? schedule_.ranks[static_cast<std::size_t>(at)].scratch_count
                         : layout_.buffer_count(at, slice.buf);
  OPTCOLL_CHECK(slice.offset >= 0 && slice.count >= 0 && slice.offset <= size &&
                    slice.count <= size - slice.offset,
                "{}: rank {} {} slice {} exceeds its buffer of {} elements",
                schedule_.algorithm, at, what, describe(slice), size);
}

std::int32_t ScheduleBuilder::next_seq(Rank from, Rank to) {
  const auto key = static_cast<std::uint64_t>(from) * static_cast<std::uint64_t>(nranks()) +
                   static_cast<std::uint64_t>(to);
  return seq_[key]++;
}

OpId ScheduleBuilder::emit(Rank at, Action action, std::int32_t seq,
                           std::initializer_list<Access> accesses) {
  auto& program = schedule_.ranks[static_cast<std::size_t>(at)];
  const auto id = static_cast<OpId>(program.ops.size());
  std::vector<OpId>& deps = scratch_deps_;
  deps.clear();
  for (const Access& access : accesses) {
    hazards(at, access.slice.buf).collect(access.slice.offset, access.slice.end(), access.write, deps);
  }
  for (const Access& access : accesses) {
    hazards(at, access.slice.buf).record(access.slice.offset, access.slice.end(), id, access.write);
  }
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  program.ops.push_back(Op{std::move(action), deps, seq});
  return id;
}

ScheduleBuilder::Transfer ScheduleBuilder::transfer(Rank from, Rank to, Slice src, Slice dst) {
  check_slice(from, src, "send");
  check_slice(to, dst, "recv");
  OPTCOLL_CHECK(from != to, "{}: transfer from rank {} to itself", schedule_.algorithm, from);
  OPTCOLL_CHECK(src.count == dst.count, "{}: transfer {} -> {} sends {} elems into a {}-elem slice",
                schedule_.algorithm, from, to, src.count, dst.count);
  if (src.count == 0) return {};
  const std::int32_t seq = next_seq(from, to);
  Transfer t;
  t.send = emit(from, Send{to, src}, seq, {{src, false}});
  t.recv = emit(to, Recv{from, dst}, seq, {{dst, true}});
  return t;
}

ScheduleBuilder::Transfer ScheduleBuilder::transfer_reduce(Rank from, Rank to, Slice src,
                                                           Slice dst, Side incoming) {
  check_slice(from, src, "send");
  check_slice(to, dst, "recv-reduce");
  OPTCOLL_CHECK(from != to, "{}: transfer from rank {} to itself", schedule_.algorithm, from);
  OPTCOLL_CHECK(src.count == dst.count,
                "{}: transfer_reduce {} -> {} sends {} elems into a {}-elem slice",
                schedule_.algorithm, from, to, src.count, dst.count);
  if (src.count == 0) return {};
  const std::int32_t seq = next_seq(from, to);
  Transfer t;
  t.send = emit(from, Send{to, src}, seq, {{src, false}});
  t.recv = emit(to, RecvReduce{from, dst, incoming}, seq, {{dst, true}});
  return t;
}

namespace {
bool overlaps(const Slice& a, const Slice& b) {
  return a.buf == b.buf && a.offset < b.end() && b.offset < a.end();
}
}  // namespace

OpId ScheduleBuilder::copy(Rank at, Slice src, Slice dst) {
  check_slice(at, src, "copy source");
  check_slice(at, dst, "copy destination");
  OPTCOLL_CHECK(src.count == dst.count, "{}: rank {} copies {} elems into a {}-elem slice",
                schedule_.algorithm, at, src.count, dst.count);
  OPTCOLL_CHECK(!overlaps(src, dst), "{}: rank {} copy {} -> {} overlaps itself",
                schedule_.algorithm, at, describe(src), describe(dst));
  if (src.count == 0) return kNoOp;
  return emit(at, Copy{src, dst}, -1, {{src, false}, {dst, true}});
}

OpId ScheduleBuilder::reduce(Rank at, Slice src, Slice dst, Side src_side) {
  check_slice(at, src, "reduce source");
  check_slice(at, dst, "reduce destination");
  OPTCOLL_CHECK(src.count == dst.count, "{}: rank {} reduces {} elems into a {}-elem slice",
                schedule_.algorithm, at, src.count, dst.count);
  OPTCOLL_CHECK(!overlaps(src, dst), "{}: rank {} reduce {} -> {} overlaps itself",
                schedule_.algorithm, at, describe(src), describe(dst));
  if (src.count == 0) return kNoOp;
  return emit(at, Reduce{src, dst, src_side}, -1, {{src, false}, {dst, true}});
}

Slice ScheduleBuilder::scratch(Rank at, Count count) {
  OPTCOLL_CHECK(at >= 0 && at < nranks(), "{}: rank {} out of range", schedule_.algorithm, at);
  OPTCOLL_CHECK(count >= 0, "{}: negative scratch request {}", schedule_.algorithm, count);
  auto& program = schedule_.ranks[static_cast<std::size_t>(at)];
  OPTCOLL_CHECK(count <= kMaxCount - program.scratch_count, "{}: rank {} scratch exceeds 2^48",
                schedule_.algorithm, at);
  const Slice slice{Buf::kScratch, program.scratch_count, count};
  program.scratch_count += count;
  return slice;
}

void ScheduleBuilder::add_dependency(Rank at, OpId before, OpId after) {
  if (before == kNoOp || after == kNoOp) return;
  OPTCOLL_CHECK(at >= 0 && at < nranks(), "{}: rank {} out of range", schedule_.algorithm, at);
  auto& ops = schedule_.ranks[static_cast<std::size_t>(at)].ops;
  OPTCOLL_CHECK(before >= 0 && before < after && static_cast<std::size_t>(after) < ops.size(),
                "{}: rank {} dependency {} -> {} must point backwards within {} ops",
                schedule_.algorithm, at, before, after, ops.size());
  auto& deps = ops[static_cast<std::size_t>(after)].after;
  const auto pos = std::lower_bound(deps.begin(), deps.end(), before);
  if (pos == deps.end() || *pos != before) deps.insert(pos, before);
}

void ScheduleBuilder::set_tree(TreeShape tree) {
  OPTCOLL_CHECK(tree.children.size() == static_cast<std::size_t>(nranks()),
                "{}: tree has {} nodes for {} ranks", schedule_.algorithm, tree.children.size(),
                nranks());
  schedule_.tree = std::move(tree);
}

OpId ScheduleBuilder::op_count(Rank r) const {
  return static_cast<OpId>(schedule_.ranks.at(static_cast<std::size_t>(r)).ops.size());
}

Schedule ScheduleBuilder::finish() && {
  hazards_.clear();
  seq_.clear();
  return std::move(schedule_);
}

}  // namespace optcoll
