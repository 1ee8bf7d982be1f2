// SPDX-License-Identifier: Apache-2.0
// File: tree geometry.
#include "optcoll/algorithms/patterns/tree.h"

#include <algorithm>

namespace optcoll::algorithms::patterns {

TreeShape binomial_tree(Rank nranks, Rank root, ChildOrder order) {
  TreeShape tree;
  tree.root = root;
  tree.children.resize(static_cast<std::size_t>(nranks));
  for (Rank v = 0; v < nranks; ++v) {
    auto& kids = tree.children[static_cast<std::size_t>(to_real(v, root, nranks))];
    const Rank lowbit = v == 0 ? (Rank{1} << 30) : (v & -v);
    for (Rank step = 1; step < lowbit && v + step < nranks; step <<= 1) {
      kids.push_back(to_real(v + step, root, nranks));
    }
    if (order == ChildOrder::kLargestFirst) std::reverse(kids.begin(), kids.end());
  }
  return tree;
}

TreeShape flat_tree(Rank nranks, Rank root) {
  TreeShape tree;
  tree.root = root;
  tree.children.resize(static_cast<std::size_t>(nranks));
  for (Rank r = 0; r < nranks; ++r) {
    if (r != root) tree.children[static_cast<std::size_t>(root)].push_back(r);
  }
  return tree;
}

TreeShape largest_first_flat_tree(const std::vector<Count>& blocks, Rank root) {
  TreeShape tree = flat_tree(static_cast<Rank>(blocks.size()), root);
  auto& children = tree.children[static_cast<std::size_t>(root)];
  std::stable_sort(children.begin(), children.end(), [&](Rank a, Rank b) {
    return blocks[static_cast<std::size_t>(a)] > blocks[static_cast<std::size_t>(b)];
  });
  return tree;
}

TreeShape outward_flat_tree(Rank nranks, Rank root) {
  TreeShape tree;
  tree.root = root;
  tree.children.resize(static_cast<std::size_t>(nranks));
  auto& kids = tree.children[static_cast<std::size_t>(root)];
  for (Rank q = root - 1; q >= 0; --q) kids.push_back(q);
  for (Rank q = root + 1; q < nranks; ++q) kids.push_back(q);
  return tree;
}

int tree_height(const TreeShape& tree) {
  // Iterative DFS from the root.
  int height = 0;
  std::vector<std::pair<Rank, int>> stack{{tree.root, 0}};
  while (!stack.empty()) {
    const auto [node, depth] = stack.back();
    stack.pop_back();
    height = std::max(height, depth);
    for (const Rank child : tree.children[static_cast<std::size_t>(node)]) {
      stack.emplace_back(child, depth + 1);
    }
  }
  return height;
}

}  // namespace optcoll::algorithms::patterns
