// SPDX-License-Identifier: Apache-2.0
// File: Canon & Antoniu's greedy reduction trees (see greedy_reduction.h and
// docs/math/reduction-overlap.md §2 for the pseudocode followed here).
#include "optcoll/algorithms/planners/greedy_reduction.h"

#include <algorithm>
#include <queue>
#include <utility>

#include "optcoll/model/error.h"

namespace optcoll::algorithms::planners {
namespace {

using Index = std::int32_t;

// Argmin over (s[j], j) with the tie rule: a min-heap of (value, index).
class MinHeap {
 public:
  explicit MinHeap(TieBreak tie) : heap_(Less{tie}) {}
  void push(Time value, Index j) { heap_.push({value, j}); }
  std::pair<Time, Index> pop() {
    const auto top = heap_.top();
    heap_.pop();
    return top;
  }

 private:
  struct Less {
    TieBreak tie;
    // std::priority_queue keeps the *largest* on top: "a < b" means b is served first.
    bool operator()(const std::pair<Time, Index>& a, const std::pair<Time, Index>& b) const {
      if (a.first != b.first) return a.first > b.first;
      return tie == TieBreak::kLowestIndex ? a.second > b.second : a.second < b.second;
    }
  };
  std::priority_queue<std::pair<Time, Index>, std::vector<std::pair<Time, Index>>, Less> heap_;
};

// Algorithm 1 restricted to receivers 0..limit-1 (limit = n: Algorithm 1 itself).
ReductionTree greedy(std::int64_t n, const ReductionCosts& costs, std::int64_t limit,
                     TieBreak tie) {
  ReductionTree tree = empty_reduction_tree(n);
  const Time step = std::max(costs.d, costs.c);
  MinHeap heap(tie);
  heap.push(0, 0);
  Time last = 0;
  for (Index i = 1; i < n; ++i) {
    const auto [s_m, m] = heap.pop();
    tree.parent[static_cast<std::size_t>(i)] = m;
    const Time s_i = s_m + costs.c + costs.d;
    last = std::max(last, s_i);
    heap.push(s_m + step, m);
    if (i < limit) heap.push(s_i, i);
  }
  link_children_reversed(tree);
  tree.length = last;
  return tree;
}

}  // namespace

ReductionTree empty_reduction_tree(std::int64_t n) {
  if (n < 1) throw_invalid("a reduction tree needs at least 1 machine, got {}", n);
  if (n > INT32_MAX) throw_invalid("a reduction tree takes at most 2^31 - 1 machines, got {}", n);
  ReductionTree tree;
  tree.parent.assign(static_cast<std::size_t>(n), -1);
  tree.children.resize(static_cast<std::size_t>(n));
  return tree;
}

void link_children_reversed(ReductionTree& tree) {
  for (auto& kids : tree.children) kids.clear();
  for (std::size_t i = tree.parent.size(); i-- > 1;) {
    tree.children[static_cast<std::size_t>(tree.parent[i])].push_back(static_cast<Index>(i));
  }
}

TreeTiming evaluate_in_order(const ReductionTree& tree, const ReductionCosts& costs) {
  TreeTiming timing;
  timing.ready.assign(tree.parent.size(), 0);
  for (std::size_t v = tree.parent.size(); v-- > 0;) {
    Time port = 0;
    Time reduced = 0;
    for (const Index u : tree.children[v]) {
      const auto ui = static_cast<std::size_t>(u);
      OPTCOLL_CHECK(ui > v, "child {} of {} does not have a larger index", u, v);
      port = std::max(timing.ready[ui], port) + costs.d;
      reduced = std::max(port, reduced) + costs.c;
    }
    timing.ready[v] = reduced;
  }
  timing.length = timing.ready.empty() ? 0 : timing.ready[0];
  return timing;
}

void order_by_ready_time(ReductionTree& tree, const ReductionCosts& costs) {
  // Children have larger indices, so sorting bottom-up sees final ready times.
  std::vector<Time> ready(tree.parent.size(), 0);
  for (std::size_t v = tree.parent.size(); v-- > 0;) {
    auto& kids = tree.children[v];
    std::stable_sort(kids.begin(), kids.end(), [&](Index a, Index b) {
      return ready[static_cast<std::size_t>(a)] < ready[static_cast<std::size_t>(b)];
    });
    Time port = 0;
    Time reduced = 0;
    for (const Index u : kids) {
      port = std::max(ready[static_cast<std::size_t>(u)], port) + costs.d;
      reduced = std::max(port, reduced) + costs.c;
    }
    ready[v] = reduced;
  }
  tree.length = ready.empty() ? 0 : ready[0];
}

ReductionTree greedy_optimal(std::int64_t n, const ReductionCosts& costs, TieBreak tie) {
  return greedy(n, costs, n, tie);
}

std::vector<Time> greedy_optimal_lengths(std::int64_t n_max, const ReductionCosts& costs,
                                         TieBreak tie) {
  const ReductionTree tree = greedy_optimal(n_max, costs, tie);
  // Replay: the length for n is the largest s assigned among machines 1..n-1.
  std::vector<Time> lengths(static_cast<std::size_t>(n_max) + 1, 0);
  std::vector<Time> s(static_cast<std::size_t>(n_max), 0);
  const Time step = std::max(costs.d, costs.c);
  for (std::size_t i = 1; i < s.size(); ++i) {
    auto& s_m = s[static_cast<std::size_t>(tree.parent[i])];
    s[i] = s_m + costs.c + costs.d;
    s_m += step;
    lengths[i + 1] = std::max(lengths[i], s[i]);
  }
  return lengths;
}

ReductionTree greedy_reducers(std::int64_t n, const ReductionCosts& costs, std::int64_t reducers,
                              TieBreak tie) {
  if (reducers < 1) throw_invalid("reducers (the K of Algorithm 3) must be >= 1, got {}", reducers);
  ReductionTree tree = greedy(n, costs, reducers, tie);
  // Algorithm 3's value of s is the reversed time of the insertion, which is the forward
  // makespan only when every machine may receive; time the tree as soon as possible.
  order_by_ready_time(tree, costs);
  return tree;
}

ReductionTree binomial_strategy(std::int64_t n, const ReductionCosts& costs, TieBreak tie) {
  ReductionCosts zeroed = costs;
  (costs.d <= costs.c ? zeroed.d : zeroed.c) = 0;
  ReductionTree tree = greedy_optimal(n, zeroed, tie);
  order_by_ready_time(tree, costs);
  return tree;
}

ReductionTree fibonacci_strategy(std::int64_t n, const ReductionCosts& costs, TieBreak tie) {
  ReductionTree tree = greedy_optimal(n, {.d = 1, .c = 1}, tie);
  order_by_ready_time(tree, costs);
  return tree;
}

ReductionTree binomial_tree_of_order(int k, const ReductionCosts& costs) {
  OPTCOLL_CHECK(k >= 0 && k < 31, "binomial order {} out of range", k);
  ReductionTree tree = empty_reduction_tree(std::int64_t{1} << k);
  // Machine i sends to i with its lowest set bit cleared: the sink of the upper half
  // [2^(j-1), 2^j) of an order-j tree sends to the lower half's sink.
  for (std::size_t i = 1; i < tree.parent.size(); ++i) {
    tree.parent[i] = static_cast<Index>(i & (i - 1));
    tree.children[i & (i - 1)].push_back(static_cast<Index>(i));
  }
  order_by_ready_time(tree, costs);
  return tree;
}

ReductionTree fibonacci_tree_of_order(int k, const ReductionCosts& costs) {
  OPTCOLL_CHECK(k >= -1 && k <= 40, "Fibonacci order {} out of range", k);
  // size[j + 1] = machines of the tree of order j.
  std::vector<std::int64_t> size{1, 1};
  for (int j = 1; j <= k; ++j) size.push_back(size[size.size() - 1] + size[size.size() - 2]);
  ReductionTree tree = empty_reduction_tree(size[static_cast<std::size_t>(k + 1)]);
  // Iterative Def. 15: (order, first machine) pairs still to lay out.
  std::vector<std::pair<int, Index>> todo{{k, 0}};
  while (!todo.empty()) {
    const auto [order, first] = todo.back();
    todo.pop_back();
    if (order <= 0) continue;
    const auto second = static_cast<Index>(first + size[static_cast<std::size_t>(order)]);
    tree.parent[static_cast<std::size_t>(second)] = first;
    todo.push_back({order - 2, second});
    todo.push_back({order - 1, first});
  }
  for (std::size_t i = 1; i < tree.parent.size(); ++i)
    tree.children[static_cast<std::size_t>(tree.parent[i])].push_back(static_cast<Index>(i));
  order_by_ready_time(tree, costs);
  return tree;
}

std::int64_t ceil_log2(std::int64_t n) {
  std::int64_t k = 0;
  for (std::int64_t reach = 1; reach < n; reach *= 2) ++k;
  return k;
}

Time lemma5_lower_bound(std::int64_t n, const ReductionCosts& costs) {
  return static_cast<Time>(ceil_log2(n)) * std::max(costs.d, costs.c);
}

Time prop6_upper_bound(std::int64_t n, const ReductionCosts& costs) {
  return static_cast<Time>(ceil_log2(n)) * (costs.d + costs.c);
}

Time limited_upper_bound(std::int64_t n, std::int64_t k, const ReductionCosts& costs) {
  std::int64_t a = 1;
  while ((std::int64_t{1} << a) <= k) ++a;  // a = floor(log2 K) + 1
  const std::int64_t rest = std::max<std::int64_t>(0, n - (std::int64_t{1} << a));
  return static_cast<Time>(a + (rest + k - 1) / k) * (costs.d + costs.c);
}

}  // namespace optcoll::algorithms::planners
