// SPDX-License-Identifier: Apache-2.0
// File: the optimal strictly rank-ordered binary gather/scatter tree (Träff 2019, Figure 7,
// Theorem 3; docs/math/gather-scatter-trees.md §3.5). B[i][j] over ranks i..j, every node's items
// in rank order:
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
  std::vector<Time> prefix;
  // Square tables, [a * p + b] for ranges a <= b, and their transposes [b * p + a], so that
  // every inner loop below reads contiguous memory: B and c(M(a, b)).
  std::vector<Time> b, bt, msg, msg_t;
  std::vector<Choice> choice;

  std::size_t idx(Rank i, Rank j) const {
    return static_cast<std::size_t>(i) * p + static_cast<std::size_t>(j);
  }
  Time at(Rank i, Rank j) const { return i > j ? 0 : b[idx(i, j)]; }
  Time message(Rank i, Rank j) const { return i > j ? 0 : msg[idx(i, j)]; }
  Time copy(Rank q) const { return pb->copy * pb->sizes[static_cast<std::size_t>(q)]; }

  void init(const GatherProblem& problem) {
    pb = &problem;
    p = problem.sizes.size();
    prefix.assign(p + 1, 0);
    for (std::size_t i = 0; i < p; ++i) prefix[i + 1] = prefix[i] + problem.sizes[i];
    b.assign(p * p, 0);
    bt.assign(p * p, 0);
    msg.assign(p * p, 0);
    msg_t.assign(p * p, 0);
    choice.assign(p * p, Choice{});
    for (std::size_t i = 0; i < p; ++i) {
      choice[i * p + i] = {static_cast<Rank>(i), -1};
      for (std::size_t j = i; j < p; ++j) {
        msg[i * p + j] = msg_t[j * p + i] = problem.message(prefix[j + 1] - prefix[i]);
      }
    }
  }

  // Best tree of [i..j] (i < j) rooted at q; ties: the first split k.
  std::pair<Time, Choice> rooted(Rank i, Rank j, Rank q) const {
    if (q > i && q < j) {
      return {
          std::max(at(i, q - 1) + message(i, q - 1) + copy(q), at(q + 1, j)) + message(q + 1, j),
          {q, -1}};
    }
    std::pair<Time, Choice> best{0, {q, -1}};
    if (q == i) {
      const Time c = copy(i);
      const Time* row = &b[idx(i + 1, 0)];     // row[k] = B[i+1][k]
      const Time* mrow = &msg[idx(i + 1, 0)];  // mrow[k] = c(M(i+1, k))
      const Time* col = &bt[idx(j, 0)];        // col[a] = B[a][j]
      const Time* mcol = &msg_t[idx(j, 0)];    // mcol[a] = c(M(a, j))
      best.first = std::max(c, col[i + 1]) + mcol[i + 1];
      for (Rank k = i + 1; k < j; ++k) {
        const Time v = std::max(std::max(c, row[k]) + mrow[k], col[k + 1]) + mcol[k + 1];
        if (v < best.first) best = {v, {q, k}};
      }
      return best;
    }
    const Time* row = &b[idx(i, 0)];
    const Time* mrow = &msg[idx(i, 0)];
    const Time* col = &bt[idx(j - 1, 0)];
    const Time* mcol = &msg_t[idx(j - 1, 0)];
    const Time c = copy(j);
    best.first = row[j - 1] + mrow[j - 1] + c;
    for (Rank k = i; k + 1 < j; ++k) {
      const Time v = std::max(row[k] + mrow[k], col[k + 1]) + mcol[k + 1] + c;
      if (v < best.first) best = {v, {q, k}};
    }
    return best;
  }

  // Best tree of [i..j] over every root (ties: the smallest root, then the first split).
  // The candidates of each family go to a buffer in a vectorizable loop; the first one that
  // attains the minimum wins.
  std::pair<Time, Choice> best_root(Rank i, Rank j, std::vector<Time>& buf) const {
    // Each family has j - i - 1 candidates; the three lie back to back.
    const Rank n_first = j - i - 1;
    const Rank n_last = j - i - 1;
    buf.resize(3 * static_cast<std::size_t>(n_first) + 1);
    Time* first = buf.data();        // q = i, split k = i+1..j-1 at [k - i - 1]
    Time* middle = first + n_first;  // q = i+1..j-1 at [q - i - 1]
    Time* last = middle + n_first;   // q = j, split k = i..j-2 at [k - i]
    {
      const Time c = copy(i);
      const Time* row = &b[idx(i + 1, 0)];
      const Time* mrow = &msg[idx(i + 1, 0)];
      const Time* col = &bt[idx(j, 0)];
      const Time* mcol = &msg_t[idx(j, 0)];
      for (Rank k = i + 1; k < j; ++k)
        first[k - i - 1] = std::max(std::max(c, row[k]) + mrow[k], col[k + 1]) + mcol[k + 1];
    }
    {
      const Time* row = &b[idx(i, 0)];
      const Time* mrow = &msg[idx(i, 0)];
      const Time* col = &bt[idx(j, 0)];
      const Time* mcol = &msg_t[idx(j, 0)];
      const Time* sizes = pb->sizes.data();
      const Time rate = pb->copy;
      for (Rank q = i + 1; q < j; ++q) {
        middle[q - i - 1] =
            std::max(row[q - 1] + mrow[q - 1] + rate * sizes[q], col[q + 1]) + mcol[q + 1];
      }
    }
    {
      const Time c = copy(j);
      const Time* row = &b[idx(i, 0)];
      const Time* mrow = &msg[idx(i, 0)];
      const Time* col = &bt[idx(j - 1, 0)];
      const Time* mcol = &msg_t[idx(j - 1, 0)];
      for (Rank k = i; k + 1 < j; ++k)
        last[k - i] = std::max(row[k] + mrow[k], col[k + 1]) + mcol[k + 1] + c;
    }
    const Time one_first = std::max(copy(i), at(i + 1, j)) + message(i + 1, j);
    const Time one_last = at(i, j - 1) + message(i, j - 1) + copy(j);
    Time best = std::min(one_first, one_last);
    const Rank total = n_first + (j - i - 1) + n_last;
#pragma omp simd reduction(min : best)
    for (Rank t = 0; t < total; ++t) best = std::min(best, first[t]);
    if (one_first == best) return {best, {i, -1}};
    for (Rank t = 0; t < n_first; ++t) {
      if (first[t] == best) return {best, {i, i + 1 + t}};
    }
    for (Rank t = 0; t < j - i - 1; ++t) {
      if (middle[t] == best) return {best, {i + 1 + t, -1}};
    }
    if (one_last == best) return {best, {j, -1}};
    for (Rank t = 0; t < n_last; ++t) {
      if (last[t] == best) return {best, {j, i + t}};
    }
    OPTCOLL_CHECK(false, "binary tree DP lost its minimum at [{}, {}]", i, j);
    return {best, {i, -1}};
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

namespace {

BinaryDp fill_binary(const GatherProblem& pb) {
  const Rank n = pb.nranks();
  OPTCOLL_CHECK(n >= 1, "empty gather problem");
  BinaryDp dp;
  dp.init(pb);
  // Row by row from the bottom: [i..j] needs rows > i and shorter ranges of row i.
  std::vector<Time> buf;
  for (Rank i = n - 2; i >= 0; --i) {
    for (Rank j = i + 1; j < n; ++j) {
      const auto best = dp.best_root(i, j, buf);
      dp.b[dp.idx(i, j)] = dp.bt[dp.idx(j, i)] = best.first;
      dp.choice[dp.idx(i, j)] = best.second;
    }
  }
  return dp;
}

OrderedTree extract(const BinaryDp& dp, const GatherProblem& pb, std::optional<Rank> root) {
  const Rank n = pb.nranks();
  OrderedTree tree;
  tree.shape.children.resize(dp.p);
  tree.copy_slot.assign(dp.p, 0);
  const auto top = root && n > 1 ? dp.rooted(0, n - 1, *root)
                                 : std::pair<Time, Choice>{dp.at(0, n - 1), dp.choice[dp.p - 1]};
  tree.shape.root = dp.rebuild(tree, 0, n - 1, top.second);
  tree.cost = n == 1 ? pb.copy * pb.sizes[0] : top.first;
  return tree;
}

}  // namespace

OrderedTree binary_optimal_tree(const GatherProblem& pb, std::optional<Rank> root) {
  OPTCOLL_CHECK(!root || (*root >= 0 && *root < pb.nranks()), "root out of range");
  return extract(fill_binary(pb), pb, root);
}

std::pair<OrderedTree, OrderedTree> binary_trees_best_and_fixed(const GatherProblem& pb,
                                                                Rank root) {
  OPTCOLL_CHECK(root >= 0 && root < pb.nranks(), "root {} out of range", root);
  const BinaryDp dp = fill_binary(pb);
  return {extract(dp, pb, std::nullopt), extract(dp, pb, root)};
}

}  // namespace optcoll::algorithms::planners
