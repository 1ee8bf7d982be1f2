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

std::vector<Rank> nonempty_index(const std::vector<bool>& nonempty) {
  std::vector<Rank> index(nonempty.size(), -1);
  Rank next = 0;
  for (std::size_t r = 0; r < nonempty.size(); ++r) {
    if (nonempty[r]) index[r] = next++;
  }
  return index;
}

bool lands_in_place(const std::vector<Rank>& members_by_position, const std::vector<Rank>& index) {
  Rank expected = -1;
  for (const Rank r : members_by_position) {
    const Rank k = index[static_cast<std::size_t>(r)];
    if (k < 0) continue;
    if (expected >= 0 && k != expected) return false;
    expected = k + 1;
  }
  return true;
}

namespace {

// What the positioned emitters share: spans by position, the position layout, and per child
// of the root whether its segment is one slice of the root's buffer.
struct Positioned {
  std::vector<Rank> pre;
  std::vector<SubtreeSpan> spans;
  PositionLayout pl;
  std::vector<Rank> index;  // nonempty_index of the layout's blocks

  Positioned(const ScheduleBuilder& b, const TreeShape& tree, const std::vector<int>& copy_slot,
             const std::vector<Rank>& positions)
      : pre(tree.preorder()),
        spans(checked_position_spans(tree, pre, positions)),
        pl(b.layout(), positions) {
    OPTCOLL_CHECK(copy_slot.size() == tree.children.size(), "copy_slot has {} entries",
                  copy_slot.size());
    std::vector<bool> nonempty;
    for (Rank r = 0; r < b.nranks(); ++r) nonempty.push_back(b.layout().block(r) > 0);
    index = nonempty_index(nonempty);
  }
  std::vector<Rank> members(Rank c) const {
    const auto& s = spans[static_cast<std::size_t>(c)];
    return {pl.rank_at.begin() + s.lo, pl.rank_at.begin() + s.hi + 1};
  }
  bool in_place(Rank c) const { return lands_in_place(members(c), index); }
  // The first member of c's subtree (position order) with a non-empty block, or kNoRank.
  Rank first_nonempty(Rank c) const {
    for (const Rank r : members(c)) {
      if (index[static_cast<std::size_t>(r)] >= 0) return r;
    }
    return kNoRank;
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
      } else if (pos.in_place(c)) {
        const Rank first = pos.first_nonempty(c);
        const Count at = first == kNoRank ? 0 : layout.displ(first);
        chain(b, v, last, b.transfer(c, v, from, sub(root_dest, at, from.count)).recv);
      } else {
        // One message into scratch, then every run of consecutive ranks copied into place.
        const Slice landing = b.scratch(v, from.count);
        chain(b, v, last, b.transfer(c, v, from, landing).recv);
        pos.for_each_run(layout, c, [&](Count offset, Rank first, Count len) {
          chain(b, v, last,
                b.copy(v, sub(landing, offset, len), sub(root_dest, layout.displ(first), len)));
        });
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
      } else if (pos.in_place(c)) {
        const Rank first = pos.first_nonempty(c);
        const Count at = first == kNoRank ? 0 : layout.displ(first);
        chain(b, v, last, b.transfer(v, c, sub(root_source, at, len), data[ci]).send);
      } else {
        // Every run of consecutive ranks copied out of place into scratch, then one message.
        const Slice staging = b.scratch(v, len);
        pos.for_each_run(layout, c, [&](Count offset, Rank first, Count run) {
          chain(b, v, last,
                b.copy(v, sub(root_source, layout.displ(first), run), sub(staging, offset, run)));
        });
        chain(b, v, last, b.transfer(v, c, staging, data[ci]).send);
      }
    }
  }
}

}  // namespace optcoll::algorithms::patterns
