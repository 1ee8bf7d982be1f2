// SPDX-License-Identifier: Apache-2.0
// File: Canon & Antoniu's reduction planners against independent expectations: an exhaustive
// search over all trees and receive orders, an independent recurrence for the optimum,
// Fibonacci and binomial counts, the bounds of §4, and the spec's worked examples.
#include "optcoll/algorithms/planners/greedy_reduction.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include <gtest/gtest.h>

namespace optcoll::algorithms::planners {
namespace {

using Costs = ReductionCosts;

const std::vector<Costs>& cost_pairs() {
  static const std::vector<Costs> pairs{{1, 1}, {1, 2}, {2, 1},     {1, 0},     {0, 1},
                                        {1, 5}, {3, 2}, {0.3, 0.7}, {1.25, 0.5}};
  return pairs;
}

// ---- an independent evaluator and an exhaustive search ------------------------------------

// Completion time of machine v when it receives kids[v] in the given order, recursively
// (the model of §3 written out: one port, receives in the given order, reductions one at a
// time after each arrival).
Time completion(const std::vector<std::vector<int>>& kids, int v, Time d, Time c) {
  Time port_free = 0;
  Time cpu_free = 0;
  for (const int u : kids[static_cast<std::size_t>(v)]) {
    const Time arrival = std::max(completion(kids, u, d, c), port_free) + d;
    port_free = arrival;
    cpu_free = std::max(cpu_free, arrival) + c;
  }
  return cpu_free;
}

// The best makespan over every tree on n machines rooted at 0 and every receive order.
Time exhaustive_optimum(int n, Time d, Time c) {
  Time best = INFINITY;
  std::vector<int> parent(static_cast<std::size_t>(n), 0);
  // Every parent array (parent[i] != i for i >= 1); cyclic ones are skipped.
  std::function<void(int)> choose_parent = [&](int i) {
    if (i == n) {
      std::vector<std::vector<int>> kids(static_cast<std::size_t>(n));
      for (int j = 1; j < n; ++j) {
        int v = j;
        for (int steps = 0; v != 0 && steps <= n; ++steps) v = parent[static_cast<std::size_t>(v)];
        if (v != 0) return;  // a cycle: no path to the sink
        kids[static_cast<std::size_t>(parent[static_cast<std::size_t>(j)])].push_back(j);
      }
      // Every receive order at every machine.
      std::function<void(int)> permute = [&](int v) {
        if (v == n) {
          best = std::min(best, completion(kids, 0, d, c));
          return;
        }
        auto& k = kids[static_cast<std::size_t>(v)];
        std::sort(k.begin(), k.end());
        do {
          permute(v + 1);
        } while (std::next_permutation(k.begin(), k.end()));
      };
      permute(0);
      return;
    }
    for (int p = 0; p < n; ++p) {
      if (p == i) continue;
      parent[static_cast<std::size_t>(i)] = p;
      choose_parent(i + 1);
    }
  };
  choose_parent(1);
  return best;
}

TEST(GreedyOptimal, EqualsExhaustiveSearchUpToSeven) {
  for (const Costs& k : cost_pairs()) {
    for (int n = 1; n <= 7; ++n) {
      const Time expected = exhaustive_optimum(n, k.d, k.c);
      for (const TieBreak tie : {TieBreak::kLowestIndex, TieBreak::kHighestIndex}) {
        EXPECT_DOUBLE_EQ(greedy_optimal(n, k, tie).length, expected)
            << "n=" << n << " d=" << k.d << " c=" << k.c;
      }
    }
  }
}

// The tree's own as-soon-as-possible timing gives the predicted length
// (docs/math/reduction-overlap.md §3).
TEST(GreedyOptimal, PredictionEqualsItsTreesTiming) {
  for (const Costs& k : cost_pairs()) {
    for (std::int64_t n : {1, 2, 3, 8, 13, 100, 777, 3000}) {
      for (const TieBreak tie : {TieBreak::kLowestIndex, TieBreak::kHighestIndex}) {
        const auto tree = greedy_optimal(n, k, tie);
        EXPECT_DOUBLE_EQ(evaluate_in_order(tree, k).length, tree.length) << n;
        std::vector<std::vector<int>> kids(tree.children.begin(), tree.children.end());
        EXPECT_DOUBLE_EQ(completion(kids, 0, k.d, k.c), tree.length) << n;
      }
    }
  }
}

// N(T): the most elements reducible within T (docs/math/reduction-overlap.md §4, integer costs),
// memoized.
std::int64_t most_within(Time t, Time d, Time c, std::map<Time, std::int64_t>& memo) {
  if (const auto it = memo.find(t); it != memo.end()) return it->second;
  std::int64_t total = 1;
  const Time step = std::max(d, c);
  for (Time rest = t - (d + c); rest >= 0; rest -= step) {
    total += most_within(rest, d, c, memo);
    if (step == 0) break;
  }
  memo[t] = total;
  return total;
}

TEST(GreedyOptimal, MatchesTheIndependentRecurrence) {
  for (const Costs& k : {Costs{1, 1}, Costs{1, 2}, Costs{2, 1}, Costs{1, 5}, Costs{3, 2}}) {
    std::map<Time, std::int64_t> memo;
    for (std::int64_t n = 1; n <= 64; ++n) {
      Time t = 0;
      while (most_within(t, k.d, k.c, memo) < n) t += 1;
      EXPECT_EQ(greedy_optimal(n, k).length, t) << "n=" << n << " d=" << k.d << " c=" << k.c;
    }
  }
}

TEST(GreedyOptimal, SpecTables) {
  // Spec §1.6 (independently computed there): (d, c) -> {n, optimal length}.
  EXPECT_EQ(greedy_optimal(6, {1, 2}).length, 8);
  EXPECT_EQ(greedy_optimal(37, {1, 2}).length, 14);
  EXPECT_EQ(greedy_optimal(38, {2, 1}).length, 15);
  EXPECT_EQ(greedy_optimal(16, {1, 5}).length, 24);
  EXPECT_EQ(greedy_optimal(64, {1, 5}).length, 36);
  EXPECT_EQ(greedy_optimal(8, {1, 0}).length, 3);
  EXPECT_EQ(greedy_optimal(64, {0, 1}).length, 6);
}

TEST(GreedyOptimal, WorkedExampleIsTheOrderFourFibonacciTree) {
  // Spec §1.3: n = 8, d = c = 1, length 5; m0 receives m3, m5, m2, m1; m1 receives m4, m6;
  // m2 receives m7.
  // Leaves m3 and m5 are both ready at 0, so their order is a tie: the planner takes them
  // in decreasing insertion index (m5 first), the spec's listing m3 first; both give 5.
  const auto tree = greedy_optimal(8, {1, 1});
  EXPECT_EQ(tree.length, 5);
  using Kids = std::vector<std::int32_t>;
  EXPECT_EQ(tree.children[0], (Kids{5, 3, 2, 1}));
  EXPECT_EQ(tree.children[1], (Kids{6, 4}));
  EXPECT_EQ(tree.children[2], (Kids{7}));
  for (std::size_t v = 3; v < 8; ++v) EXPECT_TRUE(tree.children[v].empty()) << v;
  const auto timing = evaluate_in_order(tree, {1, 1});
  EXPECT_EQ(timing.ready[1], 3);  // m1 sends to m0 at 3
  EXPECT_EQ(timing.ready[2], 2);  // m2 sends to m0 at 2
}

// ---- Fibonacci and binomial counts (Props. 13/16, Thms. 14/17) ----------------------------

TEST(FibonacciTrees, CountsAndLengths) {
  std::vector<std::int64_t> fib{0, 1, 1};  // F_0, F_1, F_2
  while (fib.size() < 25) fib.push_back(fib[fib.size() - 1] + fib[fib.size() - 2]);
  for (const Time d : {1.0, 2.0, 3.0}) {
    for (int k = 1; k <= 20; ++k) {
      const auto nodes = fib[static_cast<std::size_t>(k + 2)];
      EXPECT_EQ(greedy_optimal(nodes, {d, d}).length, (k + 1) * d) << "k=" << k;
      EXPECT_GT(greedy_optimal(nodes + 1, {d, d}).length, (k + 1) * d) << "k=" << k;
    }
  }
  for (const Costs& k : cost_pairs()) {
    for (int order = 1; order <= 16; ++order) {
      const auto tree = fibonacci_tree_of_order(order, k);
      EXPECT_EQ(static_cast<std::int64_t>(tree.parent.size()),
                fib[static_cast<std::size_t>(order + 2)]);
      EXPECT_DOUBLE_EQ(tree.length, k.d + (order - 1) * std::max(k.d, k.c) + k.c) << order;
    }
  }
}

TEST(BinomialTrees, CountsAndLengths) {
  for (const Costs& k : {Costs{1, 0}, Costs{0, 1}, Costs{3, 0}}) {
    const Time top = std::max(k.d, k.c);
    for (int order = 1; order <= 16; ++order) {
      const std::int64_t nodes = std::int64_t{1} << order;
      EXPECT_EQ(greedy_optimal(nodes, k).length, order * top);
      EXPECT_GT(greedy_optimal(nodes + 1, k).length, order * top);
    }
  }
  for (const Costs& k : cost_pairs()) {
    for (int order = 0; order <= 14; ++order) {
      const auto tree = binomial_tree_of_order(order, k);
      EXPECT_EQ(tree.parent.size(), std::size_t{1} << order);
      EXPECT_DOUBLE_EQ(tree.length, order * (k.d + k.c)) << order;
    }
  }
}

TEST(Bounds, Lemma5AndProposition6UpTo5000) {
  for (const Costs& k : cost_pairs()) {
    const auto lengths = greedy_optimal_lengths(5000, k);
    ASSERT_EQ(lengths.size(), 5001u);
    for (std::int64_t n : {1, 2, 7, 100, 4999, 5000}) {
      EXPECT_EQ(lengths[static_cast<std::size_t>(n)], greedy_optimal(n, k).length) << n;
    }
    for (std::int64_t n = 1; n <= 5000; ++n) {
      const Time length = lengths[static_cast<std::size_t>(n)];
      std::int64_t log = 0;
      while ((std::int64_t{1} << log) < n) ++log;
      EXPECT_GE(length, log * std::max(k.d, k.c) - 1e-9) << n;
      EXPECT_LE(length, log * (k.d + k.c) + 1e-9) << n;
      EXPECT_EQ(lemma5_lower_bound(n, k), log * std::max(k.d, k.c));
      EXPECT_EQ(prop6_upper_bound(n, k), log * (k.d + k.c));
    }
  }
}

// ---- strategies (§7) ----------------------------------------------------------------------

TEST(Strategies, SpecSampleRatios) {
  // Spec §1.6, tie = lowest index: binomial strategy at d = c = 1, Fibonacci at (1, 0).
  const std::vector<std::array<std::int64_t, 5>> rows{
      {4, 4, 4, 3, 2},        {8, 6, 5, 4, 3},        {16, 8, 7, 6, 4},
      {64, 12, 10, 9, 6},     {100, 13, 11, 10, 7},   {1000, 19, 16, 15, 10},
      {4096, 24, 18, 17, 12}, {10000, 26, 20, 19, 14}};
  for (const auto& [n, bin, opt_eq, fib, opt_zero] : rows) {
    EXPECT_EQ(binomial_strategy(n, {1, 1}).length, bin) << n;
    EXPECT_EQ(greedy_optimal(n, {1, 1}).length, opt_eq) << n;
    EXPECT_EQ(fibonacci_strategy(n, {1, 0}).length, fib) << n;
    EXPECT_EQ(greedy_optimal(n, {1, 0}).length, opt_zero) << n;
  }
}

TEST(Strategies, WithinTheirGuarantees) {
  for (const Costs& k : cost_pairs()) {
    for (std::int64_t n = 1; n <= 600; n += 7) {
      const Time opt = greedy_optimal(n, k).length;
      const Time ratio = std::min(k.d, k.c) / std::max(k.d, k.c);
      EXPECT_LE(binomial_strategy(n, k).length, (1 + ratio) * opt + 1e-9) << n;
      EXPECT_LE(fibonacci_strategy(n, k).length, 2 * opt + 1e-9) << n;
      EXPECT_GE(binomial_strategy(n, k).length, opt - 1e-9) << n;
      EXPECT_GE(fibonacci_strategy(n, k).length, opt - 1e-9) << n;
    }
  }
}

}  // namespace
}  // namespace optcoll::algorithms::planners
