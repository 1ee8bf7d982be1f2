// SPDX-License-Identifier: Apache-2.0
// File: reading and writing runs of symbolic values over buffer cells.
#include "optcoll/verify/cell_store.h"

#include <algorithm>

#include "optcoll/model/error.h"

namespace optcoll::verify_detail {

void append_piece(std::vector<Piece>& pieces, const Piece& piece) {
  if (piece.length == 0) return;
  if (!pieces.empty()) {
    Piece& back = pieces.back();
    if (back.set == piece.set && (!is_set(piece.set) || back.index + back.length == piece.index)) {
      back.length += piece.length;
      return;
    }
  }
  pieces.push_back(piece);
}

CellStore::CellStore(const FlatSchedule& flat) : flat_(flat), cells_(flat.bound.size()) {}

void CellStore::set(CellId c, Count index, SetId set) {
  release(cells_[c]);
  cells_[c] = {is_set(set) ? index : 0, set};
}

void CellStore::read(CellRange range, std::vector<Piece>& out) const {
  for (CellId c = range.first; c < range.first + range.n; ++c) {
    const Cell& cell = cells_[c];
    if (cell.set != kMixed) {
      append_piece(out, {size(c), cell.index, cell.set});
      continue;
    }
    for (const Piece& piece : mixed_[static_cast<std::size_t>(cell.index)]) {
      append_piece(out, piece);
    }
  }
}

void CellStore::write(CellRange range, std::span<const Piece> pieces) {
  std::size_t next = 0;  // piece being consumed
  Count used = 0;        // elements of pieces[next] already placed
  for (CellId c = range.first; c < range.first + range.n; ++c) {
    Cell& cell = cells_[c];
    release(cell);
    Count need = size(c);
    OPTCOLL_CHECK(next < pieces.size(), "verify: write of too few elements");
    const Piece& piece = pieces[next];
    if (piece.length - used >= need) {  // the usual case: one run fills the cell
      cell = {piece.index_at(used), piece.set};
      used += need;
    } else {
      const std::uint32_t slot = allocate_mixed();
      auto& list = mixed_[slot];
      while (need > 0) {
        OPTCOLL_CHECK(next < pieces.size(), "verify: write of too few elements");
        const Piece& part = pieces[next];
        const Count take = std::min(need, part.length - used);
        append_piece(list, {take, part.index_at(used), part.set});
        used += take;
        need -= take;
        if (used == part.length) {
          ++next;
          used = 0;
        }
      }
      cell = {static_cast<Count>(slot), kMixed};
    }
    if (next < pieces.size() && used == pieces[next].length) {
      ++next;
      used = 0;
    }
  }
}

void CellStore::release(Cell& cell) {
  if (cell.set != kMixed) return;
  const auto slot = static_cast<std::uint32_t>(cell.index);
  mixed_[slot].clear();
  free_mixed_.push_back(slot);
  cell.set = kUndefined;
}

std::uint32_t CellStore::allocate_mixed() {
  if (!free_mixed_.empty()) {
    const std::uint32_t slot = free_mixed_.back();
    free_mixed_.pop_back();
    return slot;
  }
  mixed_.emplace_back();
  return static_cast<std::uint32_t>(mixed_.size() - 1);
}

}  // namespace optcoll::verify_detail
