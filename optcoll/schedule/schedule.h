// SPDX-License-Identifier: Apache-2.0
// File: the shared representation. A Schedule is plain data: for each rank, a small DAG of
// send / receive / receive-reduce / copy / reduce operations over slices of its input,
// output and scratch buffers (and sends and receives of one message spread over several
// slices). Algorithms and planners produce it; the verifier, simulator,
// serializers and executors read it, and none of them knows who produced it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "optcoll/model/collective.h"
#include "optcoll/model/types.h"

namespace optcoll {

// A contiguous run of elements in one of a rank's buffers.
struct Slice {
  Buf buf = Buf::kInput;
  Count offset = 0;
  Count count = 0;

  Count end() const { return offset + count; }
  // Whether the two share an element (same buffer, intersecting ranges).
  bool overlaps(const Slice& other) const {
    return buf == other.buf && offset < other.end() && other.offset < end();
  }
  bool operator==(const Slice&) const = default;
};

// Operand order of a reduction: where the *incoming* (or src) value goes.
//   kLeft:  dst = op(incoming, dst)      kRight: dst = op(dst, incoming)
// For commutative operators both mean the same; for non-commutative ones the verifier checks
// that every combination happens in rank order.
enum class Side : std::uint8_t { kLeft, kRight };

struct Send {
  Rank peer = 0;
  Slice src;
  bool operator==(const Send&) const = default;
};
struct Recv {
  Rank peer = 0;
  Slice dst;
  bool operator==(const Recv&) const = default;
};
struct RecvReduce {
  Rank peer = 0;
  Slice dst;
  Side incoming = Side::kLeft;
  bool operator==(const RecvReduce&) const = default;
};
struct Copy {
  Slice src;
  Slice dst;
  bool operator==(const Copy&) const = default;
};
struct Reduce {
  Slice src;
  Slice dst;
  Side src_side = Side::kLeft;
  bool operator==(const Reduce&) const = default;
};
// One message whose data lie in several slices on this side, in order: SendSlices sends the
// concatenation of `src`; RecvSlices splits the incoming message over `dst` (the first
// dst[0].count elements into dst[0], and so on). Either matches a send or receive of the same
// total count on the other side, of any kind: it is one message, and the cost model prices it
// as one message of the total size, with no copy. What Träff's TWO_Gatherv does with an MPI
// derived datatype: the root receives the other class's blocks straight into the two runs of
// its output they belong to (docs/math/gather-scatter-trees.md, section 7). Slices may be
// empty; the total may be zero.
struct SendSlices {
  Rank peer = 0;
  std::vector<Slice> src;
  bool operator==(const SendSlices&) const = default;
};
struct RecvSlices {
  Rank peer = 0;
  std::vector<Slice> dst;
  bool operator==(const RecvSlices&) const = default;
};
using Action = std::variant<Send, Recv, RecvReduce, Copy, Reduce, SendSlices, RecvSlices>;
// Schedules hold millions of ops: the slice lists live on the heap, so that the two new
// alternatives do not make every Op larger.
static_assert(sizeof(SendSlices) <= sizeof(Reduce) && sizeof(RecvSlices) <= sizeof(Reduce));

using OpId = std::int32_t;  // index into RankProgram::ops
inline constexpr OpId kNoOp = -1;

// An op's dependencies. Almost every op has at most two, kept inline: a schedule of the
// two-level allreduce at p = 65,536 holds 18 M ops, and one heap block per op's list made
// allocation and first-touch page faults the largest cost of building it.
using OpDeps = boost::container::small_vector<OpId, 2>;

struct Op {
  Action action;
  OpDeps after;           // same-rank ops that must complete first (all < own index)
  std::int32_t seq = -1;  // communication ops: k-th message on the ordered pair
  // Release time: the op does not start before this time (the cost model's time units,
  // counted from the schedule's start; 0: no such bound). It orders nothing and carries no
  // data: the simulator holds the op until then, the verifier and the executors ignore it.
  // A schedule whose timing is fixed in advance (Canon & Antoniu's Algorithm 2: transfer
  // start times that bound how many transfers run at once) says so with it; dependencies
  // cannot, because they order ops of one rank after events, not at a time.
  Time not_before = 0;

  bool operator==(const Op&) const = default;
};

struct RankProgram {
  std::vector<Op> ops;  // topologically ordered
  Count scratch_count = 0;

  bool operator==(const RankProgram&) const = default;
};

// A rooted tree over ranks, with each node's children in the order it communicates with
// them. Tree algorithms record theirs so that tools can show it (`plan --json`'s "tree").
struct TreeShape {
  Rank root = 0;
  std::vector<std::vector<Rank>> children;  // children[r], in communication order

  std::vector<Rank> parents() const;  // parent of each rank, kNoRank for the root
  // The ranks reachable from the root in pre-order (parents before children, children in
  // communication order); a node listed twice (not a tree) is listed each time it is met.
  std::vector<Rank> preorder() const;
  bool operator==(const TreeShape&) const = default;
};

struct Schedule {
  CollectiveSpec spec;
  std::string algorithm;  // provenance: "allreduce/ring", "plan/bcast_tree_dp", ...
  std::string params;     // the parameters it was built with, resolved: "segment=8192,radix=4"
  std::vector<RankProgram> ranks;
  std::optional<TreeShape> tree;

  std::size_t op_count() const;
  bool operator==(const Schedule&) const = default;
};

// Small helpers shared by every consumer.
// Send, Recv, RecvReduce, SendSlices, RecvSlices.
bool is_communication(const Action& action);
bool is_send(const Action& action);     // Send, SendSlices
bool is_receive(const Action& action);  // Recv, RecvReduce, RecvSlices
Rank peer_of(const Action& action);     // kNoRank for local ops
// The elements a communication op's message carries (a slice list's total); 0 for local ops.
Count message_count(const Action& action);
Count total_count(const std::vector<Slice>& slices);  // the sum of the slices' counts
// Whether `copy`, when `dependent` is its only dependent, folds into it (the executors do it;
// the simulator prices it with CostModel::folds_copies): `dependent` is a RecvReduce or a
// Reduce into exactly the copy's destination (a Reduce whose source lies outside it), so
// it can combine straight from the copy's source, dst = incoming (+) copy.src, and the copy
// need not run. Never for an empty copy or one whose source and destination overlap.
bool copy_folds_into(const Copy& copy, const Action& dependent);
std::string_view buf_name(Buf buf);        // "in", "out", "scratch"
std::string describe(const Slice& slice);  // "out[64:+32]"
// "out[0:+9] out[12:+9]" (an empty list: "nothing")
std::string describe(const std::vector<Slice>& slices);
// "recv 32 elems from rank 2 into out[64:+32]"; "recv 18 elems from rank 3 into out[0:+9]
// out[12:+9]" for a RecvSlices
std::string describe(const Action& action);
// "rank 3 op 7: recv 32 elems from rank 2 (seq 5) into out[64:+32]"
std::string describe_op(const Schedule& schedule, Rank rank, OpId op);

}  // namespace optcoll
