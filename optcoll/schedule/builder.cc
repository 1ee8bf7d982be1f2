// SPDX-License-Identifier: Apache-2.0
// File: ScheduleBuilder: transfer emission, seq numbering and hazard-inferred dependencies.
#include "optcoll/schedule/builder.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <map>
#include <memory_resource>
#include <new>
#include <type_traits>

#include <fmt/format.h>

#include "optcoll/model/error.h"

namespace optcoll {

// Covers the touched part of one buffer with disjoint segments [start, end), ordered by
// start, each with the op that last wrote it and the ops that read it since. Untouched gaps
// are absent. An ordered map with cursors at the segments last touched: an access usually
// matches an existing segment exactly, a few segments from one touched lately, and is found
// from a cursor in O(1); anything else takes O(log segments), and so does inserting anywhere.
// The map's nodes come from a pool the builder owns (released at once by finish()), not from
// malloc one by one, and nothing in a map needs destroying (readers beyond two live in the
// builder's spill lists, by index): the pool is released without walking the maps, a cache
// miss per node (18% of planning alltoall/linear at p = 2,048 was that walk). (A sorted vector made
// every insertion O(segments): a ring algorithm's rank r touches blocks r, r - 1, ..., 0, then p -
// 1, p - 2, ..., each inserted before the ones inserted since the wrap, which is O(p^3) moves per
// schedule; at p = 1024 that was 43% of planning an allgather. docs/performance.md, "Selection and
// planning at scale".) Readers beyond a segment's first two, by spill index: lists reused once
// their segment is gone.
class ReaderSpills {
 public:
  std::int32_t take() {
    if (!free_.empty()) {
      const std::int32_t i = free_.back();
      free_.pop_back();
      return i;
    }
    lists_.emplace_back();
    return static_cast<std::int32_t>(lists_.size() - 1);
  }
  void give_back(std::int32_t i) {
    lists_[static_cast<std::size_t>(i)].clear();
    free_.push_back(i);
  }
  std::vector<OpId>& operator[](std::int32_t i) { return lists_[static_cast<std::size_t>(i)]; }

 private:
  std::vector<std::vector<OpId>> lists_;
  std::vector<std::int32_t> free_;
};

struct ScheduleBuilder::HazardMap {
  // Readers since the last write: usually one or two, kept inline; more go to a spill list.
  // Trivially destructible: a spill list is given back explicitly (release()).
  class Readers {
   public:
    Readers() = default;
    Readers(OpId first, ReaderSpills& lists) { add(first, lists); }
    void add(OpId op, ReaderSpills& lists) {
      if (inline_count_ < kInline) {
        inline_[inline_count_++] = op;
        return;
      }
      if (spill_ < 0) spill_ = lists.take();
      lists[spill_].push_back(op);
    }
    void clear(ReaderSpills& lists) {
      inline_count_ = 0;
      if (spill_ >= 0) lists[spill_].clear();
    }
    void append_to(std::vector<OpId>& out, ReaderSpills& lists) const {
      out.insert(out.end(), inline_.begin(), inline_.begin() + inline_count_);
      if (spill_ >= 0) out.insert(out.end(), lists[spill_].begin(), lists[spill_].end());
    }
    // The same readers, with a spill list of their own.
    Readers copy(ReaderSpills& lists) const {
      Readers c;
      c.inline_ = inline_;
      c.inline_count_ = inline_count_;
      if (spill_ >= 0 && !lists[spill_].empty()) {
        c.spill_ = lists.take();
        lists[c.spill_] = lists[spill_];
      }
      return c;
    }
    // Its segment is going: its spill list back to the builder.
    void release(ReaderSpills& lists) {
      if (spill_ >= 0) lists.give_back(spill_);
      spill_ = -1;
    }

   private:
    static constexpr int kInline = 2;
    std::array<OpId, kInline> inline_{};
    int inline_count_ = 0;
    std::int32_t spill_ = -1;
  };
  struct Segment {
    Count end = 0;
    OpId writer = kNoOp;
    Readers readers;
  };
  static_assert(std::is_trivially_destructible_v<Segment>);
  using Segments = std::pmr::map<Count, Segment>;  // keyed by start
  using Iter = Segments::iterator;

  HazardMap(std::pmr::memory_resource* memory, ReaderSpills& reader_spills)
      : segments(memory), spills(&reader_spills) {
    forget_cursors();
  }
  HazardMap(const HazardMap&) = delete;
  HazardMap& operator=(const HazardMap&) = delete;

  Segments segments;
  ReaderSpills* spills;
  Count extent = 0;  // where the last segment ends (0: none); coverage never shrinks
  // The segments last touched, most recent first (end(): none). An algorithm's rank often
  // walks several blocks of one buffer in step (a pipelined reduction sends from one block
  // while it combines into another, many segments apart), so one cursor per stream of
  // accesses finds each in O(1) where a single cursor would jump between them and fall back
  // to the tree: at large p the maps are cold in the cache, and each level of the tree is a
  // miss (reduce/circulant at p = 4,096: about half of the builder's time).
  static constexpr int kCursors = 4;
  std::array<Iter, kCursors> cursors{};

  // Segments looked at from a cursor before a search of the whole map: ring algorithms
  // alternate between two blocks a step or two apart (send one, receive the next).
  static constexpr int kNearby = 4;

  void forget_cursors() { cursors.fill(segments.end()); }

  // Makes `it` the most recent cursor.
  void touch(Iter it) {
    int at = kCursors - 1;
    for (int i = 0; i < kCursors - 1; ++i) {
      if (cursors[static_cast<std::size_t>(i)] == it) {
        at = i;
        break;
      }
    }
    for (int i = at; i > 0; --i) {
      cursors[static_cast<std::size_t>(i)] = cursors[static_cast<std::size_t>(i - 1)];
    }
    cursors[0] = it;
  }

  // Forgets the cursors at the segments that start in [a, b) (about to be erased).
  void forget_cursors_in(Count a, Count b) {
    for (Iter& c : cursors) {
      if (c != segments.end() && c->first >= a && c->first < b) c = segments.end();
    }
  }

  // The first segment that ends after `a`, found within `steps` segments of `it`, or end().
  Iter near(Iter it, Count a, int steps) {
    if (it->first <= a) {
      // Forward; the last segment ends after `a`, so this stays before end().
      for (int step = 0; step < steps; ++step, ++it) {
        if (a < it->second.end) return it;
      }
      return segments.end();
    }
    // Backward; `it` starts, so ends, after `a` throughout.
    for (int step = 0; step < steps; ++step) {
      if (it == segments.begin()) return it;
      const Iter before = std::prev(it);
      if (before->second.end <= a) return it;
      it = before;
      if (it->first <= a) return it;
    }
    return segments.end();
  }

  // The first segment that ends after `a`, or end().
  Iter first_after(Count a) {
    if (extent <= a) return segments.end();
    // The most recent cursor gets kNearby steps, the others one each (a step is a likely
    // cache miss too).
    for (int i = 0; i < kCursors; ++i) {
      const Iter c = cursors[static_cast<std::size_t>(i)];
      if (c == segments.end()) continue;
      if (const Iter found = near(c, a, i == 0 ? kNearby : 1); found != segments.end()) {
        return found;
      }
    }
    const Iter after = segments.upper_bound(a);  // the first that starts after a
    if (after != segments.begin()) {
      const Iter before = std::prev(after);
      if (a < before->second.end) return before;
    }
    return after;
  }

  // Appends to `deps` the ops an access of [a, b) must follow.
  void collect(Count a, Count b, bool write, std::vector<OpId>& deps) {
    for (Iter it = first_after(a); it != segments.end() && it->first < b; ++it) {
      const Segment& s = it->second;
      if (s.writer != kNoOp) deps.push_back(s.writer);
      if (write) s.readers.append_to(deps, *spills);
    }
  }

  // Makes `at` a segment boundary if it falls strictly inside a segment.
  void split(Count at) {
    const Iter it = first_after(at);
    if (it == segments.end() || it->first >= at) return;
    Segment tail{it->second.end, it->second.writer, it->second.readers.copy(*spills)};
    it->second.end = at;
    touch(segments.emplace_hint(std::next(it), at, tail));
  }

  void record(Count a, Count b, OpId op, bool write) {
    cover(a, b, op, write);
    extent = std::max(extent, b);
  }

  // record() but for the extent, which first_after() needs to describe the segments as they
  // are until they change (its forward walks stop at the last one that ends after `a`).
  void cover(Count a, Count b, OpId op, bool write) {
    Iter it = first_after(a);
    if (it != segments.end() && it->first == a && it->second.end == b) {
      // The common case: the access covers exactly one existing segment.
      Segment& s = it->second;
      if (write) {
        s.writer = op;
        s.readers.clear(*spills);
      } else {
        s.readers.add(op, *spills);
      }
      touch(it);
      return;
    }
    split(a);
    split(b);
    it = first_after(a);
    if (write) {
      // One segment [a, b) written by `op` replaces the covered ones.
      Iter past = it;
      for (; past != segments.end() && past->first < b; ++past)
        past->second.readers.release(*spills);
      forget_cursors_in(a, b);
      past = segments.erase(it, past);
      touch(segments.emplace_hint(past, a, Segment{b, op, {}}));
      return;
    }
    // Read: add `op` to every covered segment, creating segments for untouched gaps.
    Count at = a;
    while (at < b) {
      if (it == segments.end() || it->first > at) {
        const Count gap_end = it == segments.end() ? b : std::min(b, it->first);
        touch(segments.emplace_hint(it, at, Segment{gap_end, kNoOp, Readers(op, *spills)}));
        at = gap_end;
      } else {
        it->second.readers.add(op, *spills);
        at = it->second.end;
        touch(it);
        ++it;
      }
    }
  }
};

// The maps live in their pool and are never destroyed: neither they nor their nodes hold
// anything outside it (Segment is trivially destructible; spill lists are the builder's), so
// releasing the pool is their end.
struct ScheduleBuilder::HazardMaps {
  explicit HazardMaps(std::size_t count)
      : maps(static_cast<HazardMap*>(
            memory.allocate(count * sizeof(HazardMap), alignof(HazardMap)))) {
    for (std::size_t i = 0; i < count; ++i) new (maps + i) HazardMap(&memory, spills);
  }
  HazardMaps(const HazardMaps&) = delete;
  HazardMaps& operator=(const HazardMaps&) = delete;

  std::pmr::unsynchronized_pool_resource memory;
  ReaderSpills spills;
  HazardMap* maps;
};

namespace {
thread_local Rank one_rank_build = kNoRank;
}  // namespace

OneRankBuild::OneRankBuild(Rank rank) : previous_(one_rank_build) { one_rank_build = rank; }
OneRankBuild::~OneRankBuild() { one_rank_build = previous_; }
Rank OneRankBuild::current() { return one_rank_build; }

ScheduleBuilder::ScheduleBuilder(CollectiveSpec spec, std::string algorithm)
    : layout_(std::move(spec)), only_(one_rank_build) {
  // schedule_.spec is the layout's, moved in by finish() (one copy of alltoallv's p^2 counts).
  schedule_.algorithm = std::move(algorithm);
  schedule_.ranks.resize(static_cast<std::size_t>(layout_.nranks()));
  hazards_ = std::make_unique<HazardMaps>(static_cast<std::size_t>(layout_.nranks()) * 3);
  seq_.resize(static_cast<std::size_t>(layout_.nranks()));
}

ScheduleBuilder::~ScheduleBuilder() = default;
ScheduleBuilder::ScheduleBuilder(ScheduleBuilder&&) noexcept = default;
ScheduleBuilder& ScheduleBuilder::operator=(ScheduleBuilder&&) noexcept = default;

ScheduleBuilder::HazardMap& ScheduleBuilder::hazards(Rank at, Buf buf) {
  return hazards_->maps[static_cast<std::size_t>(at) * 3 + static_cast<std::size_t>(buf)];
}

void ScheduleBuilder::check_slice(Rank at, const Slice& slice, const char* what) const {
  OPTCOLL_CHECK(at >= 0 && at < nranks(), "{}: rank {} out of range for nranks {}",
                schedule_.algorithm, at, nranks());
  const Count size = slice.buf == Buf::kScratch
                         ? schedule_.ranks[static_cast<std::size_t>(at)].scratch_count
                         : layout_.buffer_count(at, slice.buf);
  OPTCOLL_CHECK(slice.offset >= 0 && slice.count >= 0 && slice.offset <= size &&
                    slice.count <= size - slice.offset,
                "{}: rank {} {} slice {} exceeds its buffer of {} elements", schedule_.algorithm,
                at, what, describe(slice), size);
}

std::int32_t ScheduleBuilder::next_seq(Rank from, Rank to) {
  // Per sender, (receiver, messages so far) sorted by receiver: a rank talks to few peers,
  // or (linear algorithms) to many in increasing order, so lookups are short and inserts
  // are appends.
  auto& peers = seq_[static_cast<std::size_t>(from)];
  auto it =
      std::lower_bound(peers.begin(), peers.end(), to,
                       [](const std::pair<Rank, std::int32_t>& e, Rank r) { return e.first < r; });
  if (it == peers.end() || it->first != to) it = peers.insert(it, {to, 0});
  return it->second++;
}

OpId ScheduleBuilder::emit(Rank at, Action action, std::int32_t seq,
                           std::initializer_list<Access> accesses) {
  return emit(at, std::move(action), seq,
              std::span<const Access>(accesses.begin(), accesses.size()));
}

OpId ScheduleBuilder::emit(Rank at, Action action, std::int32_t seq,
                           std::span<const Access> accesses) {
  if (!emits(at)) return kNoOp;
  auto& program = schedule_.ranks[static_cast<std::size_t>(at)];
  const auto id = static_cast<OpId>(program.ops.size());
  std::vector<OpId>& deps = scratch_deps_;
  deps.clear();
  // The input is read-only (the executors refuse a program that writes it), so its reads
  // order nothing and are not tracked: at large p an algorithm that reads its input block by
  // block in a scattered order (recursive halving's bit reversal) spent a tree search in the
  // input's map per block.
  for (const Access& access : accesses) {
    OPTCOLL_CHECK(!(access.write && access.slice.buf == Buf::kInput),
                  "{}: rank {} writes its input buffer, which is read-only ({})",
                  schedule_.algorithm, at, describe(access.slice));
    if (access.slice.buf == Buf::kInput) continue;
    hazards(at, access.slice.buf)
        .collect(access.slice.offset, access.slice.end(), access.write, deps);
  }
  for (const Access& access : accesses) {
    if (access.slice.buf == Buf::kInput) continue;
    hazards(at, access.slice.buf).record(access.slice.offset, access.slice.end(), id, access.write);
  }
  if (deps.size() > 1) {
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  }
  if (program.ops.empty()) program.ops.reserve(8);
  program.ops.push_back(Op{std::move(action), OpDeps(deps.begin(), deps.end()), seq});
  return id;
}

ScheduleBuilder::Transfer ScheduleBuilder::transfer(Rank from, Rank to, Slice src, Slice dst) {
  check_slice(from, src, "send");
  check_slice(to, dst, "recv");
  OPTCOLL_CHECK(from != to, "{}: transfer from rank {} to itself", schedule_.algorithm, from);
  OPTCOLL_CHECK(src.count == dst.count, "{}: transfer {} -> {} sends {} elems into a {}-elem slice",
                schedule_.algorithm, from, to, src.count, dst.count);
  if (src.count == 0 || (!emits(from) && !emits(to))) return {};
  const std::int32_t seq = next_seq(from, to);
  Transfer t;
  t.send = emit(from, Send{to, src}, seq, {{src, false}});
  t.recv = emit(to, Recv{from, dst}, seq, {{dst, true}});
  return t;
}

ScheduleBuilder::Transfer ScheduleBuilder::transfer_reduce(Rank from, Rank to, Slice src, Slice dst,
                                                           Side incoming) {
  check_slice(from, src, "send");
  check_slice(to, dst, "recv-reduce");
  OPTCOLL_CHECK(from != to, "{}: transfer from rank {} to itself", schedule_.algorithm, from);
  OPTCOLL_CHECK(src.count == dst.count,
                "{}: transfer_reduce {} -> {} sends {} elems into a {}-elem slice",
                schedule_.algorithm, from, to, src.count, dst.count);
  if (src.count == 0 || (!emits(from) && !emits(to))) return {};
  const std::int32_t seq = next_seq(from, to);
  Transfer t;
  t.send = emit(from, Send{to, src}, seq, {{src, false}});
  t.recv = emit(to, RecvReduce{from, dst, incoming}, seq, {{dst, true}});
  return t;
}

std::vector<Slice> ScheduleBuilder::nonempty_slices(Rank at, const std::vector<Slice>& slices,
                                                    const char* what) const {
  std::vector<Slice> kept;
  kept.reserve(slices.size());
  for (const Slice& slice : slices) {
    check_slice(at, slice, what);
    if (slice.count > 0) kept.push_back(slice);
  }
  return kept;
}

ScheduleBuilder::Transfer ScheduleBuilder::transfer_from_slices(Rank from, Rank to,
                                                                const std::vector<Slice>& src,
                                                                Slice dst) {
  std::vector<Slice> parts = nonempty_slices(from, src, "send");
  check_slice(to, dst, "recv");
  OPTCOLL_CHECK(from != to, "{}: transfer from rank {} to itself", schedule_.algorithm, from);
  OPTCOLL_CHECK(total_count(parts) == dst.count,
                "{}: transfer {} -> {} sends {} elems from {} slices into a {}-elem slice",
                schedule_.algorithm, from, to, total_count(parts), parts.size(), dst.count);
  if (parts.size() <= 1) return parts.empty() ? Transfer{} : transfer(from, to, parts[0], dst);
  if (!emits(from) && !emits(to)) return {};
  const std::int32_t seq = next_seq(from, to);
  std::vector<Access> reads;
  reads.reserve(parts.size());
  for (const Slice& part : parts) reads.push_back({part, false});
  Transfer t;
  t.send = emit(from, SendSlices{to, std::move(parts)}, seq, reads);
  t.recv = emit(to, Recv{from, dst}, seq, {{dst, true}});
  return t;
}

ScheduleBuilder::Transfer ScheduleBuilder::transfer_into_slices(Rank from, Rank to, Slice src,
                                                                const std::vector<Slice>& dst) {
  check_slice(from, src, "send");
  std::vector<Slice> parts = nonempty_slices(to, dst, "recv");
  OPTCOLL_CHECK(from != to, "{}: transfer from rank {} to itself", schedule_.algorithm, from);
  OPTCOLL_CHECK(src.count == total_count(parts),
                "{}: transfer {} -> {} sends {} elems into {} slices of {} elems in all",
                schedule_.algorithm, from, to, src.count, parts.size(), total_count(parts));
  for (std::size_t i = 0; i < parts.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      OPTCOLL_CHECK(!parts[i].overlaps(parts[j]),
                    "{}: rank {} receives from rank {} into overlapping slices {} and {}",
                    schedule_.algorithm, to, from, describe(parts[j]), describe(parts[i]));
    }
  }
  if (parts.size() <= 1) return parts.empty() ? Transfer{} : transfer(from, to, src, parts[0]);
  if (!emits(from) && !emits(to)) return {};
  const std::int32_t seq = next_seq(from, to);
  std::vector<Access> writes;
  writes.reserve(parts.size());
  for (const Slice& part : parts) writes.push_back({part, true});
  Transfer t;
  t.send = emit(from, Send{to, src}, seq, {{src, false}});
  t.recv = emit(to, RecvSlices{from, std::move(parts)}, seq, writes);
  return t;
}

OpId ScheduleBuilder::copy(Rank at, Slice src, Slice dst) {
  if (!emits(at)) return kNoOp;
  check_slice(at, src, "copy source");
  check_slice(at, dst, "copy destination");
  OPTCOLL_CHECK(src.count == dst.count, "{}: rank {} copies {} elems into a {}-elem slice",
                schedule_.algorithm, at, src.count, dst.count);
  OPTCOLL_CHECK(!src.overlaps(dst), "{}: rank {} copy {} -> {} overlaps itself",
                schedule_.algorithm, at, describe(src), describe(dst));
  if (src.count == 0) return kNoOp;
  return emit(at, Copy{src, dst}, -1, {{src, false}, {dst, true}});
}

OpId ScheduleBuilder::reduce(Rank at, Slice src, Slice dst, Side src_side) {
  if (!emits(at)) return kNoOp;
  check_slice(at, src, "reduce source");
  check_slice(at, dst, "reduce destination");
  OPTCOLL_CHECK(src.count == dst.count, "{}: rank {} reduces {} elems into a {}-elem slice",
                schedule_.algorithm, at, src.count, dst.count);
  OPTCOLL_CHECK(!src.overlaps(dst), "{}: rank {} reduce {} -> {} overlaps itself",
                schedule_.algorithm, at, describe(src), describe(dst));
  if (src.count == 0) return kNoOp;
  return emit(at, Reduce{src, dst, src_side}, -1, {{src, false}, {dst, true}});
}

Slice ScheduleBuilder::scratch(Rank at, Count count) {
  OPTCOLL_CHECK(at >= 0 && at < nranks(), "{}: rank {} out of range", schedule_.algorithm, at);
  OPTCOLL_CHECK(count >= 0, "{}: negative scratch request {}", schedule_.algorithm, count);
  auto& program = schedule_.ranks[static_cast<std::size_t>(at)];
  if (count > kMaxCount - program.scratch_count) {
    throw_invalid("{} needs more than 2^48 elements of scratch on rank {} for this call",
                  schedule_.algorithm, at);
  }
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

void ScheduleBuilder::set_not_before(Rank at, OpId op, Time time) {
  if (op == kNoOp) return;
  OPTCOLL_CHECK(at >= 0 && at < nranks(), "{}: rank {} out of range", schedule_.algorithm, at);
  auto& ops = schedule_.ranks[static_cast<std::size_t>(at)].ops;
  OPTCOLL_CHECK(op >= 0 && static_cast<std::size_t>(op) < ops.size(),
                "{}: rank {} has no op {} to time", schedule_.algorithm, at, op);
  OPTCOLL_CHECK(std::isfinite(time) && time >= 0, "{}: rank {} op {} release time {}",
                schedule_.algorithm, at, op, time);
  ops[static_cast<std::size_t>(op)].not_before = time;
}

void ScheduleBuilder::set_tree(TreeShape tree) {
  OPTCOLL_CHECK(tree.children.size() == static_cast<std::size_t>(nranks()),
                "{}: tree has {} nodes for {} ranks", schedule_.algorithm, tree.children.size(),
                nranks());
  schedule_.tree = std::move(tree);
}

void ScheduleBuilder::set_params(std::string params) { schedule_.params = std::move(params); }

OpId ScheduleBuilder::op_count(Rank r) const {
  return static_cast<OpId>(schedule_.ranks.at(static_cast<std::size_t>(r)).ops.size());
}

Schedule ScheduleBuilder::finish() && {
  hazards_.reset();
  seq_.clear();
  schedule_.spec = std::move(layout_).release_spec();
  return std::move(schedule_);
}

}  // namespace optcoll
