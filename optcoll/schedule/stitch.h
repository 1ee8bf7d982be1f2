// SPDX-License-Identifier: Apache-2.0
// File: Stitcher: one schedule of p ranks made of schedules of sub-communicators, placed
// one after another (the node-aware algorithms: a phase per node, a phase among the nodes'
// leaders, ...). Each part is a whole schedule of its own (built and verifiable alone); the
// stitcher renames its ranks and buffers into the whole call's, continues the message
// numbers of every ordered pair, and orders each rank's part after that rank's earlier ops.
// Made under a OneRankBuild (builder.h), it keeps that rank's ops only, as a builder does;
// parts may then hold that rank's program only (their other programs empty).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "optcoll/model/collective.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll {

class Stitcher {
 public:
  // The whole call (validated); `algorithm` names the result.
  Stitcher(CollectiveSpec spec, std::string algorithm);

  // `count` more scratch elements on rank r (e.g. a hand-off area between two parts).
  Slice scratch(Rank r, Count count);

  // Where part rank i's input or output buffer lies in its member's buffers.
  using Place = std::function<Slice(Rank part_rank, Buf buf)>;
  // Appends `part`, whose rank i is played by members[i] (distinct ranks). Its input and
  // output buffers map through `place` (the slice must be at least the part's buffer
  // count); its scratch is appended to the member's scratch. Every op of the part on a rank
  // starts after all of that rank's ops appended before (parts on disjoint ranks stay
  // independent). Throws InternalError when an op touches elements outside the mapped slice.
  void append(const Schedule& part, std::span<const Rank> members, const Place& place);

  // A local copy on rank r after all of its ops so far (e.g. blocks from a staging area into
  // their places in the output).
  void copy(Rank r, const Slice& src, const Slice& dst);
  // A local reduction on rank r after all of its ops so far: dst = src ⊕ dst where
  // `src_side` is kLeft, dst ⊕ src where it is kRight (e.g. a prefix of earlier ranks
  // combined on the left of what a rank holds).
  void reduce(Rank r, const Slice& src, const Slice& dst, Side src_side);

  void set_params(std::string params) { schedule_.params = std::move(params); }
  Schedule finish() &&;

 private:
  Layout layout_;
  Schedule schedule_;
  Rank only_ = kNoRank;  // OneRankBuild::current() when made
  bool keeps(Rank r) const { return only_ == kNoRank || r == only_; }
  // Per rank: which of its ops no later op of the rank waits for (its current sinks).
  std::vector<OpDeps> sinks_;
  // Messages so far per ordered pair (from, to), as (to, count) entries of `from`'s list:
  // the next part continues from there. A rank talks to few peers in a phase; a flat list
  // per sender is cheaper than a map over every pair of a large call (millions of pairs).
  std::vector<std::vector<std::pair<Rank, std::int32_t>>> messages_;
  std::int32_t& messages(Rank from, Rank to);
  // Appends `action` on rank r after all of its ops so far.
  void append_local(Rank r, Action action);
};

}  // namespace optcoll
