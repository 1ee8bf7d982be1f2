// SPDX-License-Identifier: Apache-2.0
// File: the symbolic contents of every buffer cell during symbolic execution. A value is
// "element `index` of the combination of the inputs of the ranks in `set`"; consecutive
// elements with consecutive indices and the same set form a run (a Piece), so a cell is
// almost always one run and a message of 10^6 elements costs one entry.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "optcoll/verify/flat_schedule.h"
#include "optcoll/verify/rank_sets.h"

namespace optcoll::verify_detail {

// `length` elements holding indices index, index + 1, ... of the set `set`. For undefined
// and invalid pieces the index is 0.
struct Piece {
  Count length = 0;
  Count index = 0;
  SetId set = kUndefined;

  // The value of element k of the piece.
  Count index_at(Count k) const { return is_set(set) ? index + k : 0; }
};

// Appends a piece to a run list, merging it into the last one when it continues it.
void append_piece(std::vector<Piece>& pieces, const Piece& piece);

class CellStore {
 public:
  explicit CellStore(const FlatSchedule& flat);

  // Sets cell c to one run whose first element is `index`.
  void set(CellId c, Count index, SetId set);
  // Appends the runs of the cells in `range`, in order, merged where they continue.
  void read(CellRange range, std::vector<Piece>& out) const;
  // Overwrites the cells in `range` with `pieces` (whose lengths sum to the cells' size).
  void write(CellRange range, std::span<const Piece> pieces);

 private:
  struct Cell {
    Count index = 0;         // first element's index; for kMixed, the slot in mixed_
    SetId set = kUndefined;  // kMixed: the cell holds several runs, listed in mixed_
  };
  Count size(CellId c) const { return flat_.bound[c + 1] - flat_.bound[c]; }
  void release(Cell& cell);
  std::uint32_t allocate_mixed();

  const FlatSchedule& flat_;
  std::vector<Cell> cells_;
  std::vector<std::vector<Piece>> mixed_;
  std::vector<std::uint32_t> free_mixed_;
};

}  // namespace optcoll::verify_detail
