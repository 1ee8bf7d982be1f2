// SPDX-License-Identifier: Apache-2.0
// File: the ordered gather and scatter emitters (tree_ordered_gather_scatter.h).
#include "optcoll/algorithms/patterns/tree_ordered_gather_scatter.h"

#include <algorithm>

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree_emit_detail.h"
#include "optcoll/model/error.h"

namespace optcoll::algorithms::patterns {

using detail::chain;
using detail::checked_position_spans;
using detail::gather_items;

void emit_ordered_gather(ScheduleBuilder& b, const TreeShape& tree,
                         const std::vector<int>& copy_slot, Slice root_dest) {
  const Layout& layout = b.layout();
  check_tree(tree, layout.nranks());
  OPTCOLL_CHECK(copy_slot.size() == tree.children.size(), "copy_slot has {} entries",
                copy_slot.size());
  const std::vector<Rank> pre = tree.preorder();
  const auto ranks = rank_positions(layout.nranks());
  const auto spans = checked_position_spans(tree, pre, ranks);
  // data[v]: v's subtree segment (its input block for a leaf, scratch or root_dest otherwise).
  std::vector<Slice> data(tree.children.size());
  for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
    const Rank v = *it;
    const auto i = static_cast<std::size_t>(v);
    const Slice own{Buf::kInput, 0, layout.block(v)};
    if (v != tree.root && tree.children[i].empty()) {
      data[i] = own;
      continue;
    }
    const Rank lo = spans[i].lo;
    const Slice area = v == tree.root
                           ? root_dest
                           : b.scratch(v, layout.displ(spans[i].hi) + layout.block(spans[i].hi) -
                                              layout.displ(lo));
    data[i] = area;
    auto at = [&](Rank first, Count len) {
      const Count base = v == tree.root ? 0 : layout.displ(lo);
      return sub(area, layout.displ(first) - base, len);
    };
    OpId last = kNoOp;
    for (const int item : gather_items(tree, copy_slot, v)) {
      if (item < 0) {
        chain(b, v, last, b.copy(v, own, at(v, layout.block(v))));
        continue;
      }
      const Rank c = tree.children[i][static_cast<std::size_t>(item)];
      const Slice from = data[static_cast<std::size_t>(c)];
      chain(b, v, last,
            b.transfer(c, v, from, at(spans[static_cast<std::size_t>(c)].lo, from.count)).recv);
    }
  }
}

void emit_ordered_scatter(ScheduleBuilder& b, const TreeShape& tree,
                          const std::vector<int>& copy_slot, Slice root_source) {
  const Layout& layout = b.layout();
  check_tree(tree, layout.nranks());
  OPTCOLL_CHECK(copy_slot.size() == tree.children.size(), "copy_slot has {} entries",
                copy_slot.size());
  const std::vector<Rank> pre = tree.preorder();
  const auto ranks = rank_positions(layout.nranks());
  const auto spans = checked_position_spans(tree, pre, ranks);
  auto segment = [&](Rank v) {
    const auto& s = spans[static_cast<std::size_t>(v)];
    return layout.displ(s.hi) + layout.block(s.hi) - layout.displ(s.lo);
  };
  // data[v]: where v holds its subtree's segment (root_source, scratch or its output).
  std::vector<Slice> data(tree.children.size());
  data[static_cast<std::size_t>(tree.root)] = root_source;
  for (const Rank v : pre) {
    const auto i = static_cast<std::size_t>(v);
    if (v != tree.root && tree.children[i].empty()) continue;
    const Slice area = data[i];
    const Count base = v == tree.root ? 0 : layout.displ(spans[i].lo);
    OpId last = kNoOp;
    auto items = gather_items(tree, copy_slot, v);
    std::reverse(items.begin(), items.end());
    for (const int item : items) {
      if (item < 0) {
        const Slice own_out{Buf::kOutput, 0, layout.block(v)};
        chain(b, v, last, b.copy(v, sub(area, layout.displ(v) - base, layout.block(v)), own_out));
        continue;
      }
      const Rank c = tree.children[i][static_cast<std::size_t>(item)];
      const auto ci = static_cast<std::size_t>(c);
      const Count len = segment(c);
      data[ci] = tree.children[ci].empty() ? Slice{Buf::kOutput, 0, len} : b.scratch(c, len);
      chain(b, v, last,
            b.transfer(v, c, sub(area, layout.displ(spans[ci].lo) - base, len), data[ci]).send);
    }
  }
}

}  // namespace optcoll::algorithms::patterns
