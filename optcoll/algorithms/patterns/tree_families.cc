// SPDX-License-Identifier: Apache-2.0
// File: tree geometry for the tree algorithm families.
#include "optcoll/algorithms/patterns/tree_families.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "optcoll/model/error.h"

namespace optcoll::algorithms::patterns {
namespace {

TreeShape empty_tree(Rank nranks, Rank root) {
  TreeShape tree;
  tree.root = root;
  tree.children.resize(static_cast<std::size_t>(nranks));
  return tree;
}

// Middle of [lo, hi] (inclusive); lo <= hi.
Rank middle(Rank lo, Rank hi) { return lo + (hi - lo) / 2; }

// Adds the in-order subtree of [lo, hi] below `parent` (nothing for an empty range).
void add_inorder(TreeShape& tree, Rank parent, Rank lo, Rank hi) {
  // Explicit stack of (parent, lo, hi): children are appended in the order left, right.
  struct Range {
    Rank parent, lo, hi;
  };
  std::vector<Range> stack{{parent, lo, hi}};
  while (!stack.empty()) {
    const Range range = stack.back();
    stack.pop_back();
    if (range.lo > range.hi) continue;
    const Rank m = middle(range.lo, range.hi);
    tree.children[static_cast<std::size_t>(range.parent)].push_back(m);
    // Push right first so that the left child is appended to m's list first.
    stack.push_back({m, m + 1, range.hi});
    stack.push_back({m, range.lo, m - 1});
  }
}

}  // namespace

TreeShape heap_binary_tree(Rank nranks, Rank root, ChildOrder order) {
  TreeShape tree = empty_tree(nranks, root);
  for (Rank v = 0; v < nranks; ++v) {
    auto& kids = tree.children[static_cast<std::size_t>(to_real(v, root, nranks))];
    for (const Rank c : {2 * v + 1, 2 * v + 2}) {
      if (c < nranks) kids.push_back(to_real(c, root, nranks));
    }
    if (order == ChildOrder::kSmallestFirst) std::reverse(kids.begin(), kids.end());
  }
  return tree;
}

TreeShape inorder_binary_tree(Rank nranks, Rank root) {
  TreeShape tree = empty_tree(nranks, root);
  add_inorder(tree, root, 0, root - 1);
  add_inorder(tree, root, root + 1, nranks - 1);
  return tree;
}

TreeShape knomial_tree(Rank nranks, Rank root, Rank radix, ChildOrder order) {
  OPTCOLL_CHECK(radix >= 2, "k-nomial radix must be at least 2, got {}", radix);
  TreeShape tree = empty_tree(nranks, root);
  for (Rank v = 0; v < nranks; ++v) {
    auto& kids = tree.children[static_cast<std::size_t>(to_real(v, root, nranks))];
    // Digit positions below v's lowest non-zero digit: weights k^i with v % (k^(i+1)) == 0.
    std::vector<Rank> weights;
    for (std::int64_t w = 1; w < nranks; w *= radix) {
      if (v != 0 && v % (w * radix) != 0) break;
      weights.push_back(static_cast<Rank>(w));
    }
    if (order == ChildOrder::kLargestFirst) std::reverse(weights.begin(), weights.end());
    for (const Rank w : weights) {
      for (Rank j = 1; j < radix; ++j) {
        const std::int64_t c = v + static_cast<std::int64_t>(j) * w;
        if (c < nranks) kids.push_back(to_real(static_cast<Rank>(c), root, nranks));
      }
    }
  }
  return tree;
}

TreeShape virtual_chain(Rank nranks, Rank root) {
  TreeShape tree = empty_tree(nranks, root);
  for (Rank v = 0; v + 1 < nranks; ++v) {
    tree.children[static_cast<std::size_t>(to_real(v, root, nranks))].push_back(
        to_real(v + 1, root, nranks));
  }
  return tree;
}

TreeShape split_chain(Rank nranks, Rank root) {
  TreeShape tree = empty_tree(nranks, root);
  for (Rank r = root; r > 0; --r) tree.children[static_cast<std::size_t>(r)].push_back(r - 1);
  for (Rank r = root; r + 1 < nranks; ++r) {
    tree.children[static_cast<std::size_t>(r)].push_back(r + 1);
  }
  return tree;
}

std::array<TreeShape, 2> double_binary_trees(Rank nranks, Rank root) {
  const Rank q = nranks - 1;
  // position(tree, y): the position x that tree node y stands for.
  auto position = [q](int t, Rank y) -> Rank {
    if (t == 0) return y;
    return q % 2 == 0 ? q + 1 - y : y % q + 1;
  };
  std::array<TreeShape, 2> trees{empty_tree(nranks, root), empty_tree(nranks, root)};
  if (q == 0) return trees;
  Rank top = 1;
  while (top * 2 <= q) top *= 2;
  for (int t = 0; t < 2; ++t) {
    auto rank_of = [&](Rank y) { return (root + position(t, y)) % nranks; };
    trees[static_cast<std::size_t>(t)].children[static_cast<std::size_t>(root)].push_back(
        rank_of(top));
    for (Rank y = 1; y <= q; ++y) {
      const Rank h = y & -y;
      if (h == 1) continue;
      auto& kids =
          trees[static_cast<std::size_t>(t)].children[static_cast<std::size_t>(rank_of(y))];
      kids.push_back(rank_of(y - h / 2));
      for (Rank s = h / 2; s >= 1; s /= 2) {
        if (y + s <= q) {
          kids.push_back(rank_of(y + s));
          break;
        }
      }
    }
  }
  return trees;
}

std::int64_t bcast_slots(const TreeShape& tree) {
  std::int64_t best = 0;
  std::vector<std::pair<Rank, std::int64_t>> stack{{tree.root, 0}};
  while (!stack.empty()) {
    const auto [node, slots] = stack.back();
    stack.pop_back();
    best = std::max(best, slots);
    const auto& kids = tree.children[static_cast<std::size_t>(node)];
    for (std::size_t i = 0; i < kids.size(); ++i) {
      stack.emplace_back(kids[i], slots + static_cast<std::int64_t>(i) + 1);
    }
  }
  return best;
}

std::int64_t reduce_slots(const TreeShape& tree) {
  // Children before parents: the pre-order backwards.
  const std::vector<Rank> order = tree.preorder();
  std::vector<std::int64_t> slots(tree.children.size(), 0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    std::int64_t t = 0;
    for (const Rank c : tree.children[static_cast<std::size_t>(*it)]) {
      t = std::max(t, slots[static_cast<std::size_t>(c)]) + 1;
    }
    slots[static_cast<std::size_t>(*it)] = t;
  }
  return slots[static_cast<std::size_t>(tree.root)];
}

std::int64_t max_fanout(const TreeShape& tree) {
  std::size_t best = 0;
  for (const auto& kids : tree.children) best = std::max(best, kids.size());
  return static_cast<std::int64_t>(best);
}

}  // namespace optcoll::algorithms::patterns
