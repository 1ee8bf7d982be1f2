// SPDX-License-Identifier: Apache-2.0
// File: flattening a schedule into global op arrays and per-rank buffer cells.
#include "optcoll/verify/flat_schedule.h"

#include <algorithm>
#include <limits>

#include "optcoll/model/error.h"
#include "optcoll/model/huge_pages.h"

namespace optcoll::verify_detail {
namespace {

constexpr int kBufShift = 56;  // offsets are below 2^48 (kMaxCount)

// How far ahead to prefetch. Every rank's ops, and every op's `after` list, is a heap block
// of its own, scattered in memory; without prefetching, flattening p = 2^20 ranks waits on
// a cache miss per rank and per op.
constexpr std::size_t kPrefetchRanks = 16;
constexpr std::size_t kPrefetchOps = 8;

// Prefetches the first ops of rank r + 2k and the `after` lists of those of rank r + k.
void prefetch_ranks(const Schedule& schedule, std::size_t r) {
  const std::size_t p = schedule.ranks.size();
  if (r + 2 * kPrefetchRanks < p && !schedule.ranks[r + 2 * kPrefetchRanks].ops.empty()) {
    const auto* ops = schedule.ranks[r + 2 * kPrefetchRanks].ops.data();
    __builtin_prefetch(ops);
    __builtin_prefetch(reinterpret_cast<const char*>(ops) + 64);
    __builtin_prefetch(reinterpret_cast<const char*>(ops) + 128);
  }
  if (r + kPrefetchRanks < p) {
    const auto& ops = schedule.ranks[r + kPrefetchRanks].ops;
    for (std::size_t i = 0; i < ops.size() && i < kPrefetchOps; ++i) {
      __builtin_prefetch(ops[i].after.data());
    }
  }
}

std::uint64_t boundary_key(Buf buf, Count offset) {
  return (static_cast<std::uint64_t>(buf) << kBufShift) | static_cast<std::uint64_t>(offset);
}
Buf key_buf(std::uint64_t key) { return static_cast<Buf>(key >> kBufShift); }
Count key_offset(std::uint64_t key) {
  return static_cast<Count>(key & ((std::uint64_t{1} << kBufShift) - 1));
}

// The distinct slice boundaries of one rank, reused from rank to rank (an epoch stamp clears
// it in O(1)): a hash set to dedupe the boundaries (up to four per op, mostly repeats)
// before sorting the few distinct ones, then a map from boundary to its cell position.
class BoundarySet {
 public:
  BoundarySet() { resize(64); }

  void clear() {
    ++epoch_;
    distinct_.clear();
  }
  // Inserts a key; returns its slot, which stays its slot until the set grows (growths()).
  std::uint32_t insert(std::uint64_t key) {
    const std::size_t slot = find(key);
    if (stamp_[slot] != epoch_) {
      stamp_[slot] = epoch_;
      keys_[slot] = key;
      distinct_.push_back(key);
      if (2 * distinct_.size() > keys_.size()) {
        grow();
        return static_cast<std::uint32_t>(find(key));
      }
    }
    return static_cast<std::uint32_t>(slot);
  }
  std::uint32_t slot_of(std::uint64_t key) const { return static_cast<std::uint32_t>(find(key)); }
  std::size_t growths() const { return growths_; }
  // The position stored for a key (or at a slot) inserted since the last clear().
  CellId& position(std::uint64_t key) { return positions_[find(key)]; }
  CellId position_at(std::uint32_t slot) const { return positions_[slot]; }
  std::vector<std::uint64_t>& distinct() { return distinct_; }

 private:
  std::size_t find(std::uint64_t key) const {
    const std::size_t mask = keys_.size() - 1;
    std::size_t slot = static_cast<std::size_t>((key * 0x9e3779b97f4a7c15ull) >> shift_) & mask;
    while (stamp_[slot] == epoch_ && keys_[slot] != key) slot = (slot + 1) & mask;
    return slot;
  }
  void resize(std::size_t slots) {
    keys_.assign(slots, 0);
    positions_.assign(slots, 0);
    stamp_.assign(slots, 0);
    shift_ = 64;
    for (std::size_t s = slots; s > 1; s /= 2) --shift_;
  }
  // Only called while inserting, before any position is assigned.
  void grow() {
    ++growths_;
    resize(keys_.size() * 2);
    for (const std::uint64_t key : distinct_) {
      const std::size_t slot = find(key);
      stamp_[slot] = epoch_;
      keys_[slot] = key;
    }
  }

  std::vector<std::uint64_t> keys_;
  std::vector<CellId> positions_;
  std::vector<std::uint32_t> stamp_;
  std::uint32_t epoch_ = 0;
  std::size_t growths_ = 0;
  int shift_ = 64;
  std::vector<std::uint64_t> distinct_;
};

// A slice as flatten() reads it, with where its boundaries are in the rank's BoundarySet (so
// that its cells are found without hashing them again).
struct SliceRef {
  Buf buf = Buf::kInput;
  Count offset = 0;
  Count end = 0;
  std::uint32_t first_slot = 0;
  std::uint32_t end_slot = 0;
};

// Flattens one rank at a time into a FlatSchedule, reusing its per-rank scratch.
class Flattener {
 public:
  Flattener(const Schedule& schedule, const Layout& layout, FlatSchedule& flat)
      : schedule_(schedule), layout_(layout), flat_(flat) {}

  void rank(Rank r) {
    const auto& program = schedule_.ranks[static_cast<std::size_t>(r)];
    bounds_.clear();
    for (const Buf buf : {Buf::kInput, Buf::kOutput, Buf::kScratch}) {
      const Count size =
          buf == Buf::kScratch ? program.scratch_count : layout_.buffer_count(r, buf);
      if (size > 0) {
        bounds_.insert(boundary_key(buf, 0));
        bounds_.insert(boundary_key(buf, size));
      }
    }
    const std::size_t n = program.ops.size();
    src_.resize(n);
    dst_.resize(n);
    spans_.resize(n);
    lists_.clear();
    succ_count_.assign(n, 0);
    const std::size_t growths = bounds_.growths();
    read_ops(r, program);
    if (bounds_.growths() != growths) find_slots_again();
    assign_cells(r);
    const GlobalOp base = flat_.op_base[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < n; ++i) {
      FlatOp& op = flat_.ops[base + i];
      if (op.kind == OpKind::kSendSlices || op.kind == OpKind::kRecvSlices) {
        const auto [first, end] = spans_[i];
        const CellRange list{static_cast<CellId>(flat_.slice_cells.size()),
                             static_cast<std::uint32_t>(end - first)};
        for (std::size_t k = first; k < end; ++k) flat_.slice_cells.push_back(cells(lists_[k]));
        (op.kind == OpKind::kSendSlices ? op.src : op.dst) = list;
        continue;
      }
      op.src = cells(src_[i]);
      op.dst = cells(dst_[i]);
    }
    link_successors(r);
  }

 private:
  void note(SliceRef& ref, const Slice& slice) {
    ref = {slice.buf, slice.offset, slice.end(), 0, 0};
    if (slice.count == 0) return;
    ref.first_slot = bounds_.insert(boundary_key(slice.buf, slice.offset));
    ref.end_slot = bounds_.insert(boundary_key(slice.buf, slice.end()));
  }

  // Op i, a SendSlices or RecvSlices: its slices go to lists_, and spans_[i] records where.
  void note_list(std::size_t i, const std::vector<Slice>& slices) {
    spans_[i] = {lists_.size(), lists_.size() + slices.size()};
    for (const Slice& slice : slices) note(lists_.emplace_back(), slice);
  }

  // After the boundary set grew (rarely: only past the most boundaries a rank had so far).
  void find_slots_again() {
    for (std::vector<SliceRef>* refs : {&src_, &dst_, &lists_}) {
      for (SliceRef& ref : *refs) {
        if (ref.end == ref.offset) continue;
        ref.first_slot = bounds_.slot_of(boundary_key(ref.buf, ref.offset));
        ref.end_slot = bounds_.slot_of(boundary_key(ref.buf, ref.end));
      }
    }
  }

  void read_ops(Rank r, const RankProgram& program) {
    const GlobalOp base = flat_.op_base[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < program.ops.size(); ++i) {
      const Op& op = program.ops[i];
      if (i + kPrefetchOps < program.ops.size()) {
        __builtin_prefetch(program.ops[i + kPrefetchOps].after.data());
      }
      if (i + 3 * kPrefetchOps < program.ops.size()) {  // hardware prefetch stops at pages
        const auto* ahead = reinterpret_cast<const char*>(&program.ops[i + 3 * kPrefetchOps]);
        __builtin_prefetch(ahead);
        __builtin_prefetch(ahead + 64);
      }
      const GlobalOp g = base + static_cast<GlobalOp>(i);
      src_[i] = {};
      dst_[i] = {};
      std::visit(
          [&](const auto& a) {
            using A = std::decay_t<decltype(a)>;
            if constexpr (std::is_same_v<A, Send>) {
              flat_.ops[g].kind = OpKind::kSend;
              note(src_[i], a.src);
            } else if constexpr (std::is_same_v<A, Recv>) {
              flat_.ops[g].kind = OpKind::kRecv;
              note(dst_[i], a.dst);
            } else if constexpr (std::is_same_v<A, RecvReduce>) {
              flat_.ops[g].kind = OpKind::kRecvReduce;
              flat_.ops[g].side = a.incoming;
              note(dst_[i], a.dst);
            } else if constexpr (std::is_same_v<A, SendSlices>) {
              flat_.ops[g].kind = OpKind::kSendSlices;
              note_list(i, a.src);
            } else if constexpr (std::is_same_v<A, RecvSlices>) {
              flat_.ops[g].kind = OpKind::kRecvSlices;
              note_list(i, a.dst);
            } else if constexpr (std::is_same_v<A, Copy>) {
              flat_.ops[g].kind = OpKind::kCopy;
              note(src_[i], a.src);
              note(dst_[i], a.dst);
            } else {
              static_assert(std::is_same_v<A, Reduce>);
              flat_.ops[g].kind = OpKind::kReduce;
              flat_.ops[g].side = a.src_side;
              note(src_[i], a.src);
              note(dst_[i], a.dst);
            }
          },
          op.action);
      flat_.dep_start[g] = static_cast<std::uint32_t>(flat_.deps.size());
      for (const OpId d : op.after) {
        flat_.deps.push_back(base + static_cast<GlobalOp>(d));
        ++succ_count_[static_cast<std::size_t>(d)];
      }
      OPTCOLL_CHECK(flat_.deps.size() < std::numeric_limits<std::uint32_t>::max(),
                    "verify: too many dependencies ({})", flat_.deps.size());
    }
  }

  // Sorts the rank's distinct boundaries (grouped by buffer, then by offset) into `bound`.
  void assign_cells(Rank r) {
    auto& keys = bounds_.distinct();
    std::sort(keys.begin(), keys.end());
    std::size_t k = 0;
    for (std::size_t b = 0; b < 3; ++b) {
      flat_.cell_base[3 * static_cast<std::size_t>(r) + b] =
          static_cast<CellId>(flat_.bound.size());
      for (; k < keys.size() && static_cast<std::size_t>(key_buf(keys[k])) == b; ++k) {
        bounds_.position(keys[k]) = static_cast<CellId>(flat_.bound.size());
        flat_.bound.push_back(key_offset(keys[k]));
      }
    }
    OPTCOLL_CHECK(flat_.bound.size() < std::numeric_limits<CellId>::max(),
                  "verify: too many buffer cells ({})", flat_.bound.size());
  }

  CellRange cells(const SliceRef& ref) const {
    if (ref.end == ref.offset) return {};
    const CellId first = bounds_.position_at(ref.first_slot);
    return {first, bounds_.position_at(ref.end_slot) - first};
  }

  // The reverse of the rank's `after` edges; the rank's successor rows occupy the same
  // range of `succs` as its dependency rows do of `deps`.
  void link_successors(Rank r) {
    const GlobalOp base = flat_.op_base[static_cast<std::size_t>(r)];
    const GlobalOp end = flat_.op_base[static_cast<std::size_t>(r) + 1];
    if (base == end) return;
    std::uint32_t cursor = flat_.dep_start[base];
    for (GlobalOp g = base; g < end; ++g) {
      flat_.succ_start[g] = cursor;
      const std::uint32_t count = succ_count_[g - base];
      succ_count_[g - base] = cursor;  // becomes the fill position
      cursor += count;
    }
    flat_.succs.resize(cursor);
    for (GlobalOp g = base; g < end; ++g) {
      // This rank's rows are the last ones appended, so its last row ends at deps.size().
      const std::uint32_t row_end = g + 1 < end ? flat_.dep_start[g + 1] : cursor;
      for (std::uint32_t e = flat_.dep_start[g]; e < row_end; ++e) {
        flat_.succs[succ_count_[flat_.deps[e] - base]++] = g;
      }
    }
  }

  const Schedule& schedule_;
  const Layout& layout_;
  FlatSchedule& flat_;
  BoundarySet bounds_;
  std::vector<SliceRef> src_;
  std::vector<SliceRef> dst_;
  std::vector<SliceRef> lists_;  // the rank's SendSlices' and RecvSlices' slices
  std::vector<std::pair<std::size_t, std::size_t>> spans_;  // per op: its slices in lists_
  std::vector<std::uint32_t> succ_count_;
};

}  // namespace

Rank FlatSchedule::rank_of(GlobalOp op) const {
  const auto it = std::upper_bound(op_base.begin(), op_base.end(), op);
  return static_cast<Rank>(it - op_base.begin() - 1);
}

CellId FlatSchedule::cell_at(Rank r, Buf buf, Count element) const {
  const auto first = bound.begin() + cells_begin(r, buf);
  const auto last = bound.begin() + cells_end(r, buf);
  return static_cast<CellId>(std::upper_bound(first, last, element) - bound.begin() - 1);
}

Buf buf_of_cell(const FlatSchedule& flat, Rank r, CellId cell) {
  if (cell >= flat.cells_begin(r, Buf::kScratch)) return Buf::kScratch;
  if (cell >= flat.cells_begin(r, Buf::kOutput)) return Buf::kOutput;
  return Buf::kInput;
}

FlatSchedule flatten(const Schedule& schedule, const Layout& layout,
                     std::vector<GlobalOp> partner) {
  FlatSchedule flat;
  const std::size_t p = schedule.ranks.size();
  flat.nranks = static_cast<Rank>(p);
  flat.op_base.assign(p + 1, 0);
  for (std::size_t r = 0; r < p; ++r) {
    flat.op_base[r + 1] = flat.op_base[r] + static_cast<GlobalOp>(schedule.ranks[r].ops.size());
  }
  const std::size_t n = flat.op_base[p];
  OPTCOLL_CHECK(partner.size() == n, "verify: {} message partners for {} ops", partner.size(), n);
  OPTCOLL_CHECK(n < (std::size_t{1} << 31), "verify: {} ops exceed 2^31", n);
  flat.partner = std::move(partner);
  reserve_on_huge_pages(flat.ops, n);
  reserve_on_huge_pages(flat.dep_start, n + 1);
  reserve_on_huge_pages(flat.succ_start, n + 1);
  flat.ops.resize(n);
  flat.dep_start.resize(n + 1);
  flat.succ_start.resize(n + 1);
  flat.cell_base.resize(3 * p + 1);
  // Capacity is address space until written: reserve enough that these rarely (bound:
  // never) reallocate, since each reallocation copies the array and touches fresh pages.
  // Builders rarely give an op more than 2 dependencies on average.
  reserve_on_huge_pages(flat.deps, 2 * n);
  reserve_on_huge_pages(flat.succs, 2 * n);
  // At most 2 per buffer of a rank and 4 per op (more only with SendSlices / RecvSlices).
  reserve_on_huge_pages(flat.bound, 6 * p + 4 * n);
  Flattener flattener(schedule, layout, flat);
  for (std::size_t r = 0; r < p; ++r) {
    prefetch_ranks(schedule, r);
    flattener.rank(static_cast<Rank>(r));
  }
  flat.dep_start[n] = static_cast<std::uint32_t>(flat.deps.size());
  flat.succ_start[n] = static_cast<std::uint32_t>(flat.deps.size());
  flat.succs.resize(flat.deps.size());
  flat.cell_base[3 * p] = static_cast<CellId>(flat.bound.size());
  return flat;
}

}  // namespace optcoll::verify_detail
