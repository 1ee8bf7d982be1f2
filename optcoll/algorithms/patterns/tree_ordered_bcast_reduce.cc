// SPDX-License-Identifier: Apache-2.0
// File: the ordered tree broadcast and reduction emitters (tree_ordered_bcast_reduce.h).
#include "optcoll/algorithms/patterns/tree_ordered_bcast_reduce.h"

#include <algorithm>

#include "optcoll/algorithms/patterns/tree_emit_detail.h"
#include "optcoll/model/error.h"

namespace optcoll::algorithms::patterns {

using detail::chain;
using detail::subtree_spans;

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
  const std::vector<Rank> pre = tree.preorder();
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
