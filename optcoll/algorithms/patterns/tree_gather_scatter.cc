// SPDX-License-Identifier: Apache-2.0
// File: the plain tree gather and scatter emitters (tree_gather_scatter.h).
#include "optcoll/algorithms/patterns/tree_gather_scatter.h"

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree_emit_detail.h"
#include "optcoll/model/error.h"

namespace optcoll::algorithms::patterns {

using detail::checked_position_spans;
using detail::for_each_rank_run;
using detail::PositionLayout;

void emit_tree_gather(ScheduleBuilder& b, const TreeShape& tree, const std::vector<Rank>& positions,
                      Slice root_dest) {
  const Layout& layout = b.layout();
  check_tree(tree, layout.nranks());
  OPTCOLL_CHECK(root_dest.count == layout.total(), "gather destination holds {} of {} elements",
                root_dest.count, layout.total());
  const std::vector<Rank> pre = tree.preorder();
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
  const std::vector<Rank> pre = tree.preorder();
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

}  // namespace optcoll::algorithms::patterns
