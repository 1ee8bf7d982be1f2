// SPDX-License-Identifier: Apache-2.0
// File: a pipelined tree reduction for models without compute/communication overlap.
#include "optcoll/algorithms/patterns/pipelined_reduce.h"

#include <algorithm>
#include <span>
#include <vector>

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree_emit.h"
#include "optcoll/model/error.h"

namespace optcoll::algorithms::patterns {

void emit_pipelined_reduce(ScheduleBuilder& b, const TreeShape& tree, Slice contribution,
                           Slice result, int segments, bool serialize_segments) {
  emit_pipelined_reduce(b, std::span<const TreeShape>(&tree, 1), contribution, result, segments,
                        serialize_segments);
}

void emit_pipelined_reduce(ScheduleBuilder& b, std::span<const TreeShape> trees, Slice contribution,
                           Slice result, int segments, bool serialize_segments) {
  OPTCOLL_CHECK(!trees.empty(), "no tree to reduce over");
  OPTCOLL_CHECK(segments >= 1, "segments must be positive, got {}", segments);
  OPTCOLL_CHECK(contribution.count == result.count, "reduce result and contribution differ");
  const auto p = static_cast<std::size_t>(b.nranks());
  const Rank root = trees[0].root;
  std::vector<std::vector<Rank>> pre;  // per tree
  std::vector<std::vector<Rank>> lo;   // per tree: lowest rank of each subtree
  std::vector<bool> inner(p, false);   // inner node of some tree (or the root)
  for (const auto& tree : trees) {
    check_tree(tree, b.nranks());
    OPTCOLL_CHECK(tree.root == root, "trees of one reduction have different roots");
    pre.push_back(tree.preorder());
    std::vector<Rank> low(p);
    for (auto it = pre.back().rbegin(); it != pre.back().rend(); ++it) {
      const auto v = static_cast<std::size_t>(*it);
      low[v] = *it;
      for (const Rank c : tree.children[v]) {
        low[v] = std::min(low[v], low[static_cast<std::size_t>(c)]);
      }
      if (!tree.children[v].empty() || *it == root) inner[v] = true;
    }
    lo.push_back(std::move(low));
  }
  // Every accumulator (result on the root, scratch on other inner ranks) starts as the
  // rank's own contribution, copied once before any segment (a per-segment copy would be a
  // computation waiting for the port between segments).
  std::vector<Slice> acc(p);
  for (std::size_t v = 0; v < p; ++v) {
    if (!inner[v]) continue;
    const auto r = static_cast<Rank>(v);
    acc[v] = r == root ? result : b.scratch(r, contribution.count);
    b.copy(r, contribution, acc[v]);
  }
  std::vector<OpId> last_reduce(p, kNoOp);  // per rank: its last reduction so far
  const Count base = contribution.count / segments;
  const Count extra = contribution.count % segments;
  Count first = 0;
  for (int s = 0; s < segments; ++s) {
    const Count len = base + (s < extra ? 1 : 0);
    const auto k = static_cast<std::size_t>(s) % trees.size();
    const TreeShape& tree = trees[k];
    // What rank v sends up this tree: its accumulator if it is inner here, else its input.
    auto partial = [&](std::size_t v) { return tree.children[v].empty() ? contribution : acc[v]; };
    for (auto it = pre[k].rbegin(); it != pre[k].rend(); ++it) {  // post-order
      const Rank v = *it;
      const auto i = static_cast<std::size_t>(v);
      const OpId previous = last_reduce[i];
      Rank combined_lo = v;
      for (const Rank c : tree.children[i]) {
        const auto ci = static_cast<std::size_t>(c);
        const Side side = lo[k][ci] < combined_lo ? Side::kLeft : Side::kRight;
        const auto t =
            b.transfer_reduce(c, v, sub(partial(ci), first, len), sub(acc[i], first, len), side);
        // Why: without overlap a rank must finish reducing segment s before it starts
        // receiving segment s+1, or the (earlier-ready) transfer delays that reduction.
        if (serialize_segments && previous != kNoOp && t.recv != kNoOp) {
          b.add_dependency(v, previous, t.recv);
        }
        if (t.recv != kNoOp) last_reduce[i] = t.recv;
        combined_lo = std::min(combined_lo, lo[k][ci]);
      }
    }
    first += len;
  }
}

}  // namespace optcoll::algorithms::patterns
