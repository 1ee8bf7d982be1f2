// SPDX-License-Identifier: Apache-2.0
// File: private helpers of the tree emitters (tree_emit_detail.h).
#include "optcoll/algorithms/patterns/tree_emit_detail.h"

#include <algorithm>

#include "optcoll/model/error.h"

namespace optcoll::algorithms::patterns::detail {

std::vector<SubtreeSpan> subtree_spans(const TreeShape& tree, const std::vector<Rank>& pre,
                                       const std::vector<Rank>& key) {
  std::vector<SubtreeSpan> span(tree.children.size());
  for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
    const auto v = static_cast<std::size_t>(*it);
    span[v] = {key[v], key[v], 1};
    for (const Rank c : tree.children[v]) {
      const auto& s = span[static_cast<std::size_t>(c)];
      span[v].lo = std::min(span[v].lo, s.lo);
      span[v].hi = std::max(span[v].hi, s.hi);
      span[v].size += s.size;
    }
  }
  return span;
}

std::vector<SubtreeSpan> checked_position_spans(const TreeShape& tree, const std::vector<Rank>& pre,
                                                const std::vector<Rank>& positions) {
  auto spans = subtree_spans(tree, pre, positions);
  for (std::size_t v = 0; v < spans.size(); ++v) {
    OPTCOLL_CHECK(spans[v].hi - spans[v].lo + 1 == spans[v].size,
                  "subtree of rank {} is not a contiguous run of positions", v);
  }
  return spans;
}

std::pair<Count, Count> segment_bounds(Count count, int segments, int i) {
  const Count base = count / segments;
  const Count extra = count % segments;
  const Count first = i * base + std::min<Count>(i, extra);
  return {first, base + (i < extra ? 1 : 0)};
}

PositionLayout::PositionLayout(const Layout& layout, const std::vector<Rank>& positions) {
  const auto p = static_cast<std::size_t>(layout.nranks());
  OPTCOLL_CHECK(positions.size() == p, "positions hold {} entries for {} ranks", positions.size(),
                p);
  rank_at.assign(p, kNoRank);
  for (std::size_t r = 0; r < p; ++r) {
    const auto pos = positions[r];
    OPTCOLL_CHECK(pos >= 0 && static_cast<std::size_t>(pos) < p &&
                      rank_at[static_cast<std::size_t>(pos)] == kNoRank,
                  "positions are not a permutation of 0..{}", p - 1);
    rank_at[static_cast<std::size_t>(pos)] = static_cast<Rank>(r);
  }
  prefix.assign(p + 1, 0);
  for (std::size_t k = 0; k < p; ++k) prefix[k + 1] = prefix[k] + layout.block(rank_at[k]);
}

std::vector<int> gather_items(const TreeShape& tree, const std::vector<int>& copy_slot, Rank v) {
  const auto i = static_cast<std::size_t>(v);
  const int kids = static_cast<int>(tree.children[i].size());
  std::vector<int> items;
  const bool copies = v == tree.root || kids > 0;
  for (int c = 0; c <= kids; ++c) {
    if (copies && c == std::clamp(copy_slot[i], 0, kids)) items.push_back(-1);
    if (c < kids) items.push_back(c);
  }
  return items;
}

void chain(ScheduleBuilder& b, Rank v, OpId& last, OpId op) {
  if (op == kNoOp) return;
  b.add_dependency(v, last, op);
  last = op;
}

}  // namespace optcoll::algorithms::patterns::detail
