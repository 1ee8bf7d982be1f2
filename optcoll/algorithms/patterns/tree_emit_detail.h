// SPDX-License-Identifier: Apache-2.0
// File: private helpers of the tree emitters (tree_*_*.cc), written once: subtree spans,
// segment bounds, the block layout in position order, and the per-node item order and
// chaining of the ordered (Träff Definition 2) emitters. Not for use outside those files.
#pragma once

#include <utility>
#include <vector>

#include "optcoll/schedule/builder.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll::algorithms::patterns::detail {

// Per node: the smallest and largest position (or rank) in its subtree, and its size.
struct SubtreeSpan {
  Rank lo = 0;
  Rank hi = 0;
  Rank size = 0;
};

// The spans of every subtree under `key` (positions, or the ranks themselves); `pre` is
// tree.preorder().
std::vector<SubtreeSpan> subtree_spans(const TreeShape& tree, const std::vector<Rank>& pre,
                                       const std::vector<Rank>& key);

// subtree_spans by `positions`, checking that every subtree is a contiguous run of them.
std::vector<SubtreeSpan> checked_position_spans(const TreeShape& tree, const std::vector<Rank>& pre,
                                                const std::vector<Rank>& positions);

// Splits `count` elements into `segments` nearly equal pieces: piece i is [first, first+len).
std::pair<Count, Count> segment_bounds(Count count, int segments, int i);

// Block layout in position order: prefix[k] = total size of the blocks at positions < k.
struct PositionLayout {
  std::vector<Rank> rank_at;  // inverse of positions
  std::vector<Count> prefix;  // p + 1 entries
  PositionLayout(const Layout& layout, const std::vector<Rank>& positions);
  // Elements of the blocks at positions lo..hi.
  Count elements(Rank lo, Rank hi) const {
    return prefix[static_cast<std::size_t>(hi) + 1] - prefix[static_cast<std::size_t>(lo)];
  }
  // Offset of position k's block in an area that starts with position `base`'s block.
  Count offset(Rank base, Rank k) const {
    return prefix[static_cast<std::size_t>(k)] - prefix[static_cast<std::size_t>(base)];
  }
};

// Runs of consecutive real ranks among positions lo..hi: calls fn(first_pos, last_pos).
template <typename Fn>
void for_each_rank_run(const PositionLayout& pl, Rank lo, Rank hi, Fn fn) {
  Rank start = lo;
  for (Rank k = lo; k <= hi; ++k) {
    const bool last = k == hi || pl.rank_at[static_cast<std::size_t>(k) + 1] !=
                                     pl.rank_at[static_cast<std::size_t>(k)] + 1;
    if (last) {
      fn(start, k);
      start = k + 1;
    }
  }
}

// A node's items in gather order (Träff's Definition 2): child indices, and -1 for the local
// copy, which comes after the first copy_slot[v] children (the root always copies; other
// leaves have no items).
std::vector<int> gather_items(const TreeShape& tree, const std::vector<int>& copy_slot, Rank v);

// Chains `op` after `last` on rank v (the model's fixed item order, which no data hazard
// implies: the items write disjoint parts of v's segment).
void chain(ScheduleBuilder& b, Rank v, OpId& last, OpId op);

}  // namespace optcoll::algorithms::patterns::detail
