// SPDX-License-Identifier: Apache-2.0
// File: a pipelined tree reduction for models without compute/communication overlap.
#include "optcoll/algorithms/patterns/pipelined_reduce.h"

#include <algorithm>
#include <vector>

#include "optcoll/algorithms/patterns/slices.h"
#include "optcoll/algorithms/patterns/tree_schedule.h"
#include "optcoll/model/error.h"

namespace optcoll::algorithms::patterns {
namespace {

std::vector<Rank> preorder(const TreeShape& tree) {
  std::vector<Rank> order;
  std::vector<Rank> stack{tree.root};
  while (!stack.empty()) {
    const Rank node = stack.back();
    stack.pop_back();
    order.push_back(node);
    const auto& kids = tree.children[static_cast<std::size_t>(node)];
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back(*it);
  }
  return order;
}

}  // namespace

void emit_pipelined_reduce(ScheduleBuilder& b, const TreeShape& tree, Slice contribution,
                           Slice result, int segments, bool serialize_segments) {
  check_tree(tree, b.nranks());
  OPTCOLL_CHECK(segments >= 1, "segments must be positive, got {}", segments);
  OPTCOLL_CHECK(contribution.count == result.count, "reduce result and contribution differ");
  const auto p = static_cast<std::size_t>(b.nranks());
  const auto pre = preorder(tree);
  std::vector<Rank> lo(p);  // lowest rank of each subtree
  for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
    const auto v = static_cast<std::size_t>(*it);
    lo[v] = *it;
    for (const Rank c : tree.children[v]) lo[v] = std::min(lo[v], lo[static_cast<std::size_t>(c)]);
  }
  std::vector<Slice> partial(p);  // result on the root, scratch on inner ranks, input on leaves
  for (const Rank v : pre) {
    const auto i = static_cast<std::size_t>(v);
    partial[i] = v == tree.root             ? result
                 : tree.children[i].empty() ? contribution
                                            : b.scratch(v, contribution.count);
  }
  // Every accumulator starts as the rank's own contribution, copied once before any segment
  // (a per-segment copy would be a computation waiting for the port between segments).
  for (const Rank v : pre) {
    const auto i = static_cast<std::size_t>(v);
    if (v == tree.root || !tree.children[i].empty()) b.copy(v, contribution, partial[i]);
  }
  std::vector<OpId> last_reduce(p, kNoOp);  // per rank: its last reduction so far
  const Count base = contribution.count / segments;
  const Count extra = contribution.count % segments;
  Count first = 0;
  for (int s = 0; s < segments; ++s) {
    const Count len = base + (s < extra ? 1 : 0);
    for (auto it = pre.rbegin(); it != pre.rend(); ++it) {  // post-order
      const Rank v = *it;
      const auto i = static_cast<std::size_t>(v);
      const Slice acc = sub(partial[i], first, len);
      const OpId previous = last_reduce[i];
      Rank combined_lo = v;
      for (const Rank c : tree.children[i]) {
        const auto ci = static_cast<std::size_t>(c);
        const Side side = lo[ci] < combined_lo ? Side::kLeft : Side::kRight;
        const auto t = b.transfer_reduce(c, v, sub(partial[ci], first, len), acc, side);
        // Why: without overlap a rank must finish reducing segment s before it starts
        // receiving segment s+1, or the (earlier-ready) transfer delays that reduction.
        if (serialize_segments && previous != kNoOp && t.recv != kNoOp) {
          b.add_dependency(v, previous, t.recv);
        }
        if (t.recv != kNoOp) last_reduce[i] = t.recv;
        combined_lo = std::min(combined_lo, lo[ci]);
      }
    }
    first += len;
  }
}

}  // namespace optcoll::algorithms::patterns
