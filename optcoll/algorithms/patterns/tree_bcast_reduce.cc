// SPDX-License-Identifier: Apache-2.0
// File: the plain tree broadcast and reduction emitters (tree_bcast_reduce.h).
#include "optcoll/algorithms/patterns/tree_bcast_reduce.h"

#include <algorithm>

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree_emit_detail.h"
#include "optcoll/model/error.h"

namespace optcoll::algorithms::patterns {

using detail::segment_bounds;
using detail::subtree_spans;

void emit_tree_bcast(ScheduleBuilder& b, const TreeShape& tree, Slice data, int segments) {
  check_tree(tree, b.nranks());
  OPTCOLL_CHECK(segments >= 1, "segments must be positive, got {}", segments);
  const std::vector<Rank> pre = tree.preorder();
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
  const std::vector<Rank> pre = tree.preorder();
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

}  // namespace optcoll::algorithms::patterns
