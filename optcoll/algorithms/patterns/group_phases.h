// SPDX-License-Identifier: Apache-2.0
// File: collective phases on a group of ranks (a sub-communicator: a row or column of a
// logical grid, or all ranks), over a working slice per member. The phases compose inside
// one ScheduleBuilder: 1-D algorithms run them on the group of all ranks, hybrids on the
// groups of each grid dimension (see grid.h).
//
// Vocabulary. `members[i]` is the real rank of group index i (increasing in rank, so that a
// range of indices is a range of ranks in rank order). `bases[i]` is member i's working
// slice; all have the same length. `parts[i]` is the piece of the working slice that belongs
// to member i; parts are consecutive (part i+1 starts where part i ends) and cover it.
#pragma once

#include <map>
#include <vector>

#include "optcoll/algorithms/patterns/partition.h"
#include "optcoll/schedule/builder.h"

namespace optcoll::algorithms::patterns {

using Members = std::vector<Rank>;
using Parts = std::vector<Piece>;

// One-to-all phases (scatter, broadcast, allgather after a scatter) can offer a rank data it
// already holds (the root, or a rank that forwarded a range in an MST scatter). Held tracks
// which elements each rank's working buffer holds, so that such messages are not sent at
// all: phases given a Held skip every transfer whose destination already holds all of it.
class Held {
 public:
  explicit Held(Rank p) : intervals_(static_cast<std::size_t>(p)) {}
  void add(Rank r, const Slice& slice);
  bool covers(Rank r, const Slice& slice) const;

 private:
  std::vector<std::map<Count, Count>> intervals_;  // per rank: start -> end, disjoint
};

// transfer(), unless `held` says the destination already holds dst (then nothing is emitted
// and {kNoOp, kNoOp} is returned); records dst as held.
ScheduleBuilder::Transfer transfer_new(ScheduleBuilder& b, Held* held, Rank from, Rank to,
                                       const Slice& src, const Slice& dst);

// Step-synchronous exchanges (ring, butterfly) run as sendrecv steps, as in MPI libraries:
// a rank posts step s's send after its last receive of an earlier step. Data hazards imply
// this when every message is sent; when a Held skips a message, the rank would otherwise
// send early, take ports out of step order and stall its partners.
class StepOrder {
 public:
  // For the steps among `members` (which must outlive it). Its state is per member, not
  // per rank of the schedule: a hybrid runs one ring per line of its grid, 8,192 lines of
  // 32 at p = 262,144, and a table of p entries per line was 2 s of memset in auto's plan.
  explicit StepOrder(const Members& members)
      : members_(members), last_recv_(members.size(), kNoOp) {}
  // Orders the send of `t` (on members[from]) after that member's last receive; call
  // end_step() after each step to make the step's receives count.
  void send(ScheduleBuilder& b, Rank from, const ScheduleBuilder::Transfer& t);
  void received(Rank to, const ScheduleBuilder::Transfer& t);  // by members[to]
  void end_step();

 private:
  const Members& members_;
  std::vector<OpId> last_recv_;                 // per member
  std::vector<std::pair<Rank, OpId>> pending_;  // (member index, receive)
};

// 0, 1, ..., p-1.
Members all_ranks(Rank p);

// n elements cut into q nearly equal consecutive parts (even_piece).
Parts even_parts(Count n, Rank q);
// Parts of the given sizes, consecutive from offset 0.
Parts parts_of_sizes(const std::vector<Count>& sizes);
// Elements [first.offset, last.offset + last.count) of parts first..last (inclusive).
Piece parts_span(const Parts& parts, Rank first, Rank last);
// The slice `piece` of `base`.
Slice at(const Slice& base, const Piece& piece);

// Minimum spanning tree (Chan et al.): the index range is split in halves; the root sends to
// the first index of the half without it, and both halves recurse. ceil(log2 q) rounds;
// every subtree is a contiguous index range.
struct MstEdge {
  Rank from;  // index holding the data
  Rank to;    // first index of the other half
  Rank lo;    // the other half: [lo, hi)
  Rank hi;
};
// The MST's edges over indices [0, q), top-down (a parent's edge before its subtree's edges;
// the root's larger halves first): the order the phases below emit them in.
std::vector<MstEdge> mst(Rank q, Rank root);
// Scatter: the root's base holds every part; afterwards member i holds part i (in its base).
void mst_scatter(ScheduleBuilder& b, const Members& members, const std::vector<Slice>& bases,
                 const Parts& parts, Rank root, Held* held = nullptr);
// Gather: member i holds part i; afterwards the root holds every part.
void mst_gather(ScheduleBuilder& b, const Members& members, const std::vector<Slice>& bases,
                const Parts& parts, Rank root);
// Broadcast of the root's whole base.
void mst_bcast(ScheduleBuilder& b, const Members& members, const std::vector<Slice>& bases,
               Rank root, Held* held = nullptr);
// Reduction of every member's base into the root's base, in member (rank) order; the other
// bases are overwritten with partial results.
void mst_reduce(ScheduleBuilder& b, const Members& members, const std::vector<Slice>& bases,
                Rank root);

// Bucket (ring) allgather: member i holds part i; q-1 steps forward parts to index i+1.
void ring_allgather(ScheduleBuilder& b, const Members& members, const std::vector<Slice>& bases,
                    const Parts& parts, Held* held = nullptr);
// Bucket reduce-scatter, in place: every base holds a contribution; afterwards member i's
// part i holds the reduction of everyone's part i. Needs a commutative operator (part i is
// combined starting at index i+1, wrapping around).
void ring_reduce_scatter(ScheduleBuilder& b, const Members& members,
                         const std::vector<Slice>& bases, const Parts& parts);

}  // namespace optcoll::algorithms::patterns
