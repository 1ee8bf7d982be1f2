// SPDX-License-Identifier: Apache-2.0
// File: the positioned gather and scatter emitters (tree_positioned_gather_scatter.h).
#include "optcoll/algorithms/patterns/tree_positioned_gather_scatter.h"

#include <algorithm>

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree_emit_detail.h"
#include "optcoll/model/error.h"

namespace optcoll::algorithms::patterns {

using detail::chain;
using detail::checked_position_spans;
using detail::gather_items;
using detail::PositionLayout;
using detail::SubtreeSpan;

namespace {

// What the positioned emitters share: spans by position, the position layout, and per child
// of the root the runs its segment forms in the root's buffer.
struct Positioned {
  std::vector<Rank> pre;
  std::vector<SubtreeSpan> spans;
  PositionLayout pl;

  Positioned(const ScheduleBuilder& b, const TreeShape& tree, const std::vector<int>& copy_slot,
             const std::vector<Rank>& positions)
      : pre(tree.preorder()),
        spans(checked_position_spans(tree, pre, positions)),
        pl(b.layout(), positions) {
    OPTCOLL_CHECK(copy_slot.size() == tree.children.size(), "copy_slot has {} entries",
                  copy_slot.size());
  }
  std::vector<Rank> members(Rank c) const {
    const auto& s = spans[static_cast<std::size_t>(c)];
    return {pl.rank_at.begin() + s.lo, pl.rank_at.begin() + s.hi + 1};
  }
  // Calls fn(offset in the segment, rank of the run's first block, elements) for each run of
  // c's blocks that are consecutive in the rank-ordered buffer (empty blocks skipped).
  template <typename Fn>
  void for_each_run(const Layout& layout, Rank c, Fn fn) const {
    Count seg = 0;
    Count run_seg = 0;
    Rank run_first = kNoRank;
    Count run_len = 0;
    for (const Rank r : members(c)) {
      const Count len = layout.block(r);
      if (len == 0) continue;
      if (run_first != kNoRank && layout.displ(run_first) + run_len == layout.displ(r)) {
        run_len += len;
      } else {
        if (run_first != kNoRank) fn(run_seg, run_first, run_len);
        run_first = r;
        run_seg = seg;
        run_len = len;
      }
      seg += len;
    }
    if (run_first != kNoRank) fn(run_seg, run_first, run_len);
  }
  // The slices of `buffer` (the root's, in rank order) that c's segment fills, in segment
  // order: one per run of consecutive ranks.
  std::vector<Slice> runs(const Layout& layout, Rank c, Slice buffer) const {
    std::vector<Slice> slices;
    for_each_run(layout, c, [&](Count, Rank first, Count len) {
      slices.push_back(sub(buffer, layout.displ(first), len));
    });
    return slices;
  }
};

}  // namespace

void emit_positioned_gather(ScheduleBuilder& b, const TreeShape& tree,
                            const std::vector<int>& copy_slot, const std::vector<Rank>& positions,
                            Slice root_dest) {
  const Layout& layout = b.layout();
  check_tree(tree, layout.nranks());
  OPTCOLL_CHECK(root_dest.count == layout.total(), "gather destination holds {} of {} elements",
                root_dest.count, layout.total());
  const Positioned pos(b, tree, copy_slot, positions);
  // data[v]: v's subtree in position order (its input block for a leaf, scratch otherwise).
  std::vector<Slice> data(tree.children.size());
  for (auto it = pos.pre.rbegin(); it != pos.pre.rend(); ++it) {
    const Rank v = *it;
    const auto i = static_cast<std::size_t>(v);
    const Slice own{Buf::kInput, 0, layout.block(v)};
    if (v != tree.root && tree.children[i].empty()) {
      data[i] = own;
      continue;
    }
    const bool root = v == tree.root;
    const auto& vs = pos.spans[i];
    const Slice area = root ? root_dest : b.scratch(v, pos.pl.elements(vs.lo, vs.hi));
    data[i] = area;
    OpId last = kNoOp;
    for (const int item : gather_items(tree, copy_slot, v)) {
      if (item < 0) {
        const Slice to = root ? block_at(layout, root_dest, v)
                              : sub(area, pos.pl.offset(vs.lo, positions[i]), layout.block(v));
        chain(b, v, last, b.copy(v, own, to));
        continue;
      }
      const Rank c = tree.children[i][static_cast<std::size_t>(item)];
      const auto& cs = pos.spans[static_cast<std::size_t>(c)];
      const Slice from = data[static_cast<std::size_t>(c)];
      if (!root) {
        chain(b, v, last,
              b.transfer(c, v, from, sub(area, pos.pl.offset(vs.lo, cs.lo), from.count)).recv);
      } else {
        // One message straight into place: a plain receive when the segment is one slice of
        // the root's buffer, else a RecvSlices over its runs of consecutive ranks.
        chain(b, v, last, b.transfer_into_slices(c, v, from, pos.runs(layout, c, root_dest)).recv);
      }
    }
  }
}

void emit_positioned_scatter(ScheduleBuilder& b, const TreeShape& tree,
                             const std::vector<int>& copy_slot, const std::vector<Rank>& positions,
                             Slice root_source) {
  const Layout& layout = b.layout();
  check_tree(tree, layout.nranks());
  OPTCOLL_CHECK(root_source.count == layout.total(), "scatter source holds {} of {} elements",
                root_source.count, layout.total());
  const Positioned pos(b, tree, copy_slot, positions);
  // data[v]: where v holds its subtree's segment in position order (root: root_source in rank
  // order; scratch or its output otherwise).
  std::vector<Slice> data(tree.children.size());
  data[static_cast<std::size_t>(tree.root)] = root_source;
  for (const Rank v : pos.pre) {
    const auto i = static_cast<std::size_t>(v);
    if (v != tree.root && tree.children[i].empty()) continue;
    const bool root = v == tree.root;
    const auto& vs = pos.spans[i];
    const Slice area = data[i];
    OpId last = kNoOp;
    auto items = gather_items(tree, copy_slot, v);
    std::reverse(items.begin(), items.end());
    for (const int item : items) {
      const Slice own_out{Buf::kOutput, 0, layout.block(v)};
      if (item < 0) {
        const Slice from = root ? block_at(layout, root_source, v)
                                : sub(area, pos.pl.offset(vs.lo, positions[i]), layout.block(v));
        chain(b, v, last, b.copy(v, from, own_out));
        continue;
      }
      const Rank c = tree.children[i][static_cast<std::size_t>(item)];
      const auto ci = static_cast<std::size_t>(c);
      const auto& cs = pos.spans[ci];
      const Count len = pos.pl.elements(cs.lo, cs.hi);
      data[ci] = tree.children[ci].empty() ? Slice{Buf::kOutput, 0, len} : b.scratch(c, len);
      if (!root) {
        chain(b, v, last,
              b.transfer(v, c, sub(area, pos.pl.offset(vs.lo, cs.lo), len), data[ci]).send);
      } else {
        // One message straight from place: a plain send when the segment is one slice of the
        // root's buffer, else a SendSlices of its runs of consecutive ranks.
        chain(b, v, last,
              b.transfer_from_slices(v, c, pos.runs(layout, c, root_source), data[ci]).send);
      }
    }
  }
}

}  // namespace optcoll::algorithms::patterns
