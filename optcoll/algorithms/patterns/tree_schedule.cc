// SPDX-License-Identifier: Apache-2.0
// File: tree -> schedule emitters shared by every tree algorithm.
#include "optcoll/algorithms/patterns/tree_schedule.h"

#include <algorithm>

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/model/error.h"

namespace optcoll::algorithms::patterns {
namespace {

using Order = std::vector<Rank>;

// Per node: the smallest and largest position (or rank) in its subtree, and its size.
struct SubtreeSpan {
  Rank lo = 0;
  Rank hi = 0;
  Rank size = 0;
};

std::vector<SubtreeSpan> subtree_spans(const TreeShape& tree, const Order& pre,
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

// Splits `count` elements into `segments` nearly equal pieces: piece i is [first, first+len).
std::pair<Count, Count> segment_bounds(Count count, int segments, int i) {
  const Count base = count / segments;
  const Count extra = count % segments;
  const Count first = i * base + std::min<Count>(i, extra);
  return {first, base + (i < extra ? 1 : 0)};
}

// Block layout in position order: prefix[k] = total size of the blocks at positions < k.
struct PositionLayout {
  std::vector<Rank> rank_at;  // inverse of positions
  std::vector<Count> prefix;  // p + 1 entries
  PositionLayout(const Layout& layout, const std::vector<Rank>& positions) {
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

std::vector<SubtreeSpan> checked_position_spans(const TreeShape& tree, const Order& pre,
                                                const std::vector<Rank>& positions) {
  auto spans = subtree_spans(tree, pre, positions);
  for (std::size_t v = 0; v < spans.size(); ++v) {
    OPTCOLL_CHECK(spans[v].hi - spans[v].lo + 1 == spans[v].size,
                  "subtree of rank {} is not a contiguous run of positions", v);
  }
  return spans;
}

}  // namespace

std::vector<Rank> virtual_positions(Rank nranks, Rank root) {
  std::vector<Rank> positions(static_cast<std::size_t>(nranks));
  for (Rank r = 0; r < nranks; ++r)
    positions[static_cast<std::size_t>(r)] = (r - root + nranks) % nranks;
  return positions;
}

std::vector<Rank> rank_positions(Rank nranks) {
  std::vector<Rank> positions(static_cast<std::size_t>(nranks));
  for (Rank r = 0; r < nranks; ++r) positions[static_cast<std::size_t>(r)] = r;
  return positions;
}

void check_tree(const TreeShape& tree, Rank nranks) {
  const auto p = static_cast<std::size_t>(nranks);
  OPTCOLL_CHECK(tree.children.size() == p, "tree has {} nodes for {} ranks", tree.children.size(),
                p);
  OPTCOLL_CHECK(tree.root >= 0 && tree.root < nranks, "tree root {} out of range", tree.root);
  std::vector<int> parents(p, 0);
  for (const auto& kids : tree.children) {
    for (const Rank c : kids) {
      OPTCOLL_CHECK(c >= 0 && c < nranks && c != tree.root, "tree child {} invalid", c);
      ++parents[static_cast<std::size_t>(c)];
    }
  }
  for (std::size_t r = 0; r < p; ++r) {
    if (static_cast<Rank>(r) != tree.root) {
      OPTCOLL_CHECK(parents[r] == 1, "rank {} has {} parents in the tree", r, parents[r]);
    }
  }
  OPTCOLL_CHECK(tree.preorder().size() == p, "tree does not reach every rank from the root");
}

void emit_tree_bcast(ScheduleBuilder& b, const TreeShape& tree, Slice data, int segments) {
  check_tree(tree, b.nranks());
  OPTCOLL_CHECK(segments >= 1, "segments must be positive, got {}", segments);
  const Order pre = tree.preorder();
  for (int s = 0; s < segments; ++s) {
    const auto [first, len] = segment_bounds(data.count, segments, s);
    const Slice piece = sub(data, first, len);
    for (const Rank v : pre) {
      for (const Rank c : tree.children[static_cast<std::size_t>(v)])
        b.transfer(v, c, piece, piece);
    }
  }
}

void emit_tree_reduce(ScheduleBuilder& b, const TreeShape& tree, Slice contribution, Slice result,
                      int segments) {
  check_tree(tree, b.nranks());
  OPTCOLL_CHECK(segments >= 1, "segments must be positive, got {}", segments);
  OPTCOLL_CHECK(contribution.count == result.count, "reduce result and contribution differ");
  const Order pre = tree.preorder();
  const auto ranks = rank_positions(b.nranks());
  const auto spans = subtree_spans(tree, pre, ranks);  // real-rank ranges
  // Where each rank accumulates its subtree's partial: result on the root, scratch on inner
  // ranks, nothing on leaves (they send their contribution as it is).
  std::vector<Slice> partial(tree.children.size());
  for (const Rank v : pre) {
    const auto i = static_cast<std::size_t>(v);
    if (v == tree.root) {
      partial[i] = result;
    } else if (!tree.children[i].empty()) {
      partial[i] = b.scratch(v, contribution.count);
    } else {
      partial[i] = contribution;
    }
  }
  for (int s = 0; s < segments; ++s) {
    const auto [first, len] = segment_bounds(contribution.count, segments, s);
    // Post-order: children's partials are complete before their parents combine them.
    for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
      const Rank v = *it;
      const auto i = static_cast<std::size_t>(v);
      const auto& kids = tree.children[i];
      if (kids.empty() && v != tree.root) continue;
      const Slice acc = sub(partial[i], first, len);
      b.copy(v, sub(contribution, first, len), acc);
      Rank lo = v;  // lowest rank combined so far
      for (const Rank c : kids) {
        // Incoming on the left when the child's ranks precede everything combined so far.
        // (A child that straddles the range is only valid for commutative operators; the
        // verifier rejects it otherwise.)
        const auto& cs = spans[static_cast<std::size_t>(c)];
        const Side side = cs.hi < lo ? Side::kLeft : Side::kRight;
        b.transfer_reduce(c, v, sub(partial[static_cast<std::size_t>(c)], first, len), acc, side);
        lo = std::min(lo, cs.lo);
      }
    }
  }
}

void emit_tree_gather(ScheduleBuilder& b, const TreeShape& tree, const std::vector<Rank>& positions,
                      Slice root_dest) {
  const Layout& layout = b.layout();
  check_tree(tree, layout.nranks());
  OPTCOLL_CHECK(root_dest.count == layout.total(), "gather destination holds {} of {} elements",
                root_dest.count, layout.total());
  const Order pre = tree.preorder();
  const auto spans = checked_position_spans(tree, pre, positions);
  const PositionLayout pl(layout, positions);
  // data[v]: v's subtree in position order (its input block for a leaf, scratch otherwise).
  std::vector<Slice> data(tree.children.size());
  for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
    const Rank v = *it;
    const auto i = static_cast<std::size_t>(v);
    const Slice own{Buf::kInput, 0, layout.block(v)};
    if (v == tree.root) {
      b.copy(v, own, block_at(layout, root_dest, v));
      for (const Rank c : tree.children[i]) {
        const auto& cs = spans[static_cast<std::size_t>(c)];
        const Slice from = data[static_cast<std::size_t>(c)];
        for_each_rank_run(pl, cs.lo, cs.hi, [&](Rank k1, Rank k2) {
          const Rank first_rank = pl.rank_at[static_cast<std::size_t>(k1)];
          const Count offset = pl.offset(cs.lo, k1);
          const Count len = pl.elements(k1, k2);
          b.transfer(c, v, sub(from, offset, len), sub(root_dest, layout.displ(first_rank), len));
        });
      }
      continue;
    }
    if (tree.children[i].empty()) {
      data[i] = own;
      continue;
    }
    const auto& vs = spans[i];
    const Slice area = b.scratch(v, pl.elements(vs.lo, vs.hi));
    data[i] = area;
    b.copy(v, own, sub(area, pl.offset(vs.lo, positions[i]), layout.block(v)));
    for (const Rank c : tree.children[i]) {
      const auto& cs = spans[static_cast<std::size_t>(c)];
      b.transfer(c, v, data[static_cast<std::size_t>(c)],
                 sub(area, pl.offset(vs.lo, cs.lo), pl.elements(cs.lo, cs.hi)));
    }
  }
}

void emit_tree_scatter(ScheduleBuilder& b, const TreeShape& tree,
                       const std::vector<Rank>& positions, Slice root_source) {
  const Layout& layout = b.layout();
  check_tree(tree, layout.nranks());
  OPTCOLL_CHECK(root_source.count == layout.total(), "scatter source holds {} of {} elements",
                root_source.count, layout.total());
  const Order pre = tree.preorder();
  const auto spans = checked_position_spans(tree, pre, positions);
  const PositionLayout pl(layout, positions);
  // data[v]: where v receives its subtree (its output block for a leaf, scratch otherwise).
  std::vector<Slice> data(tree.children.size());
  for (const Rank v : pre) {
    const auto i = static_cast<std::size_t>(v);
    const Slice own_out{Buf::kOutput, 0, layout.block(v)};
    auto landing = [&](Rank c) {
      const auto ci = static_cast<std::size_t>(c);
      data[ci] = tree.children[ci].empty() ? Slice{Buf::kOutput, 0, layout.block(c)}
                                           : b.scratch(c, pl.elements(spans[ci].lo, spans[ci].hi));
      return data[ci];
    };
    if (v == tree.root) {
      for (const Rank c : tree.children[i]) {
        const auto& cs = spans[static_cast<std::size_t>(c)];
        const Slice to = landing(c);
        for_each_rank_run(pl, cs.lo, cs.hi, [&](Rank k1, Rank k2) {
          const Rank first_rank = pl.rank_at[static_cast<std::size_t>(k1)];
          const Count offset = pl.offset(cs.lo, k1);
          const Count len = pl.elements(k1, k2);
          b.transfer(v, c, sub(root_source, layout.displ(first_rank), len), sub(to, offset, len));
        });
      }
      b.copy(v, block_at(layout, root_source, v), own_out);
      continue;
    }
    if (tree.children[i].empty()) continue;  // received straight into its output
    const auto& vs = spans[i];
    const Slice area = data[i];
    for (const Rank c : tree.children[i]) {
      const auto& cs = spans[static_cast<std::size_t>(c)];
      b.transfer(v, c, sub(area, pl.offset(vs.lo, cs.lo), pl.elements(cs.lo, cs.hi)), landing(c));
    }
    b.copy(v, sub(area, pl.offset(vs.lo, positions[i]), layout.block(v)), own_out);
  }
}

namespace {

// A node's items in gather order: child indices, and -1 for the local copy.
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

// Chains `op` after `last` on rank v (the model's fixed item order, which no data hazard
// implies: the items write disjoint parts of v's segment).
void chain(ScheduleBuilder& b, Rank v, OpId& last, OpId op) {
  if (op == kNoOp) return;
  b.add_dependency(v, last, op);
  last = op;
}

}  // namespace

void emit_ordered_gather(ScheduleBuilder& b, const TreeShape& tree,
                         const std::vector<int>& copy_slot, Slice root_dest) {
  const Layout& layout = b.layout();
  check_tree(tree, layout.nranks());
  OPTCOLL_CHECK(copy_slot.size() == tree.children.size(), "copy_slot has {} entries",
                copy_slot.size());
  const Order pre = tree.preorder();
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
  const Order pre = tree.preorder();
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

namespace optcoll::algorithms::patterns {

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
  Order pre;
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

namespace optcoll::algorithms::patterns {

void emit_ordered_bcast(ScheduleBuilder& b, const TreeShape& tree, Slice data) {
  check_tree(tree, b.nranks());
  std::vector<OpId> received(tree.children.size(), kNoOp);
  for (const Rank v : tree.preorder()) {
    OpId last = received[static_cast<std::size_t>(v)];
    for (const Rank c : tree.children[static_cast<std::size_t>(v)]) {
      const auto t = b.transfer(v, c, data, data);
      chain(b, v, last, t.send);
      received[static_cast<std::size_t>(c)] = t.recv;
    }
  }
}

void emit_ordered_reduce(ScheduleBuilder& b, const TreeShape& tree, Slice contribution,
                         Slice result) {
  check_tree(tree, b.nranks());
  OPTCOLL_CHECK(contribution.count == result.count, "reduce result and contribution differ");
  const Order pre = tree.preorder();
  const auto spans = subtree_spans(tree, pre, rank_positions(b.nranks()));  // rank ranges
  // partial[v]: where v's subtree's partial ends (its contribution for a leaf).
  std::vector<Slice> partial(tree.children.size());
  for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
    const Rank v = *it;
    const auto i = static_cast<std::size_t>(v);
    const auto& kids = tree.children[i];
    if (kids.empty()) {
      partial[i] = v == tree.root ? result : contribution;
      if (v == tree.root) b.copy(v, contribution, result);
      continue;
    }
    const Slice acc = v == tree.root ? result : b.scratch(v, contribution.count);
    partial[i] = acc;
    OpId last = kNoOp;
    Rank lo = v;  // the lowest rank combined so far
    for (std::size_t k = 0; k < kids.size(); ++k) {
      const Rank c = kids[k];
      const auto& cs = spans[static_cast<std::size_t>(c)];
      const Slice from = partial[static_cast<std::size_t>(c)];
      if (k == 0) {
        // The first partial lands in the accumulator; v's own contribution joins it on the
        // side v lies (left of a child on its right, right of a child on its left).
        chain(b, v, last, b.transfer(c, v, from, acc).recv);
        chain(b, v, last, b.reduce(v, contribution, acc, cs.lo > v ? Side::kLeft : Side::kRight));
      } else {
        const Side side = cs.hi < lo ? Side::kLeft : Side::kRight;
        chain(b, v, last, b.transfer_reduce(c, v, from, acc, side).recv);
      }
      lo = std::min(lo, cs.lo);
    }
  }
}

}  // namespace optcoll::algorithms::patterns
