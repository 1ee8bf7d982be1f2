// SPDX-License-Identifier: Apache-2.0
// File: compositions of two collectives as one schedule.
#include "optcoll/plan/compose.h"

#include <algorithm>
#include <map>
#include <utility>

#include "optcoll/model/error.h"

namespace optcoll {
namespace {

Count block_of(Count total, Rank p, Rank q) { return total / p + (q < total % p ? 1 : 0); }

CollectiveSpec phase(CollectiveKind kind, const CollectiveSpec& spec, Count count,
                     std::vector<Count> counts = {}, Rank root = 0) {
  CollectiveSpec s;
  s.kind = kind;
  s.nranks = spec.nranks;
  s.root = root;
  s.count = counts.empty() ? count : 0;
  s.counts = std::move(counts);
  s.commutative = spec.commutative;
  // A reproducible call's reduction phase must itself fold left to right; its other phase
  // (a bcast, scatter, ...) only moves the folded result.
  s.reproducible = spec.reproducible && is_reduction(kind);
  s.elem_bytes = spec.elem_bytes;
  return s;
}

// The whole input or output buffer of rank r in the composed call.
Slice whole(const Layout& layout, Rank r, Buf buf) {
  return {buf, 0, buf == Buf::kInput ? layout.input_count(r) : layout.output_count(r)};
}

// The first phase's sinks on a rank (its ops no other op waits for): what the second phase's
// first ops wait for. Many sinks (a pipelined phase: one per segment) meet in one empty Copy
// first, so that the dependencies stay linear in the ops instead of sinks x second-phase roots.
std::vector<OpId> join_sinks(RankProgram& dst) {
  std::vector<bool> used(dst.ops.size(), false);
  for (const Op& op : dst.ops) {
    for (const OpId a : op.after) used[static_cast<std::size_t>(a)] = true;
  }
  std::vector<OpId> sinks;
  for (std::size_t i = 0; i < used.size(); ++i) {
    if (!used[i]) sinks.push_back(static_cast<OpId>(i));
  }
  if (sinks.size() > 1) {
    const Slice nothing{Buf::kScratch, 0, 0};
    dst.ops.push_back(Op{Copy{nothing, nothing}, OpDeps(sinks.begin(), sinks.end()), -1});
    sinks = {static_cast<OpId>(dst.ops.size() - 1)};
  }
  return sinks;
}

// Messages per ordered pair (from, to) in the first phase: the second phase's seqs on that
// pair follow them.
// The first phase's messages per ordered pair, counted at both ends: a phase built for one
// rank (OneRankBuild) holds that rank's ends only.
struct PairMessages {
  std::int32_t sent = 0;
  std::int32_t received = 0;
};
using MessageCounts = std::map<std::pair<Rank, Rank>, PairMessages>;

// Op `op` of phase `ph` on `rank`, its slices moved where `remap` places them and its
// message numbered after the first phase's on the same pair.
template <typename Remap>
void place_op(Op& op, int ph, Rank rank, const Remap& remap, MessageCounts& messages) {
  const auto number = [&](Rank from, Rank to) {
    PairMessages& n = messages[{from, to}];
    if (ph == 0) {
      ++(from == rank ? n.sent : n.received);
    } else {
      op.seq += std::max(n.sent, n.received);
    }
  };
  std::visit(
      [&](auto& action) {
        using T = std::decay_t<decltype(action)>;
        if constexpr (std::is_same_v<T, Send>) {
          action.src = remap(action.src);
          number(rank, action.peer);
        } else if constexpr (std::is_same_v<T, SendSlices>) {
          for (Slice& slice : action.src) slice = remap(slice);
          number(rank, action.peer);
        } else if constexpr (std::is_same_v<T, Recv> || std::is_same_v<T, RecvReduce>) {
          action.dst = remap(action.dst);
          number(action.peer, rank);
        } else if constexpr (std::is_same_v<T, RecvSlices>) {
          for (Slice& slice : action.dst) slice = remap(slice);
          number(action.peer, rank);
        } else {
          static_assert(std::is_same_v<T, Copy> || std::is_same_v<T, Reduce>);
          action.src = remap(action.src);
          action.dst = remap(action.dst);
        }
      },
      op.action);
}

}  // namespace

std::optional<Composition> composition_for(const CollectiveSpec& spec) {
  switch (spec.kind) {  // the kinds without one cost nothing to ask (alltoallv's p x p layout)
    case CollectiveKind::kAllreduce:
    case CollectiveKind::kAllgather:
    case CollectiveKind::kAllgatherv:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kReduceScatterBlock:
    case CollectiveKind::kBcast:
      break;
    default:
      return std::nullopt;
  }
  const Layout layout(spec);  // owns its copy: the phases' functions keep it
  const Rank p = spec.nranks;
  const Count total = layout.total();
  std::vector<Count> no_handoff(static_cast<std::size_t>(p), 0);
  auto direct = [layout](int /*phase*/, Rank r, Buf buf) { return whole(layout, r, buf); };
  switch (spec.kind) {
    case CollectiveKind::kAllreduce:  // reduce to 0, then bcast from 0: out -> out
      return Composition{phase(CollectiveKind::kReduce, spec, spec.count),
                         phase(CollectiveKind::kBcast, spec, spec.count), no_handoff, direct};
    case CollectiveKind::kAllgather:
    case CollectiveKind::kAllgatherv: {
      const bool v = spec.kind == CollectiveKind::kAllgatherv;
      return Composition{v ? phase(CollectiveKind::kGatherv, spec, 0, spec.counts)
                           : phase(CollectiveKind::kGather, spec, spec.count),
                         phase(CollectiveKind::kBcast, spec, total), no_handoff, direct};
    }
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kReduceScatterBlock: {
      // reduce to 0 into the handoff area, then scatter(v) from there.
      std::vector<Count> handoff = no_handoff;
      handoff[0] = total;
      const bool v = spec.kind == CollectiveKind::kReduceScatter;
      auto place = [layout, total](int ph, Rank r, Buf buf) -> Slice {
        const bool hand = (ph == 0 && buf == Buf::kOutput) || (ph == 1 && buf == Buf::kInput);
        if (hand) return {Buf::kScratch, 0, r == 0 ? total : 0};
        return whole(layout, r, buf);
      };
      return Composition{phase(CollectiveKind::kReduce, spec, total),
                         v ? phase(CollectiveKind::kScatterv, spec, 0, spec.counts)
                           : phase(CollectiveKind::kScatter, spec, spec.count),
                         handoff, place};
    }
    case CollectiveKind::kBcast: {
      // scatterv of the root's message in p near-equal blocks into each rank's handoff
      // area, then allgatherv from the handoff areas into every output.
      std::vector<Count> blocks(static_cast<std::size_t>(p));
      for (Rank q = 0; q < p; ++q) blocks[static_cast<std::size_t>(q)] = block_of(total, p, q);
      const Rank root = spec.root;
      auto place = [layout, blocks, root](int ph, Rank r, Buf buf) -> Slice {
        const Count mine = blocks[static_cast<std::size_t>(r)];
        if (ph == 0 && buf == Buf::kInput) {  // scatterv's source: the root's message
          return r == root ? whole(layout, r, Buf::kOutput) : Slice{Buf::kOutput, 0, 0};
        }
        if ((ph == 0 && buf == Buf::kOutput) || (ph == 1 && buf == Buf::kInput)) {
          return {Buf::kScratch, 0, mine};
        }
        return whole(layout, r, buf);
      };
      return Composition{phase(CollectiveKind::kScatterv, spec, 0, blocks, root),
                         phase(CollectiveKind::kAllgatherv, spec, 0, blocks), blocks, place};
    }
    default:
      return std::nullopt;
  }
}

Schedule compose(const CollectiveSpec& spec, const Composition& composition, const Schedule& first,
                 const Schedule& second) {
  const auto p = static_cast<std::size_t>(spec.nranks);
  OPTCOLL_CHECK(first.ranks.size() == p && second.ranks.size() == p,
                "composition phases have {} and {} ranks for {}", first.ranks.size(),
                second.ranks.size(), p);
  Schedule out;
  out.spec = spec;
  out.algorithm = first.algorithm + " + " + second.algorithm;
  out.params =
      first.params + (first.params.empty() || second.params.empty() ? "" : ";") + second.params;
  out.ranks.resize(p);
  MessageCounts messages;
  const Schedule* phases[2] = {&first, &second};
  for (int ph = 0; ph < 2; ++ph) {
    for (std::size_t r = 0; r < p; ++r) {
      const auto rank = static_cast<Rank>(r);
      const RankProgram& prog = phases[ph]->ranks[r];
      RankProgram& dst = out.ranks[r];
      const Count scratch_base =
          composition.handoff[r] + (ph == 1 ? first.ranks[r].scratch_count : 0);
      auto remap = [&](Slice s) -> Slice {
        if (s.buf == Buf::kScratch) return {Buf::kScratch, scratch_base + s.offset, s.count};
        const Slice base = composition.place(ph, rank, s.buf);
        OPTCOLL_CHECK(s.end() <= base.count, "phase {} of {} reaches past its buffer on rank {}",
                      ph, out.algorithm, r);
        return {base.buf, base.offset + s.offset, s.count};
      };
      const std::vector<OpId> sinks = ph == 1 ? join_sinks(dst) : std::vector<OpId>{};
      const auto op_base = static_cast<OpId>(dst.ops.size());
      for (const Op& op : prog.ops) {
        Op copy = op;
        for (OpId& a : copy.after) a += op_base;
        if (ph == 1 && op.after.empty()) copy.after.assign(sinks.begin(), sinks.end());
        place_op(copy, ph, rank, remap, messages);
        dst.ops.push_back(std::move(copy));
      }
      dst.scratch_count = composition.handoff[r] + first.ranks[r].scratch_count +
                          (ph == 1 ? second.ranks[r].scratch_count : 0);
    }
  }
  return out;
}

}  // namespace optcoll
