// SPDX-License-Identifier: Apache-2.0
// File: ScheduleBuilder. Algorithm authors describe transfers and local steps in program
// order; the builder emits both halves of every message, numbers messages per ordered pair
// (seq), and infers the least ordering that respects every data hazard (read-after-write,
// write-after-read, write-after-write) on each rank's buffers.
//
// A builder can also make one rank's program alone (OneRankBuild below): for a process that
// runs that one rank, an MPI process, which has no use for the others' programs. At p = 4,096
// an alltoall's whole schedule has 33.5 M ops (gigabytes, seconds to build); one rank's has
// 8,190.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "optcoll/model/collective.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll {

// While an instance lives, every ScheduleBuilder made on this thread emits rank `rank`'s ops
// only: the other ranks' programs stay empty (their scratch is still counted; their local
// ops are not checked), and transfer() and the rest return kNoOp for their halves. The
// kept program is the one a whole build makes, op for op (tests/schedule/
// one_rank_build_test.cc holds every registry algorithm to that), so an algorithm needs no
// change; a rank's program alone is not a schedule to verify or simulate. Instances nest
// (the innermost one counts); one thread's does not affect another's builders.
class OneRankBuild {
 public:
  explicit OneRankBuild(Rank rank);
  ~OneRankBuild();
  OneRankBuild(const OneRankBuild&) = delete;
  OneRankBuild& operator=(const OneRankBuild&) = delete;

  // The rank this thread's builders keep (kNoRank: every rank).
  static Rank current();

 private:
  Rank previous_;
};

class ScheduleBuilder {
 public:
  // Validates `spec` (throws Error on a bad spec).
  ScheduleBuilder(CollectiveSpec spec, std::string algorithm);
  ~ScheduleBuilder();
  ScheduleBuilder(ScheduleBuilder&&) noexcept;
  ScheduleBuilder& operator=(ScheduleBuilder&&) noexcept;

  const Layout& layout() const { return layout_; }
  const CollectiveSpec& spec() const { return layout_.spec(); }
  Rank nranks() const { return layout_.nranks(); }

  // Emits the Send on `from` and the matching Recv on `to` in one call; the counts must
  // agree. Zero-element transfers emit nothing and return {kNoOp, kNoOp}.
  struct Transfer {
    OpId send = kNoOp;
    OpId recv = kNoOp;
  };
  Transfer transfer(Rank from, Rank to, Slice src, Slice dst);
  // One message between a slice list and a slice (SendSlices / RecvSlices): the
  // concatenation of the sender's `src` slices, in order, into the receiver's `dst`; or the
  // sender's `src` split over the receiver's `dst` slices, in order. The list's total must
  // equal the slice's count. Empty slices are dropped from the list; a zero total emits
  // nothing, and a list left with one slice emits a plain Send / Recv.
  Transfer transfer_from_slices(Rank from, Rank to, const std::vector<Slice>& src, Slice dst);
  Transfer transfer_into_slices(Rank from, Rank to, Slice src, const std::vector<Slice>& dst);
  // As transfer(), but the receiver combines: dst = op(incoming, dst) for Side::kLeft,
  // dst = op(dst, incoming) for Side::kRight.
  Transfer transfer_reduce(Rank from, Rank to, Slice src, Slice dst, Side incoming);
  OpId copy(Rank at, Slice src, Slice dst);
  // dst = op(src, dst) for Side::kLeft, op(dst, src) for Side::kRight.
  OpId reduce(Rank at, Slice src, Slice dst, Side src_side);

  // Grows rank `at`'s scratch area by `count` elements and returns the new slice.
  Slice scratch(Rank at, Count count);

  // Escape hatch for orderings that no data hazard implies (e.g. a model's fixed receive
  // order). Each use in an algorithm file carries a comment saying why. kNoOp is ignored.
  void add_dependency(Rank at, OpId before, OpId after);
  // Op `op` of rank `at` does not start before `time` (Op::not_before): for schedules whose
  // start times are fixed in advance for the model they are built for. kNoOp is ignored.
  void set_not_before(Rank at, OpId op, Time time);

  void set_tree(TreeShape tree);
  // Records the parameters actually used ("segment=8192"), e.g. after resolving "auto".
  void set_params(std::string params);

  // Ops emitted so far on rank r (for algorithms that chain explicit dependencies).
  OpId op_count(Rank r) const;
  // Whether rank r's ops are emitted: false only for the other ranks of a OneRankBuild. An
  // algorithm may skip what it would do for a rank that is not (Bruck's p - 1 packing
  // copies per rank and step: O(p^2 log p) calls at p = 8,192 took 18 s), as long as the
  // kept rank's program stays the whole build's.
  bool emits(Rank r) const { return only_ == kNoRank || r == only_; }

  Schedule finish() &&;

 private:
  struct HazardMap;  // per (rank, buffer): interval map of last writer and current readers
  struct Access {
    Slice slice;
    bool write;
  };

  OpId emit(Rank at, Action action, std::int32_t seq, std::initializer_list<Access> accesses);
  OpId emit(Rank at, Action action, std::int32_t seq, std::span<const Access> accesses);
  // The slices of `slices` that are not empty, each checked (check_slice) on rank `at`.
  std::vector<Slice> nonempty_slices(Rank at, const std::vector<Slice>& slices,
                                     const char* what) const;
  void check_slice(Rank at, const Slice& slice, const char* what) const;
  HazardMap& hazards(Rank at, Buf buf);
  std::int32_t next_seq(Rank from, Rank to);

  Layout layout_;
  Rank only_ = kNoRank;  // OneRankBuild::current() when made
  Schedule schedule_;
  // Every rank's and buffer's hazard map, index rank * 3 + buf, with the memory they live in
  // (released at once by finish()).
  struct HazardMaps;
  std::unique_ptr<HazardMaps> hazards_;
  std::vector<std::vector<std::pair<Rank, std::int32_t>>> seq_;  // per sender: (receiver, count)
  std::vector<OpId> scratch_deps_;                               // reused buffer
};

}  // namespace optcoll
