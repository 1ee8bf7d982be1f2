// SPDX-License-Identifier: Apache-2.0
// File: Stitcher (stitch.h).
#include "optcoll/schedule/stitch.h"

#include <algorithm>
#include <tuple>

#include "optcoll/model/error.h"
#include "optcoll/schedule/builder.h"

namespace optcoll {
namespace {

// The part's slice renamed into the member's buffers: in and out through `mapped_in`,
// `mapped_out`, scratch after the member's scratch as it was (`scratch_base`).
Slice rename(const Slice& slice, const Slice& mapped_in, const Slice& mapped_out,
             Count scratch_base) {
  if (slice.buf == Buf::kScratch) return {Buf::kScratch, scratch_base + slice.offset, slice.count};
  const Slice& base = slice.buf == Buf::kInput ? mapped_in : mapped_out;
  OPTCOLL_CHECK(slice.end() <= base.count, "part slice {} outside its mapped {}", describe(slice),
                describe(base));
  return {base.buf, base.offset + slice.offset, slice.count};
}

// A part's action on its members: part ranks become members, slices are renamed.
Action rename_action(const Action& action, std::span<const Rank> members, const Slice& in,
                     const Slice& out, Count scratch_base) {
  const auto map = [&](const Slice& s) { return rename(s, in, out, scratch_base); };
  const auto member = [&](Rank peer) { return members[static_cast<std::size_t>(peer)]; };
  return std::visit(
      [&](const auto& a) -> Action {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, Send>) {
          return Send{member(a.peer), map(a.src)};
        } else if constexpr (std::is_same_v<T, Recv>) {
          return Recv{member(a.peer), map(a.dst)};
        } else if constexpr (std::is_same_v<T, RecvReduce>) {
          return RecvReduce{member(a.peer), map(a.dst), a.incoming};
        } else if constexpr (std::is_same_v<T, SendSlices>) {
          SendSlices renamed{member(a.peer), {}};
          renamed.src.reserve(a.src.size());
          for (const Slice& slice : a.src) renamed.src.push_back(map(slice));
          return renamed;
        } else if constexpr (std::is_same_v<T, RecvSlices>) {
          RecvSlices renamed{member(a.peer), {}};
          renamed.dst.reserve(a.dst.size());
          for (const Slice& slice : a.dst) renamed.dst.push_back(map(slice));
          return renamed;
        } else if constexpr (std::is_same_v<T, Copy>) {
          return Copy{map(a.src), map(a.dst)};
        } else {
          static_assert(std::is_same_v<T, Reduce>);
          return Reduce{map(a.src), map(a.dst), a.src_side};
        }
      },
      action);
}

}  // namespace

Stitcher::Stitcher(CollectiveSpec spec, std::string algorithm)
    : layout_(std::move(spec)),
      only_(OneRankBuild::current()),
      sinks_(static_cast<std::size_t>(layout_.nranks())),
      messages_(static_cast<std::size_t>(layout_.nranks())) {
  // schedule_.spec is the layout's, moved in by finish() (one copy of the counts).
  schedule_.algorithm = std::move(algorithm);
  schedule_.ranks.resize(static_cast<std::size_t>(layout_.nranks()));
}

Slice Stitcher::scratch(Rank r, Count count) {
  RankProgram& program = schedule_.ranks[static_cast<std::size_t>(r)];
  const Slice slice{Buf::kScratch, program.scratch_count, count};
  program.scratch_count += count;
  return slice;
}

std::int32_t& Stitcher::messages(Rank from, Rank to) {
  auto& sent = messages_[static_cast<std::size_t>(from)];
  for (auto& [peer, count] : sent) {
    if (peer == to) return count;
  }
  return sent.emplace_back(to, 0).second;
}

void Stitcher::append(const Schedule& part, std::span<const Rank> members, const Place& place) {
  const auto q = static_cast<Rank>(part.ranks.size());
  OPTCOLL_CHECK(static_cast<Rank>(members.size()) == q, "part of {} ranks on {} members", q,
                members.size());
  const Layout part_layout = Layout::borrowing(part.spec);
  // Messages of this part per (sender, receiver), added to messages_ once the part is in.
  std::vector<std::tuple<Rank, Rank, std::int32_t>> part_messages;
  // Per member, the messages it has already exchanged with each part peer (messages() scans a
  // rank's peers: once per peer and part, not once per message): -1 until looked up.
  std::vector<std::int32_t> sent_before(static_cast<std::size_t>(q));
  std::vector<std::int32_t> received_before(static_cast<std::size_t>(q));
  const auto earlier = [&](std::vector<std::int32_t>& cache, Rank peer, Rank from, Rank to) {
    std::int32_t& known = cache[static_cast<std::size_t>(peer)];
    if (known < 0) known = messages(from, to);
    return known;
  };
  for (Rank i = 0; i < q; ++i) {
    const Rank r = members[static_cast<std::size_t>(i)];
    if (!keeps(r)) continue;
    RankProgram& program = schedule_.ranks[static_cast<std::size_t>(r)];
    const RankProgram& source = part.ranks[static_cast<std::size_t>(i)];
    const Slice in = place(i, Buf::kInput);
    const Slice out = place(i, Buf::kOutput);
    OPTCOLL_CHECK(
        in.count >= part_layout.input_count(i) && out.count >= part_layout.output_count(i),
        "part rank {} buffers mapped to {} and {}", i, describe(in), describe(out));
    const Count scratch_base = program.scratch_count;
    program.scratch_count += source.scratch_count;
    const auto first = static_cast<OpId>(program.ops.size());
    program.ops.reserve(program.ops.size() + source.ops.size());
    OpDeps& sinks = sinks_[static_cast<std::size_t>(r)];
    std::vector<bool> has_successor(source.ops.size(), false);
    std::fill(sent_before.begin(), sent_before.end(), -1);
    std::fill(received_before.begin(), received_before.end(), -1);
    for (const Op& op : source.ops) {
      Op& renamed = program.ops.emplace_back();  // built in place: no 112-byte move per op
      renamed.seq = op.seq;
      renamed.not_before = op.not_before;  // still a time from the start of the whole call
      renamed.after.reserve(op.after.empty() ? sinks.size() : op.after.size());
      for (const OpId a : op.after) {
        renamed.after.push_back(first + a);
        has_successor[static_cast<std::size_t>(a)] = true;
      }
      if (op.after.empty()) renamed.after = sinks;
      renamed.action = rename_action(op.action, members, in, out, scratch_base);
      if (is_send(op.action)) {
        const Rank part_to = peer_of(op.action);
        const Rank to = members[static_cast<std::size_t>(part_to)];
        renamed.seq += earlier(sent_before, part_to, r, to);
        part_messages.emplace_back(r, to, op.seq + 1);
      } else if (const Rank from_peer = peer_of(op.action); from_peer != kNoRank) {
        const Rank from = members[static_cast<std::size_t>(from_peer)];
        renamed.seq += earlier(received_before, from_peer, from, r);
        // One rank kept: its peers' sends are not here to count the pair's messages.
        if (only_ != kNoRank) part_messages.emplace_back(from, r, op.seq + 1);
      }
    }
    if (!source.ops.empty()) {
      sinks.clear();
      for (std::size_t k = 0; k < source.ops.size(); ++k) {
        if (!has_successor[k]) sinks.push_back(first + static_cast<OpId>(k));
      }
    }
  }
  // A pair's part messages are numbered 0..k-1: its count is the largest number plus one.
  std::sort(part_messages.begin(), part_messages.end());
  for (std::size_t k = 0; k < part_messages.size(); ++k) {
    const auto& [from, to, used] = part_messages[k];
    const bool last_of_pair = k + 1 == part_messages.size() ||
                              std::get<0>(part_messages[k + 1]) != from ||
                              std::get<1>(part_messages[k + 1]) != to;
    if (last_of_pair) messages(from, to) += used;
  }
}

void Stitcher::copy(Rank r, const Slice& src, const Slice& dst) {
  OPTCOLL_CHECK(src.count == dst.count, "copy of {} into {}", describe(src), describe(dst));
  if (src.count == 0) return;
  append_local(r, Copy{src, dst});
}

void Stitcher::reduce(Rank r, const Slice& src, const Slice& dst, Side src_side) {
  OPTCOLL_CHECK(src.count == dst.count, "reduction of {} into {}", describe(src), describe(dst));
  if (src.count == 0) return;
  append_local(r, Reduce{src, dst, src_side});
}

void Stitcher::append_local(Rank r, Action action) {
  if (!keeps(r)) return;
  RankProgram& program = schedule_.ranks[static_cast<std::size_t>(r)];
  OpDeps& sinks = sinks_[static_cast<std::size_t>(r)];
  Op op;
  op.action = action;
  op.after = sinks;
  sinks.assign(1, static_cast<OpId>(program.ops.size()));
  program.ops.push_back(std::move(op));
}

Schedule Stitcher::finish() && {
  schedule_.spec = std::move(layout_).release_spec();
  return std::move(schedule_);
}

}  // namespace optcoll
