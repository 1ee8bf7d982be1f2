// SPDX-License-Identifier: Apache-2.0
// File: the verifier's compact copy of a well-formed schedule. The Schedule itself is read
// once (ops of one rank live in their own heap block, each `after` list in another, which
// makes every pass over it memory-bound at p = 2^20); the checks then run over these flat,
// rank-ordered arrays.
//
// Ops are numbered globally, rank by rank: op i of rank r is op_base[r] + i. Each buffer of
// each rank is cut into *cells* at every slice boundary any op of that rank uses (plus 0 and
// the buffer's end), so every slice is exactly a run of whole cells and the checks can work
// per cell instead of per element: a bcast of 10^6 elements is one cell per rank.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "optcoll/model/collective.h"
#include "optcoll/schedule/schedule.h"
#include "optcoll/schedule/validate.h"

namespace optcoll::verify_detail {

using GlobalOp = std::uint32_t;
using CellId = std::uint32_t;  // a position in FlatSchedule::bound

// kSendSlices / kRecvSlices: a SendSlices / RecvSlices, whose src / dst is a list of cell
// ranges (FlatSchedule::slice_cells) rather than one.
enum class OpKind : std::uint8_t {
  kSend,
  kRecv,
  kRecvReduce,
  kCopy,
  kReduce,
  kSendSlices,
  kRecvSlices
};

inline bool is_send(OpKind kind) { return kind == OpKind::kSend || kind == OpKind::kSendSlices; }
inline bool is_communication(OpKind kind) {
  return kind != OpKind::kCopy && kind != OpKind::kReduce;
}

// The cells [first, first + n) of one buffer that tile a slice exactly; n = 0 for an empty
// slice or an op without that operand.
struct CellRange {
  CellId first = 0;
  std::uint32_t n = 0;
};

// What an op does, in one record: the symbolic executor reads it for a message's other half,
// on another rank, where each array of its own cost a cache miss.
struct FlatOp {
  // Send, Copy, Reduce; for a SendSlices, positions [src.first, src.first + src.n) of
  // FlatSchedule::slice_cells (its slices' cell ranges, in order).
  CellRange src;
  // Recv, RecvReduce, Copy, Reduce; for a RecvSlices, as src for a SendSlices.
  CellRange dst;
  OpKind kind = OpKind::kSend;
  Side side = Side::kLeft;  // reductions: where the incoming (or src) operand goes
};

struct FlatSchedule {
  Rank nranks = 0;
  std::vector<GlobalOp> op_base;  // p + 1 entries

  // Per op. The partners stay an array of their own: the event order reads them rank by
  // rank, 16 to a cache line.
  std::vector<FlatOp> ops;
  std::vector<GlobalOp> partner;  // other half of a message; kNoPartner for local ops

  // `after` edges (deps) and their reverse (succs), as compressed rows over global ops.
  std::vector<std::uint32_t> dep_start;  // N + 1
  std::vector<GlobalOp> deps;
  std::vector<std::uint32_t> succ_start;  // N + 1
  std::vector<GlobalOp> succs;

  // Cells. Each (rank, buffer) owns positions [cell_base[3r + b], cell_base[3r + b + 1]) of
  // `bound`; position c (except the last of each owner, a sentinel) is a cell covering
  // elements [bound[c], bound[c + 1]).
  std::vector<Count> bound;
  std::vector<CellId> cell_base;  // 3p + 1 entries
  // The cell ranges of the SendSlices' and RecvSlices' slices (see FlatOp), empty ones kept.
  std::vector<CellRange> slice_cells;

  std::size_t op_count() const { return ops.size(); }
  Rank rank_of(GlobalOp op) const;  // binary search over op_base
  OpId local_of(GlobalOp op) const { return static_cast<OpId>(op - op_base[rank_of(op)]); }
  CellId cells_begin(Rank r, Buf buf) const {
    return cell_base[3 * static_cast<std::size_t>(r) + static_cast<std::size_t>(buf)];
  }
  CellId cells_end(Rank r, Buf buf) const {
    return cell_base[3 * static_cast<std::size_t>(r) + static_cast<std::size_t>(buf) + 1];
  }
  // The cell ranges op g reads (`src`) or writes (dst): one for the plain kinds, none for an
  // operand the op does not have, a SendSlices' or RecvSlices' list in order.
  std::span<const CellRange> src_ranges(GlobalOp g) const { return ranges(g, false); }
  std::span<const CellRange> dst_ranges(GlobalOp g) const { return ranges(g, true); }
  // The cell of rank r's buffer that contains `element` (which must lie inside the buffer).
  CellId cell_at(Rank r, Buf buf, Count element) const;

 private:
  std::span<const CellRange> ranges(GlobalOp g, bool dst) const {
    const FlatOp& op = ops[g];
    const CellRange& range = dst ? op.dst : op.src;
    const OpKind list = dst ? OpKind::kRecvSlices : OpKind::kSendSlices;
    if (op.kind == list)
      return std::span<const CellRange>(slice_cells).subspan(range.first, range.n);
    if (range.n == 0) return {};
    return {&range, 1};
  }
};

// Flattens a schedule that passed structure_issues() (slices in bounds, dependencies
// pointing backwards, every message matched). `partner` is match_messages_flat(schedule).
FlatSchedule flatten(const Schedule& schedule, const Layout& layout, std::vector<GlobalOp> partner);

// The buffer of rank r that a cell belongs to.
Buf buf_of_cell(const FlatSchedule& flat, Rank r, CellId cell);

}  // namespace optcoll::verify_detail
