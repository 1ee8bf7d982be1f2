// SPDX-License-Identifier: Apache-2.0
// File: the optimal strictly rank-ordered binary gather/scatter tree (Träff 2019, Figure 7,
// Theorem 3; spec §3.5). B[i][j] over ranks i..j, every node's items in rank order:
//   root i, one child  [i+1..j]:                  [copy, child]
//   root i, children   [i+1..k], [k+1..j]:        [copy, c1, c2]
//   root q (i<q<j),    [i..q-1], [q+1..j]:        [left, copy, right]
//   root j, one child  [i..j-1]:                  [child, copy]
//   root j, children   [i..k], [k+1..j-1]:        [c1, c2, copy]
// Ties: the smallest root index. A fixed root r only changes the top range [0..p-1].
#include <algorithm>
#include <cstdint>

#include "optcoll/algorithms/planners/gather_trees.h"
#include "optcoll/model/error.h"

namespace optcoll::algorithms::planners {
namespace {

struct Choice {
  Rank root = 0;
  Rank split = -1;  // k of a two-children case, -1 otherwise
};

struct BinaryDp {
  const GatherProblem* pb = nullptr;
  std::size_t p = 0;
  std::vector<Time> prefix, b;
  std::vector<Choice> choice;

  Time at(Rank i, Rank j) const {
    return i > j ? 0 : b[static_cast<std::size_t>(i) * p + static_cast<std::size_t>(j)];
  }
  Time msg(Rank i, Rank j) const {
    return i > j ? 0
                 : pb->message(prefix[static_cast<std::size_t>(j) + 1] -
                               prefix[static_cast<std::size_t>(i)]);
  }
  Time copy(Rank q) const { return pb->copy * pb->sizes[static_cast<std::size_t>(q)]; }

  // Best tree of [i..j] rooted at q (q = i, q = j or in between).
  std::pair<Time, Choice> rooted(Rank i, Rank j, Rank q) const {
    if (q > i && q < j) {
      return {std::max(at(i, q - 1) + msg(i, q - 1) + copy(q), at(q + 1, j)) + msg(q + 1, j),
              {q, -1}};
    }
    std::pair<Time, Choice> best{0, {q, -1}};
    if (q == i) {
      best.first = std::max(copy(i), at(i + 1, j)) + msg(i + 1, j);
      for (Rank k = i + 1; k < j; ++k) {
        const Time v =
            std::max(std::max(copy(i), at(i + 1, k)) + msg(i + 1, k), at(k + 1, j)) + msg(k + 1, j);
        if (v < best.first) best = {v, {q, k}};
      }
      return best;
    }
    best.first = at(i, j - 1) + msg(i, j - 1) + copy(j);
    for (Rank k = i; k + 1 < j; ++k) {
      const Time v = std::max(at(i, k) + msg(i, k), at(k + 1, j - 1)) + msg(k + 1, j - 1) + copy(j);
      if (v < best.first) best = {v, {q, k}};
    }
    return best;
  }

  Rank rebuild(OrderedTree& tree, Rank i, Rank j, const Choice& ch) const {
    const Rank q = ch.root;
    auto& kids = tree.shape.children[static_cast<std::size_t>(q)];
    auto sub = [&](Rank a, Rank z) {
      if (a > z) return;
      kids.push_back(rebuild(
          tree, a, z, choice[static_cast<std::size_t>(a) * p + static_cast<std::size_t>(z)]));
    };
    if (i == j) return q;
    if (q > i && q < j) {
      sub(i, q - 1), sub(q + 1, j);
      tree.copy_slot[static_cast<std::size_t>(q)] = 1;
    } else if (q == i) {
      if (ch.split < 0)
        sub(i + 1, j);
      else
        sub(i + 1, ch.split), sub(ch.split + 1, j);
      tree.copy_slot[static_cast<std::size_t>(q)] = 0;
    } else {
      if (ch.split < 0)
        sub(i, j - 1);
      else
        sub(i, ch.split), sub(ch.split + 1, j - 1);
      tree.copy_slot[static_cast<std::size_t>(q)] = static_cast<int>(kids.size());
    }
    return q;
  }
};

}  // namespace

OrderedTree binary_optimal_tree(const GatherProblem& pb, std::optional<Rank> root) {
  const Rank n = pb.nranks();
  OPTCOLL_CHECK(n >= 1, "empty gather problem");
  OPTCOLL_CHECK(!root || (*root >= 0 && *root < n), "root out of range");
  BinaryDp dp;
  dp.pb = &pb;
  dp.p = static_cast<std::size_t>(n);
  dp.prefix.assign(dp.p + 1, 0);
  for (std::size_t i = 0; i < dp.p; ++i) dp.prefix[i + 1] = dp.prefix[i] + pb.sizes[i];
  dp.b.assign(dp.p * dp.p, 0);
  dp.choice.assign(dp.p * dp.p, Choice{});
  for (std::size_t i = 0; i < dp.p; ++i) dp.choice[i * dp.p + i] = {static_cast<Rank>(i), -1};
  for (Rank len = 1; len < n; ++len) {
    for (Rank i = 0; i + len < n; ++i) {
      const Rank j = i + len;
      auto best = dp.rooted(i, j, i);
      for (Rank q = i + 1; q <= j; ++q) {
        auto v = dp.rooted(i, j, q);
        if (v.first < best.first) best = v;
      }
      const auto idx = static_cast<std::size_t>(i) * dp.p + static_cast<std::size_t>(j);
      dp.b[idx] = best.first;
      dp.choice[idx] = best.second;
    }
  }
  OrderedTree tree;
  tree.shape.children.resize(dp.p);
  tree.copy_slot.assign(dp.p, 0);
  const auto top = root && n > 1 ? dp.rooted(0, n - 1, *root)
                                 : std::pair<Time, Choice>{dp.at(0, n - 1), dp.choice[dp.p - 1]};
  tree.shape.root = dp.rebuild(tree, 0, n - 1, top.second);
  tree.cost = n == 1 ? pb.copy * pb.sizes[0] : top.first;
  return tree;
}

}  // namespace optcoll::algorithms::planners
