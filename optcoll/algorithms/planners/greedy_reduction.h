// SPDX-License-Identifier: Apache-2.0
// File: reduction trees for overlapped communication and computation (Canon & Antoniu,
// INRIA RR-7898, with the corrections of docs/math/reduction-overlap.md): the optimal
// greedy (Algorithm 1), its K-reducer variant (Algorithm 3), the binomial and Fibonacci
// strategies, the explicit binomial and Fibonacci trees (Defs. 12, 15), and the
// as-soon-as-possible evaluation of any tree (Props. 2/3). The K-transfer variant (Algorithm
// 2), whose transfers start at fixed times, is in greedy_transfers.h.
//
// Model (§3): n machines hold one element each; sending an element costs d, reducing two
// costs c; one port per machine; a machine may receive while it reduces; it reduces its
// received elements one at a time into its accumulator, in arrival order, and then sends the
// accumulator once to its parent. Machine 0 is the sink. Every tree built here has
// parent[i] < i, so children always have larger indices than their parent.
#pragma once

#include <cstdint>
#include <vector>

#include "optcoll/model/types.h"

namespace optcoll::algorithms::planners {

struct ReductionCosts {
  Time d = 1;  // one transfer (alpha + beta * n)
  Time c = 1;  // one reduction (gamma * n)
};

// Which machine an argmin over equal values picks. It changes the tree, not the optimum.
enum class TieBreak : std::uint8_t { kLowestIndex, kHighestIndex };

struct ReductionTree {
  std::vector<std::int32_t> parent;  // parent[0] = -1: machine 0 is the sink
  // children[v] in the order v receives them (forward time): first received first.
  std::vector<std::vector<std::int32_t>> children;
  Time length = 0;  // the makespan the construction predicts
  // Algorithm 2 only: the forward start of machine i's send (the other algorithms send as
  // soon as possible; empty for them).
  std::vector<Time> send_start;
};

// The tree every planner here fills: n machines (1 <= n <= 2^31 - 1, else Error naming n),
// every parent -1, no children.
ReductionTree empty_reduction_tree(std::int64_t n);
// Fills tree.children from tree.parent, each machine's children in decreasing index: the
// greedy constructions' receive order (docs/math/reduction-overlap.md §3, step 2).
void link_children_reversed(ReductionTree& tree);

// As-soon-as-possible timing of a tree (Prop. 3) for a given receive order: transfer u→v
// starts at max(ready(u), end of v's previous receive), v's k-th reduction at max(end of that
// transfer, end of its reduction k-1). ready[v] is when v's accumulator is final.
struct TreeTiming {
  std::vector<Time> ready;
  Time length = 0;  // ready[0]
};
TreeTiming evaluate_in_order(const ReductionTree& tree, const ReductionCosts& costs);

// Re-sorts every machine's children by ready time (ties keep the current order), which is
// optimal for a fixed tree (exchange argument), and sets tree.length to that evaluation.
void order_by_ready_time(ReductionTree& tree, const ReductionCosts& costs);

// Algorithm 1 (Thm 4): an optimal tree for n elements, Θ(n log n). Children are received in
// decreasing insertion index (= increasing ready time).
ReductionTree greedy_optimal(std::int64_t n, const ReductionCosts& costs,
                             TieBreak tie = TieBreak::kLowestIndex);

// Algorithm 1's optimal length for every n = 0..n_max at once (entry 0 is 0): the greedy's
// choices at step i do not depend on n, so the tree for n is the first n machines of the
// tree for n_max, and its length the largest s value assigned so far. Θ(n_max log n_max).
std::vector<Time> greedy_optimal_lengths(std::int64_t n_max, const ReductionCosts& costs,
                                         TieBreak tie = TieBreak::kLowestIndex);

// Algorithm 3 (Thm 9): optimal when at most `reducers` machines may receive (they are
// machines 0..reducers-1). reducers >= 1. Transfers are as soon as possible.
ReductionTree greedy_reducers(std::int64_t n, const ReductionCosts& costs, std::int64_t reducers,
                              TieBreak tie = TieBreak::kLowestIndex);

// The binomial strategy (§7): the tree of Algorithm 1 with min(d, c) set to 0, timed with the
// real costs (receive order re-sorted by ready time). A (1 + min/max)-approximation.
ReductionTree binomial_strategy(std::int64_t n, const ReductionCosts& costs,
                                TieBreak tie = TieBreak::kLowestIndex);
// The Fibonacci strategy (§7): the tree of Algorithm 1 with d = c, timed with the real costs.
// A 2-approximation.
ReductionTree fibonacci_strategy(std::int64_t n, const ReductionCosts& costs,
                                 TieBreak tie = TieBreak::kLowestIndex);

// Def. 12: the binomial tree of order k (2^k machines), timed with `costs`.
ReductionTree binomial_tree_of_order(int k, const ReductionCosts& costs);
// Def. 15: the Fibonacci tree of order k (F(k+2) machines, F(-1) = F(0) = one machine),
// timed with `costs`.
ReductionTree fibonacci_tree_of_order(int k, const ReductionCosts& costs);

// The bounds of §4: Lemma 5 (lower, with the ceiling the proof gives) and Prop. 6 (upper).
Time lemma5_lower_bound(std::int64_t n, const ReductionCosts& costs);
Time prop6_upper_bound(std::int64_t n, const ReductionCosts& costs);
// The corrected upper bound for Algorithms 2 and 3 (the paper's Prop. 8 and Cor. 11 are
// false): with a = floor(log2 K) + 1, (a + ceil((n - 2^a) / K)) (d + c).
Time limited_upper_bound(std::int64_t n, std::int64_t k, const ReductionCosts& costs);

std::int64_t ceil_log2(std::int64_t n);

}  // namespace optcoll::algorithms::planners
