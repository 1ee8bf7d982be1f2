// SPDX-License-Identifier: Apache-2.0
// File: Canon & Antoniu's limited variants: Algorithm 2 (at most K concurrent transfers) as a
// fixed-time schedule checked here event by event, Algorithm 3 (at most K reducers), the
// corrected bound that replaces the paper's Prop. 8 / Cor. 11, and Theorem 10.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/planners/greedy_reduction.h"
#include "optcoll/algorithms/planners/greedy_schedule.h"
#include "optcoll/algorithms/planners/greedy_transfers.h"
#include "optcoll/model/error.h"

namespace optcoll::algorithms::planners {
namespace {

using Costs = ReductionCosts;

const std::vector<Costs>& cost_pairs() {
  static const std::vector<Costs> pairs{{1, 1}, {1, 2}, {2, 1}, {1, 0}, {0, 1}, {1, 5}, {0.5, 1.5}};
  return pairs;
}

// Checks Algorithm 2's fixed-time schedule: every machine's sends start once its reductions
// (in arrival order, each after its arrival) are done, no machine takes part in two transfers
// at once, at most K transfers overlap at any instant, and the sink finishes at `length`.
void check_fixed_time_schedule(const ReductionTree& tree, const Costs& k, std::int64_t limit) {
  const auto n = tree.parent.size();
  ASSERT_EQ(tree.send_start.size(), n);
  std::vector<std::vector<std::size_t>> in(n);  // receives per machine
  for (std::size_t i = 1; i < n; ++i) in[static_cast<std::size_t>(tree.parent[i])].push_back(i);
  std::vector<Time> ready(n, 0);
  for (std::size_t v = n; v-- > 0;) {
    auto& kids = in[v];
    std::sort(kids.begin(), kids.end(), [&](std::size_t a, std::size_t b) {
      return tree.send_start[a] < tree.send_start[b];
    });
    Time cpu = 0;
    Time port = 0;
    for (const std::size_t u : kids) {
      EXPECT_GE(tree.send_start[u], ready[u] - 1e-9) << "machine " << u << " sends too early";
      EXPECT_GE(tree.send_start[u], port - 1e-9) << "machine " << v << " receives twice";
      port = tree.send_start[u] + k.d;
      cpu = std::max(cpu, port) + k.c;
    }
    ready[v] = cpu;
    if (v > 0) {
      EXPECT_LE(port, tree.send_start[v] + 1e-9) << "machine " << v << " still busy";
    }
  }
  EXPECT_NEAR(ready[0], tree.length, 1e-9);
  // Concurrency: at each start instant, count the transfers in progress.
  for (std::size_t i = 1; i < n; ++i) {
    std::int64_t open = 0;
    const Time t = tree.send_start[i];
    for (std::size_t j = 1; j < n; ++j) {
      if (tree.send_start[j] <= t + 1e-9 && t < tree.send_start[j] + k.d - 1e-9) ++open;
    }
    EXPECT_LE(open, limit) << "at time " << t;
  }
}

TEST(GreedyTransfers, FixedTimeScheduleIsValidAndLimited) {
  for (const Costs& k : cost_pairs()) {
    if (k.d == 0) continue;  // zero-length transfers never overlap
    for (std::int64_t n = 2; n <= 70; n += 3) {
      for (std::int64_t limit : {1, 2, 3, 5, 8}) {
        const auto tree = greedy_transfers(n, k, limit);
        check_fixed_time_schedule(tree, k, limit);
        EXPECT_GE(tree.length, greedy_optimal(n, k).length - 1e-9);
      }
    }
  }
}

// ---- brute force under the transfer limit --------------------------------------------------

// Serial schedule generation: transfers (child -> parent) are placed in `list` order, each at
// the earliest time >= its sender's ready time at which its receiver's port is free and fewer
// than K transfers are in progress throughout; receivers reduce in arrival order, as soon as
// possible. `list` must put every machine's incoming transfers before its own.
Time serial_schedule(const std::vector<int>& parent, const std::vector<int>& list, Time d, Time c,
                     std::int64_t limit) {
  const auto n = parent.size();
  std::vector<std::vector<Time>> arrivals(n);
  std::vector<std::pair<Time, int>> placed;  // (start, receiver)
  auto ready = [&](std::size_t v) {
    auto a = arrivals[v];
    std::sort(a.begin(), a.end());
    Time cpu = 0;
    for (const Time t : a) cpu = std::max(cpu, t) + c;
    return cpu;
  };
  auto feasible = [&](Time t, int to) {
    std::vector<Time> points{t};
    for (const auto& [a, v] : placed) {
      const bool overlaps = a < t + d && t < a + d;
      if (overlaps && v == to) return false;
      if (a > t && a < t + d) points.push_back(a);
    }
    for (const Time x : points) {
      std::int64_t open = 1;  // the new one
      for (const auto& [a, v] : placed) open += (a <= x && x < a + d) ? 1 : 0;
      if (open > limit) return false;
    }
    return true;
  };
  for (const int u : list) {
    const Time earliest = ready(static_cast<std::size_t>(u));
    std::vector<Time> candidates{earliest};
    for (const auto& [a, v] : placed) {
      if (a + d >= earliest) candidates.push_back(a + d);
    }
    std::sort(candidates.begin(), candidates.end());
    const int to = parent[static_cast<std::size_t>(u)];
    for (const Time t : candidates) {
      if (feasible(t, to)) {
        placed.push_back({t, to});
        arrivals[static_cast<std::size_t>(to)].push_back(t + d);
        break;
      }
    }
  }
  return ready(0);
}

// The best serial schedule over every tree on n machines and every transfer list.
Time brute_force_limited(int n, Time d, Time c, std::int64_t limit) {
  Time best = INFINITY;
  std::vector<int> parent(static_cast<std::size_t>(n), -1);
  std::function<void(int)> choose = [&](int i) {
    if (i == n) {
      for (int j = 1; j < n; ++j) {
        int v = j;
        for (int steps = 0; v != 0 && steps <= n; ++steps) v = parent[static_cast<std::size_t>(v)];
        if (v != 0) return;
      }
      std::vector<int> list(static_cast<std::size_t>(n - 1));
      std::iota(list.begin(), list.end(), 1);
      do {
        // Topological: a machine's send comes after every transfer into it.
        std::vector<int> position(static_cast<std::size_t>(n), -1);
        for (std::size_t k = 0; k < list.size(); ++k)
          position[static_cast<std::size_t>(list[k])] = static_cast<int>(k);
        bool ok = true;
        for (int j = 1; j < n && ok; ++j) {
          const int to = parent[static_cast<std::size_t>(j)];
          if (to != 0 &&
              position[static_cast<std::size_t>(to)] < position[static_cast<std::size_t>(j)])
            ok = false;
        }
        if (ok) best = std::min(best, serial_schedule(parent, list, d, c, limit));
      } while (std::next_permutation(list.begin(), list.end()));
      return;
    }
    for (int p = 0; p < n; ++p) {
      if (p == i) continue;
      parent[static_cast<std::size_t>(i)] = p;
      choose(i + 1);
    }
  };
  choose(1);
  return best;
}

TEST(GreedyTransfers, EqualsBruteForceUpToSix) {
  for (const Costs& k :
       {Costs{1, 1}, Costs{1, 2}, Costs{2, 1}, Costs{1, 0}, Costs{0, 1}, Costs{1, 5}}) {
    for (int n = 2; n <= 6; ++n) {
      for (std::int64_t limit = 1; limit <= n / 2; ++limit) {
        EXPECT_DOUBLE_EQ(greedy_transfers(n, k, limit).length,
                         brute_force_limited(n, k.d, k.c, limit))
            << "n=" << n << " K=" << limit << " d=" << k.d << " c=" << k.c;
      }
    }
  }
}

TEST(GreedyTransfers, SpecExampleWithoutThePapersPlusC) {
  // Spec §1.2: n = 20, d = c = 1, K = 3 gives 9 (the paper's final loop would give 10).
  const auto tree = greedy_transfers(20, {1, 1}, 3);
  EXPECT_EQ(tree.length, 9);
  check_fixed_time_schedule(tree, {1, 1}, 3);
}

TEST(GreedyTransfers, NoLimitIsAlgorithmOne) {
  for (const Costs& k : cost_pairs()) {
    for (std::int64_t n = 1; n <= 200; n += 9) {
      EXPECT_DOUBLE_EQ(greedy_transfers(n, k, n).length, greedy_optimal(n, k).length) << n;
    }
  }
}

TEST(GreedyReducers, OnlyTheFirstKReceive) {
  for (const Costs& k : cost_pairs()) {
    for (std::int64_t n = 2; n <= 100; n += 7) {
      for (std::int64_t limit : {1, 2, 3, 6}) {
        const auto tree = greedy_reducers(n, k, limit);
        for (std::size_t v = static_cast<std::size_t>(limit); v < tree.children.size(); ++v)
          EXPECT_TRUE(tree.children[v].empty()) << "machine " << v << " receives";
        EXPECT_DOUBLE_EQ(evaluate_in_order(tree, k).length, tree.length);
      }
      // One reducer: the sink receives everything, d + (n-2) max(d, c) + c.
      EXPECT_DOUBLE_EQ(greedy_reducers(n, k, 1).length,
                       k.d + static_cast<Time>(n - 2) * std::max(k.d, k.c) + k.c);
      EXPECT_DOUBLE_EQ(greedy_reducers(n, k, n).length, greedy_optimal(n, k).length);
    }
  }
}

TEST(LimitedBounds, CorrectedBoundHoldsAndThePapersDoesNot) {
  for (const Costs& k : cost_pairs()) {
    for (std::int64_t n = 2; n <= 129; ++n) {
      for (std::int64_t limit = 1; limit <= n / 2; ++limit) {
        const Time bound = limited_upper_bound(n, limit, k);
        EXPECT_LE(greedy_transfers(n, k, limit).length, bound + 1e-9) << n << " " << limit;
        EXPECT_LE(greedy_reducers(n, k, limit).length, bound + 1e-9) << n << " " << limit;
      }
    }
  }
  // The spec's counterexamples to Prop. 8 and Cor. 11 at (d, c) = (1, 0): the paper's bounds
  // give 2, the unconstrained optimum is already 3.
  EXPECT_EQ(greedy_transfers(6, {1, 0}, 3).length, 3);
  EXPECT_EQ(greedy_reducers(5, {1, 0}, 2).length, 3);
}

TEST(LimitedBounds, Theorem10) {
  for (const Costs& k : cost_pairs()) {
    for (std::int64_t n = 2; n <= 90; n += 4) {
      for (std::int64_t limit = 1; limit <= n / 2; ++limit) {
        const Time two = greedy_transfers(n, k, limit).length;
        const Time three = greedy_reducers(n, k, limit).length;
        if (k.d >= k.c) {
          EXPECT_DOUBLE_EQ(two, three) << n << " " << limit;
        } else {
          EXPECT_LE(two, three + 1e-9) << n << " " << limit;
        }
      }
    }
  }
}

TEST(GreedyPlanners, BadArgumentsAreInvalidArgumentsNamingTheValue) {
  const Costs costs{1, 1};
  auto message = [](const std::function<void()>& call) {
    try {
      call();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  auto has = [](const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  };
  EXPECT_PRED2(has, message([&] { greedy_optimal(0, costs); }),
               "a reduction tree needs at least 1 machine, got 0");
  EXPECT_PRED2(has, message([&] { greedy_optimal(std::int64_t{1} << 31, costs); }),
               "a reduction tree takes at most 2^31 - 1 machines, got 2147483648");
  EXPECT_PRED2(has, message([&] { greedy_reducers(5, costs, 0); }),
               "reducers (the K of Algorithm 3) must be >= 1, got 0");
  EXPECT_PRED2(has, message([&] { greedy_transfers(5, costs, -2); }),
               "transfers (the K of Algorithm 2) must be >= 1, got -2");
  EXPECT_PRED2(has, message([&] { plan_greedy_tree(4, costs, 1, 2); }),
               "limit either transfers (1) or reducers (2), not both");
}

}  // namespace
}  // namespace optcoll::algorithms::planners
