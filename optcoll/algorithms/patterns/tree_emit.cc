// SPDX-License-Identifier: Apache-2.0
// File: the tree check and the position orders every tree emitter shares (tree_emit.h).
#include "optcoll/algorithms/patterns/tree_emit.h"

#include "optcoll/model/error.h"

namespace optcoll::algorithms::patterns {

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

}  // namespace optcoll::algorithms::patterns
