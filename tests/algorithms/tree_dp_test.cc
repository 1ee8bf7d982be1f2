// SPDX-License-Identifier: Apache-2.0
// File: Träff's gather/scatter tree planners (optcoll/algorithms/planners/gather_trees.h)
// against independent searches written here, against each other, against Proposition 1, and
// against the simulator running the schedules they emit.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/planners/best_root.h"
#include "optcoll/algorithms/planners/gather_trees.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/model/distributions.h"
#include "optcoll/plan/select.h"
#include "optcoll/sim/simulator.h"
#include "tests/testing/registry_cases.h"

namespace optcoll::algorithms::planners {
namespace {

// Random homogeneous problem with integer parameters (exact arithmetic), copy <= beta, and
// about one block in four empty.
GatherProblem random_problem(std::mt19937_64& rng, Rank p, bool zero_copy = false) {
  GatherProblem pb;
  pb.alpha = static_cast<Time>(std::uniform_int_distribution<int>(0, 50)(rng));
  pb.beta = static_cast<Time>(std::uniform_int_distribution<int>(1, 4)(rng));
  pb.copy = zero_copy ? 0 : static_cast<Time>(std::uniform_int_distribution<int>(0, 4)(rng));
  pb.copy = std::min(pb.copy, pb.beta);
  for (Rank i = 0; i < p; ++i) {
    const int m = std::uniform_int_distribution<int>(-8, 30)(rng);
    pb.sizes.push_back(static_cast<Time>(std::max(m, 0)));
  }
  return pb;
}

Time mass(const GatherProblem& pb, Rank i, Rank j) {
  Time s = 0;
  for (Rank q = i; q <= j; ++q) s += pb.sizes[static_cast<std::size_t>(q)];
  return s;
}

// ---- exhaustive search over ordered trees -------------------------------------------------
// The class the paper's DP optimizes (docs/math/gather-scatter-trees.md §2, §3.2): every subtree
// spans a contiguous range; a node receives child ranges so that its segment grows outward (each
// new range adjacent to what it holds), in any interleaving of left and right; it copies first,
// unless its first child lies to its left, then right after that first reception. Every composition
// of the ranges and every interleaving is enumerated by depth-first search.
class OrderedSearch {
 public:
  explicit OrderedSearch(const GatherProblem& pb) : pb_(pb), p_(pb.nranks()) {
    best_.assign(static_cast<std::size_t>(p_ * p_), -1);
  }
  // Best completion of the range [i..j] rooted at r.
  Time rooted(Rank i, Rank j, Rank r) {
    if (i == j) return 0;
    Time best = INFINITY;
    extend(i, j, r, r, r, 0, true, best);
    return best;
  }
  // Best over all roots of [i..j].
  Time range(Rank i, Rank j) {
    Time& memo = best_[static_cast<std::size_t>(i * p_ + j)];
    if (memo >= 0) return memo;
    Time best = INFINITY;
    for (Rank r = i; r <= j; ++r) best = std::min(best, rooted(i, j, r));
    memo = best;
    return best;
  }

 private:
  void extend(Rank i, Rank j, Rank r, Rank lo, Rank hi, Time t, bool first, Time& best) {
    if (lo == i && hi == j) {
      best = std::min(best, t);
      return;
    }
    const Time copy = pb_.copy * pb_.sizes[static_cast<std::size_t>(r)];
    for (Rank x = lo - 1; x >= i; --x) {  // receive [x..lo-1] from the left
      Time u = std::max(t, range(x, lo - 1)) + pb_.message(mass(pb_, x, lo - 1));
      if (first) u += copy;
      extend(i, j, r, x, hi, u, false, best);
    }
    for (Rank y = hi + 1; y <= j; ++y) {  // receive [hi+1..y] from the right
      const Time start = first ? copy : t;
      const Time u = std::max(start, range(hi + 1, y)) + pb_.message(mass(pb_, hi + 1, y));
      extend(i, j, r, lo, y, u, false, best);
    }
  }

  const GatherProblem& pb_;
  Rank p_;
  std::vector<Time> best_;
};

// Strictly rank-ordered binary trees: a root q has at most two child ranges, received in
// rank order with its copy between the ranges left and right of it.
Time binary_search(const GatherProblem& pb, Rank i, Rank j, std::optional<Rank> root) {
  if (i == j) return 0;
  auto item_time = [&](const std::vector<std::pair<Rank, Rank>>& left,
                       const std::vector<std::pair<Rank, Rank>>& right, Rank q) {
    Time t = 0;
    for (const auto& [a, z] : left)
      t = std::max(t, binary_search(pb, a, z, std::nullopt)) + pb.message(mass(pb, a, z));
    t += pb.copy * pb.sizes[static_cast<std::size_t>(q)];
    for (const auto& [a, z] : right)
      t = std::max(t, binary_search(pb, a, z, std::nullopt)) + pb.message(mass(pb, a, z));
    return t;
  };
  Time best = INFINITY;
  for (Rank q = i; q <= j; ++q) {
    if (root && q != *root) continue;
    if (q > i && q < j) {
      best = std::min(best, item_time({{i, q - 1}}, {{q + 1, j}}, q));
    } else if (q == i) {
      best = std::min(best, item_time({}, {{i + 1, j}}, q));
      for (Rank k = i + 1; k < j; ++k)
        best = std::min(best, item_time({}, {{i + 1, k}, {k + 1, j}}, q));
    } else {
      best = std::min(best, item_time({{i, j - 1}}, {}, q));
      for (Rank k = i; k + 1 < j; ++k)
        best = std::min(best, item_time({{i, k}, {k + 1, j - 1}}, {}, q));
    }
  }
  return best;
}

// Every gather tree on p <= 5 ranks, ordered or not: every parent array that reaches the
// root, every order of every node's children, every position of every node's copy, each
// evaluated by Definition 2 (completion_time).
Time all_trees_minimum(const GatherProblem& pb, std::optional<Rank> fixed_root) {
  const Rank p = pb.nranks();
  Time best = INFINITY;
  std::vector<Rank> parent(static_cast<std::size_t>(p));
  std::function<void(Rank)> assign = [&](Rank v) {
    if (v == p) {
      for (Rank root = 0; root < p; ++root) {
        if (fixed_root && root != *fixed_root) continue;
        if (parent[static_cast<std::size_t>(root)] != root) continue;
        // Every other node must reach the root without a cycle, and no other self-loop.
        bool ok = true;
        for (Rank x = 0; x < p && ok; ++x) {
          Rank y = x;
          for (Rank step = 0; step <= p && y != root; ++step) {
            const Rank up = parent[static_cast<std::size_t>(y)];
            if (up == y) break;
            y = up;
          }
          ok = y == root;
        }
        if (!ok) continue;
        TreeShape shape;
        shape.root = root;
        shape.children.resize(static_cast<std::size_t>(p));
        for (Rank x = 0; x < p; ++x) {
          if (x != root)
            shape.children[static_cast<std::size_t>(parent[static_cast<std::size_t>(x)])].push_back(
                x);
        }
        // Enumerate child orders and copy slots node by node.
        std::vector<int> slot(static_cast<std::size_t>(p), 0);
        std::function<void(Rank)> vary = [&](Rank node) {
          if (node == p) {
            best = std::min(best, completion_time(shape, slot, pb));
            return;
          }
          auto& kids = shape.children[static_cast<std::size_t>(node)];
          std::sort(kids.begin(), kids.end());
          do {
            for (int s = 0; s <= static_cast<int>(kids.size()); ++s) {
              slot[static_cast<std::size_t>(node)] = s;
              vary(node + 1);
            }
          } while (std::next_permutation(kids.begin(), kids.end()));
        };
        vary(0);
      }
      return;
    }
    for (Rank u = 0; u < p; ++u) {
      parent[static_cast<std::size_t>(v)] = u;
      assign(v + 1);
    }
  };
  assign(0);
  return best;
}

TEST(TreeDp, UnorderedSearchEqualsEveryTree) {
  std::mt19937_64 rng(19);
  for (int trial = 0; trial < 40; ++trial) {
    const Rank p = 1 + trial % 5;  // 1..5
    const auto pb = random_problem(rng, p, trial % 3 == 0);
    EXPECT_EQ(unordered_optimal_cost(pb, std::nullopt), all_trees_minimum(pb, std::nullopt))
        << "trial " << trial;
    const Rank r = static_cast<Rank>(rng() % static_cast<std::uint64_t>(p));
    EXPECT_EQ(unordered_optimal_cost(pb, r), all_trees_minimum(pb, r)) << "trial " << trial;
  }
}

TEST(TreeDp, OrderingCostsAtMostWhatTheUnorderedOptimumSaves) {
  // Unordered <= ordered optimum, at the best and at every fixed root; budget respected.
  std::mt19937_64 rng(20);
  for (int trial = 0; trial < 60; ++trial) {
    const Rank p = 1 + trial % 10;
    const auto pb = random_problem(rng, p, trial % 2 == 0);
    EXPECT_LE(*unordered_optimal_cost(pb, std::nullopt), optimal_tree(pb, std::nullopt).cost);
    const Rank r = static_cast<Rank>(rng() % static_cast<std::uint64_t>(p));
    EXPECT_LE(*unordered_optimal_cost(pb, r), optimal_tree(pb, r).cost);
  }
  GatherProblem big{std::vector<Time>(13, 1), 1, 1, 0};
  EXPECT_FALSE(unordered_optimal_cost(big, std::nullopt).has_value());
}

TEST(TreeDp, OptimalEqualsExhaustiveSearch) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const Rank p = 2 + trial % 8;  // 2..9
    const auto pb = random_problem(rng, p, trial % 3 == 0);
    OrderedSearch search(pb);
    const auto best = optimal_tree(pb, std::nullopt);
    EXPECT_EQ(best.cost, search.range(0, p - 1)) << "trial " << trial;
    EXPECT_EQ(completion_time(best.shape, best.copy_slot, pb), best.cost) << "trial " << trial;
    for (Rank r = 0; r < p; ++r) {
      const auto fixed = optimal_tree(pb, r);
      EXPECT_EQ(fixed.shape.root, r);
      EXPECT_EQ(fixed.cost, search.rooted(0, p - 1, r)) << "trial " << trial << " root " << r;
      EXPECT_EQ(completion_time(fixed.shape, fixed.copy_slot, pb), fixed.cost);
    }
  }
}

TEST(TreeDp, BinaryEqualsExhaustiveSearch) {
  std::mt19937_64 rng(12);
  for (int trial = 0; trial < 200; ++trial) {
    const Rank p = 2 + trial % 7;  // 2..8
    const auto pb = random_problem(rng, p, trial % 3 == 0);
    const auto best = binary_optimal_tree(pb, std::nullopt);
    EXPECT_EQ(best.cost, binary_search(pb, 0, p - 1, std::nullopt)) << "trial " << trial;
    EXPECT_EQ(completion_time(best.shape, best.copy_slot, pb), best.cost);
    for (Rank r = 0; r < p; ++r) {
      const auto fixed = binary_optimal_tree(pb, r);
      EXPECT_EQ(fixed.shape.root, r);
      EXPECT_EQ(fixed.cost, binary_search(pb, 0, p - 1, r)) << "trial " << trial << " root " << r;
      EXPECT_EQ(completion_time(fixed.shape, fixed.copy_slot, pb), fixed.cost);
    }
  }
}

// ---- the plain program with its tie order, tree included --------------------------------
// C[i][j] by the four cases of optimal_tree_dp.cc in the plain triple loop, keeping the first
// candidate that attains the minimum in the documented order ((5), (6), then by k with (4)
// before (3)), and the tree that choice builds: (5) root i copies first, then receives
// [i+1..j]; (6) root j receives [i..j-1], then copies; (4) at k: the tree of [k+1..j] with
// [i..k] appended to its root's children; (3) at k: the tree of [i..k] with [k+1..j] appended.
struct PlainTree {
  Time cost = 0;
  Rank root = 0;
  std::vector<std::vector<Rank>> children;
  std::vector<int> copy_slot;
};

PlainTree plain_tree_with_ties(const GatherProblem& pb) {
  const auto p = static_cast<std::size_t>(pb.nranks());
  std::vector<Time> prefix(p + 1, 0);
  for (std::size_t i = 0; i < p; ++i) prefix[i + 1] = prefix[i] + pb.sizes[i];
  auto msg = [&](std::size_t a, std::size_t b) { return pb.message(prefix[b + 1] - prefix[a]); };
  std::vector<Time> c(p * p, 0);
  std::vector<int> how(p * p, 0);  // 5, 6, 4, 3
  std::vector<std::size_t> split(p * p, 0);
  for (std::size_t len = 1; len < p; ++len) {
    for (std::size_t i = 0; i + len < p; ++i) {
      const std::size_t j = i + len;
      Time best = std::max(pb.copy * pb.sizes[i], c[(i + 1) * p + j]) + msg(i + 1, j);
      int h = 5;
      std::size_t s = 0;
      const Time v6 = c[i * p + j - 1] + msg(i, j - 1) + pb.copy * pb.sizes[j];
      if (v6 < best) best = v6, h = 6;
      for (std::size_t k = i; k < j; ++k) {
        const Time mx = std::max(c[i * p + k], c[(k + 1) * p + j]);
        if (k + 2 <= j && mx + msg(i, k) < best) best = mx + msg(i, k), h = 4, s = k;
        if (k > i && mx + msg(k + 1, j) < best) best = mx + msg(k + 1, j), h = 3, s = k;
      }
      c[i * p + j] = best;
      how[i * p + j] = h;
      split[i * p + j] = s;
    }
  }
  PlainTree t;
  t.children.resize(p);
  t.copy_slot.assign(p, 0);
  std::function<Rank(std::size_t, std::size_t)> build = [&](std::size_t i, std::size_t j) {
    if (i == j) return static_cast<Rank>(i);
    const int h = how[i * p + j];
    const std::size_t k = split[i * p + j];
    Rank root = 0;
    if (h == 5 || h == 6) {
      root = static_cast<Rank>(h == 5 ? i : j);
      const Rank child = h == 5 ? build(i + 1, j) : build(i, j - 1);
      t.children[static_cast<std::size_t>(root)].push_back(child);
      t.copy_slot[static_cast<std::size_t>(root)] = h == 5 ? 0 : 1;
    } else {
      root = h == 4 ? build(k + 1, j) : build(i, k);
      const Rank child = h == 4 ? build(i, k) : build(k + 1, j);
      t.children[static_cast<std::size_t>(root)].push_back(child);
    }
    return root;
  };
  t.root = build(0, p - 1);
  t.cost = p == 1 ? pb.copy * pb.sizes[0] : c[p - 1];
  return t;
}

// Random problems of the kinds the pruning must survive: the random blocks above (zeros),
// Same (all equal: many exact ties), Spikes-like (k·b with probability 1/k, else 1), sparse
// (long runs of empty blocks; all empty now and then), increasing; alpha = 0, copy = 0, beta = 0 in
// turn; integer parameters (exact arithmetic, margin 0) or fractional ones (rounding, the pruning's
// margin).
GatherProblem pruning_problem(std::mt19937_64& rng, Rank p, int trial) {
  GatherProblem pb = random_problem(rng, p, trial % 2 == 0);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int b = pick(1, 40);
  switch (trial % 5) {
    case 1:  // Same
      for (Time& m : pb.sizes) m = b;
      break;
    case 2: {  // Spikes
      const int k = pick(2, 8);
      for (Time& m : pb.sizes) m = pick(1, k) == 1 ? k * b : 1;
      break;
    }
    case 3:  // increasing, a zero now and then
      for (Rank q = 0; q < p; ++q) {
        pb.sizes[static_cast<std::size_t>(q)] = pick(0, 9) == 0 ? 0 : 2 * b * (q + 1) / p + 1;
      }
      break;
    case 4: {  // sparse: long runs of empty blocks (all empty now and then)
      const int k = trial % 20 == 4 ? 0 : pick(4, 80);
      for (Time& m : pb.sizes) m = k > 0 && pick(1, k) == 1 ? pick(1, 3 * b) : 0;
      break;
    }
    default:
      break;
  }
  if (trial % 3 == 0) pb.alpha = 0;
  if (trial % 7 == 0) pb.beta = 0;
  if (trial % 4 == 1) {  // fractional: alpha, beta, copy and sizes scaled off the integers
    pb.alpha *= 1e-6 * (1 + 0.37 * pick(0, 3));
    pb.beta *= 1e-9 * 1.3;
    pb.copy *= 0.7e-9;
    for (Time& m : pb.sizes) m *= 8.25;
  }
  return pb;
}

TEST(TreeDp, FastDpEqualsPlainTripleLoop) {
  // 3000 instances, p = 1..40 (every case of the segment bookkeeping near the diagonal), then
  // 600 at p = 41..140 and 40 at p = 141..300 (whole blocks: the pruning at work). The cost,
  // the root, every child list and every copy slot equal the plain program's.
  std::mt19937_64 rng(13);
  TreeDpStats total;
  for (int trial = 0; trial < 3640; ++trial) {
    if (!testing::run_trial(trial)) continue;  // a quarter under the sanitizers
    const Rank p = trial < 3000   ? 1 + trial % 40
                   : trial < 3600 ? 41 + trial % 100
                                  : 141 + (trial * 37) % 160;
    const auto pb =
        trial < 1500 ? random_problem(rng, p, trial % 2 == 0) : pruning_problem(rng, p, trial);
    const PlainTree want = plain_tree_with_ties(pb);
    EXPECT_EQ(optimal_cost_plain(pb), want.cost) << "trial " << trial;
    const OrderedTree got = optimal_tree(pb, std::nullopt);
    EXPECT_EQ(got.cost, want.cost) << "trial " << trial << " p " << p;
    EXPECT_EQ(got.shape.root, want.root) << "trial " << trial << " p " << p;
    EXPECT_EQ(got.shape.children, want.children) << "trial " << trial << " p " << p;
    EXPECT_EQ(got.copy_slot, want.copy_slot) << "trial " << trial << " p " << p;
    if (p >= 100) {
      TreeDpStats s;
      const OrderedTree two = optimal_tree_best_root(pb, 2, &s);  // the wavefront: same tree
      EXPECT_EQ(two.cost, want.cost) << "trial " << trial << " p " << p;
      EXPECT_EQ(two.shape.children, want.children) << "trial " << trial << " p " << p;
      EXPECT_EQ(two.copy_slot, want.copy_slot) << "trial " << trial << " p " << p;
      total.splits += s.splits;
      total.evaluated += s.evaluated;
    }
  }
  // The pruning did skip most split points of the larger instances (not a correctness
  // requirement: the check that the instances above exercise it).
  EXPECT_LT(total.evaluated * 2, total.splits) << total.evaluated << " of " << total.splits;
}

// The binary DP's exact block pruning keeps the tree of the unpruned program (cost, root,
// every child list, every copy slot: the tie order included) on instances where blocks are
// pruned (p from 70: every range of more than 16 inner ranks is searched by blocks), in integers
// (many exact ties), fractional parameters, with empty blocks, increasing and spiky sizes,
// alpha = 0, beta = 0 and copy = 0; best root and every fixed root of some.
TEST(TreeDp, BinaryPrunedEqualsUnpruned) {
  std::mt19937_64 rng(41);
  int compared = 0;
  for (int trial = 0; trial < 60; ++trial) {
    if (!testing::run_trial(trial)) continue;  // a quarter under the sanitizers
    const Rank p = 70 + (trial * 37) % 231;    // 70..300
    GatherProblem pb = random_problem(rng, p, trial % 3 == 0);
    switch (trial % 6) {
      case 1:  // increasing
        for (Rank q = 0; q < p; ++q) pb.sizes[static_cast<std::size_t>(q)] = 1 + 3 * q;
        break;
      case 2:  // spikes
        for (Rank q = 0; q < p; ++q) pb.sizes[static_cast<std::size_t>(q)] = q % 17 == 0 ? 500 : 1;
        break;
      case 3:  // fractional parameters
        pb.alpha = 1e-6 * (1 + trial);
        pb.beta = 1e-9 * 3.7;
        pb.copy = 1e-9 * 1.3;
        break;
      case 4:
        pb.alpha = 0;
        break;
      case 5:
        pb.beta = 0;
        pb.copy = 0;
        break;
      default:
        break;
    }
    const auto check = [&](std::optional<Rank> root) {
      const OrderedTree want = binary_optimal_tree_plain(pb, root);
      const OrderedTree got = binary_optimal_tree(pb, root);
      EXPECT_EQ(got.cost, want.cost) << "trial " << trial;
      EXPECT_EQ(got.shape.root, want.shape.root) << "trial " << trial;
      EXPECT_EQ(got.shape.children, want.shape.children) << "trial " << trial;
      EXPECT_EQ(got.copy_slot, want.copy_slot) << "trial " << trial;
      ++compared;
    };
    check(std::nullopt);
    if (trial % 10 == 0) {
      for (const Rank r : {Rank{0}, p / 2, p - 1}) check(r);
    }
  }
  int expected = 0;  // every trial run at the best root, every tenth at three fixed roots too
  for (int trial = 0; trial < 60; ++trial) {
    if (testing::run_trial(trial)) expected += trial % 10 == 0 ? 4 : 1;
  }
  EXPECT_EQ(compared, expected);
  // Träff's Increasing distribution at p = 400: most candidates are never evaluated.
  GatherProblem pb;
  pb.alpha = 100;
  pb.beta = 1;
  pb.copy = 1;
  for (Rank q = 0; q < 400; ++q)
    pb.sizes.push_back(static_cast<Time>(2 * 1000 * (q + 1) / 400 + 1));
  const TreeDpStats s = binary_tree_dp_stats(pb);
  EXPECT_GT(s.splits, 0);
  EXPECT_LT(s.evaluated * 2, s.splits) << s.evaluated << " of " << s.splits;
}

// ---- the binary DP's straightforward O(p^3) program -------------------------------------
// Every candidate of every range in Figure 7's tie order (root i with one child, root i with
// split k ascending, root q ascending with a range on each side, root j with one child, root j
// with split k ascending), each timed by Definition 2's fold over the root's items in rank
// order; the first that attains the minimum wins. `root`: the top range's root, fixed.
PlainTree binary_reference(const GatherProblem& pb, std::optional<Rank> root) {
  const Rank p = pb.nranks();
  const auto at = [p](Rank i, Rank j) { return static_cast<std::size_t>(i * p + j); };
  std::vector<Time> cost(static_cast<std::size_t>(p * p), 0);
  // The chosen root and child ranges of each range ([a, z] pairs in reception order, the
  // root's copy after `before` of them).
  struct Pick {
    Rank q = 0;
    int nkids = 0;
    std::array<std::pair<Rank, Rank>, 2> kids{};
    int before = 0;
  };
  std::vector<Pick> pick(static_cast<std::size_t>(p * p));
  std::vector<Time> masses(static_cast<std::size_t>(p * p), 0);
  for (Rank a = 0; a < p; ++a) {
    for (Rank z = a; z < p; ++z) masses[at(a, z)] = mass(pb, a, z);
  }
  const auto fold = [&](const Pick& c) {
    Time t = 0;
    for (int x = 0; x <= c.nkids; ++x) {
      if (x == c.before) t += pb.copy * pb.sizes[static_cast<std::size_t>(c.q)];
      if (x == c.nkids) break;
      const auto [a, z] = c.kids[static_cast<std::size_t>(x)];
      t = std::max(t, cost[at(a, z)]) + pb.message(masses[at(a, z)]);
    }
    return t;
  };
  for (Rank len = 0; len < p; ++len) {
    for (Rank i = 0; i + len < p; ++i) {
      const Rank j = i + len;
      const bool top = i == 0 && j == p - 1 && root;
      Time best = INFINITY;
      const auto consider = [&](const Pick& c) {  // called in tie order
        const Time v = fold(c);
        if (v < best) best = v, pick[at(i, j)] = c;
      };
      if (len == 0) pick[at(i, j)] = {i, 0, {}, 0};
      if (len > 0 && (!top || *root == i)) {
        consider({i, 1, {{{i + 1, j}}}, 0});
        for (Rank k = i + 1; k < j; ++k) consider({i, 2, {{{i + 1, k}, {k + 1, j}}}, 0});
      }
      for (Rank q = i + 1; q < j; ++q) {
        if (!top || *root == q) consider({q, 2, {{{i, q - 1}, {q + 1, j}}}, 1});
      }
      if (len > 0 && (!top || *root == j)) {
        consider({j, 1, {{{i, j - 1}}}, 1});
        for (Rank k = i; k + 1 < j; ++k) consider({j, 2, {{{i, k}, {k + 1, j - 1}}}, 2});
      }
      cost[at(i, j)] = len == 0 ? 0 : best;
    }
  }
  PlainTree tree;
  tree.children.resize(static_cast<std::size_t>(p));
  tree.copy_slot.assign(static_cast<std::size_t>(p), 0);
  std::function<Rank(Rank, Rank)> build = [&](Rank i, Rank j) {
    const Pick& c = pick[at(i, j)];
    for (int x = 0; x < c.nkids; ++x) {
      const auto [a, z] = c.kids[static_cast<std::size_t>(x)];
      tree.children[static_cast<std::size_t>(c.q)].push_back(build(a, z));
    }
    if (i < j) tree.copy_slot[static_cast<std::size_t>(c.q)] = c.before;
    return c.q;
  };
  tree.root = build(0, p - 1);
  tree.cost = p == 1 ? pb.copy * pb.sizes[0] : cost[at(0, p - 1)];
  return tree;
}

// The binary DP (pruned: three levels of block bounds, a first guess, tiles) against the
// straightforward program above: the same tree bit for bit (cost, root, every child list,
// every copy slot) on random instances of p up to 60 (random sizes with empty blocks,
// spikes, increasing; integer and fractional alpha, beta, copy; alpha = 0, beta = 0, copy =
// 0), best root and fixed roots, and on the paper's distributions (Träff 2019, Section 4:
// b = 1000, alpha 0, 100 and 10^4, beta = copy = 1, and the same in seconds) at p = 60 and 200.
TEST(TreeDp, BinaryEqualsStraightforwardProgram) {
  const auto check = [](const GatherProblem& pb, std::optional<Rank> root,
                        const std::string& what) {
    const PlainTree want = binary_reference(pb, root);
    const OrderedTree got = binary_optimal_tree(pb, root);
    ASSERT_EQ(got.cost, want.cost) << what;
    EXPECT_EQ(got.shape.root, want.root) << what;
    EXPECT_EQ(got.shape.children, want.children) << what;
    EXPECT_EQ(got.copy_slot, want.copy_slot) << what;
  };
  std::mt19937_64 rng(77);
  for (int trial = 0; trial < 400; ++trial) {
    if (!testing::run_trial(trial)) continue;  // a quarter under the sanitizers
    const Rank p = 1 + static_cast<Rank>(rng() % 60);
    GatherProblem pb = random_problem(rng, p, trial % 5 == 0);
    switch (trial % 7) {
      case 1:  // spikes over small blocks
        for (Rank q = 0; q < p; ++q)
          pb.sizes[static_cast<std::size_t>(q)] = rng() % 6 == 0 ? 200 + rng() % 800 : rng() % 4;
        break;
      case 2:  // increasing
        for (Rank q = 0; q < p; ++q) pb.sizes[static_cast<std::size_t>(q)] = 1 + 7 * q;
        break;
      case 3:  // fractional parameters (rounded arithmetic: the bounds' margin)
        pb.alpha = 1e-6 * static_cast<Time>(1 + rng() % 50);
        pb.beta = 1e-9 * 3.7;
        pb.copy = 1e-9 * static_cast<Time>(rng() % 3) * 1.3;
        break;
      case 4:
        pb.alpha = 0;
        break;
      case 5:
        pb.beta = 0;
        pb.copy = 0;
        break;
      case 6:  // copy above beta, large alpha
        pb.copy = pb.beta + 3;
        pb.alpha = 5000;
        break;
      default:
        break;
    }
    const std::string what = "trial " + std::to_string(trial) + " p " + std::to_string(p);
    check(pb, std::nullopt, what);
    if (trial % 4 == 0) {
      for (const Rank r : {Rank{0}, p / 3, p - 1})
        check(pb, r, what + " root " + std::to_string(r));
    }
  }
  // The sanitizer builds leave out p = 200: the reference's O(p^3) loops, most of this
  // test's time under AddressSanitizer, at a size that reaches no other path than p = 60.
  for (const Rank p :
       testing::kSanitizedBuild ? std::vector<Rank>{60} : std::vector<Rank>{60, 200}) {
    for (const Distribution d : all_distributions()) {
      for (const Time alpha : {0.0, 100.0, 1e4}) {
        for (const bool seconds : {false, true}) {
          GatherProblem pb;
          pb.alpha = seconds ? alpha * 1e-8 : alpha;
          pb.beta = pb.copy = seconds ? 1e-8 : 1;
          for (const Count m : distribution_counts(d, p, 1000))
            pb.sizes.push_back(static_cast<Time>(m));
          check(pb, std::nullopt,
                std::string(distribution_name(d)) + " p " + std::to_string(p) + " alpha " +
                    std::to_string(alpha) + (seconds ? " seconds" : ""));
        }
      }
    }
  }
}

TEST(TreeDp, PruningSkipsMostSplitsAndKeepsTheTree) {
  // Träff's Increasing distribution (b = 1000, alpha = 100, beta = copy = 1) at p = 400, in
  // integers (exact: no margin) and scaled to seconds (rounding: the margin): the same tree as
  // the plain program, with many split points never evaluated.
  for (const bool seconds : {false, true}) {
    GatherProblem pb;
    pb.alpha = seconds ? 1e-6 : 100;
    pb.beta = seconds ? 1e-8 : 1;
    pb.copy = pb.beta;
    const Rank p = 400;
    for (Rank q = 0; q < p; ++q) pb.sizes.push_back(static_cast<Time>(2 * 1000 * (q + 1) / p + 1));
    const PlainTree want = plain_tree_with_ties(pb);
    const OrderedTree got = optimal_tree(pb, std::nullopt);
    EXPECT_EQ(got.cost, want.cost);
    EXPECT_EQ(got.shape.root, want.root);
    EXPECT_EQ(got.shape.children, want.children);
    EXPECT_EQ(got.copy_slot, want.copy_slot);
    TreeDpStats s;
    const OrderedTree one = optimal_tree_best_root(pb, 1, &s);
    EXPECT_EQ(one.shape.children, want.children);
    std::int64_t splits = 0;  // ranges of len + 1 ranks have len - 2 middle split points
    for (Rank len = 3; len < p; ++len) splits += std::int64_t{p - len} * (len - 2);
    EXPECT_EQ(s.splits, splits);
    // Exact arithmetic prunes ties too (measured: 29% evaluated); with rounding, candidates
    // that tie in real arithmetic differ by ulps, inside the margin, and are evaluated (52%).
    if (seconds) {
      EXPECT_LT(s.evaluated * 10, s.splits * 6) << s.evaluated << " of " << s.splits;
    } else {
      EXPECT_LT(s.evaluated * 3, s.splits) << s.evaluated << " of " << s.splits;
    }
  }
}

TEST(TreeDp, TwoWorkersBuildTheSameTree) {
  // The wavefront over row tiles at sizes with many tiles (p = 400..1000, 13..32 tiles), every
  // problem kind: the same tree as one worker, and at two sizes the plain program's.
  std::mt19937_64 rng(15);
  for (int trial = 0; trial < 12; ++trial) {
    if (!testing::run_trial(trial)) continue;  // a quarter under the sanitizers
    const Rank p = 400 + 50 * trial;
    const auto pb = pruning_problem(rng, p, trial + 1);
    const OrderedTree one = optimal_tree_best_root(pb, 1);
    const OrderedTree two = optimal_tree_best_root(pb, 2);
    EXPECT_EQ(two.cost, one.cost) << "p " << p;
    EXPECT_EQ(two.shape.root, one.shape.root) << "p " << p;
    EXPECT_EQ(two.shape.children, one.shape.children) << "p " << p;
    EXPECT_EQ(two.copy_slot, one.copy_slot) << "p " << p;
    EXPECT_EQ(completion_time(two.shape, two.copy_slot, pb), two.cost) << "p " << p;
    if (trial % 6 == 0) {
      const PlainTree want = plain_tree_with_ties(pb);
      EXPECT_EQ(two.cost, want.cost) << "p " << p;
      EXPECT_EQ(two.shape.children, want.children) << "p " << p;
    }
  }
}

TEST(TreeDp, OrderOfTheTrees) {
  // Optimal <= binary and optimal <= adaptive <= oblivious at the best root; optimal <= every
  // other tree at a fixed root.
  std::mt19937_64 rng(14);
  for (int trial = 0; trial < 400; ++trial) {
    const Rank p = 1 + trial % 70;
    const auto pb = random_problem(rng, p, trial % 2 == 0);
    const Time opt = plan_tree(TreeKind::kOptimal, pb, std::nullopt).cost;
    EXPECT_LE(opt, plan_tree(TreeKind::kBinaryOptimal, pb, std::nullopt).cost);
    EXPECT_LE(opt, plan_tree(TreeKind::kLinear, pb, std::nullopt).cost);
    const Time adaptive = plan_tree(TreeKind::kAdaptiveBinomial, pb, std::nullopt).cost;
    EXPECT_LE(opt, adaptive) << "trial " << trial;
    EXPECT_LE(adaptive, plan_tree(TreeKind::kObliviousBinomial, pb, std::nullopt).cost)
        << "trial " << trial;
    const Rank r = static_cast<Rank>(rng() % static_cast<std::uint64_t>(p));
    const Time fixed = plan_tree(TreeKind::kOptimal, pb, r).cost;
    // (Not the binary tree: see BinaryCanBeatTheOptimalDpAtAFixedRoot.)
    for (const auto kind :
         {TreeKind::kLinear, TreeKind::kObliviousBinomial, TreeKind::kAdaptiveBinomial}) {
      EXPECT_LE(fixed, plan_tree(kind, pb, r).cost) << "trial " << trial;
    }
  }
}

TEST(TreeDp, BinaryCanBeatTheOptimalDpAtAFixedRoot) {
  // The variable-degree DP's class grows every segment outward from its root; a binary root
  // at the right end receives its farther left range first, outside that class. p = 4,
  // alpha = 4, beta = copy = 1, blocks 5 4 1 4, root 3. Binary by hand: [0] arrives at
  // 4 + 5 = 9; [1..2] (root 1: max(copy 4, 0) + 4 + 1 = 9) arrives at max(9, 9) + 4 + 5 = 18;
  // the copy ends at 22.
  const GatherProblem pb{{5, 4, 1, 4}, 4, 1, 1};
  EXPECT_EQ(binary_optimal_tree(pb, 3).cost, 22);
  OrderedSearch search(pb);
  EXPECT_EQ(optimal_tree(pb, 3).cost, search.rooted(0, 3, 3));
  EXPECT_GT(optimal_tree(pb, 3).cost, 22);
}

TEST(TreeDp, BinomialIsOptimalOnRegularProblems) {
  for (const Rank p : {1, 2, 4, 8, 16, 32, 64}) {
    for (const Time copy : {0.0, 1.0}) {
      GatherProblem pb{std::vector<Time>(static_cast<std::size_t>(p), 7), 20, 1, copy};
      const Time opt = optimal_tree(pb, std::nullopt).cost;
      EXPECT_EQ(plan_tree(TreeKind::kObliviousBinomial, pb, std::nullopt).cost, opt) << p;
      EXPECT_EQ(plan_tree(TreeKind::kAdaptiveBinomial, pb, std::nullopt).cost, opt) << p;
    }
  }
}

TEST(TreeDp, PropositionOne) {
  // Exact for p a power of two, no empty block, copy = beta (gather-scatter-trees.md §4.3): at the
  // tree's root r, log2(p)·alpha + beta·Σ_{i≠r} m_i + copy·m_r.
  std::mt19937_64 rng(15);
  for (int trial = 0; trial < 300; ++trial) {
    const Rank p = Rank{1} << (trial % 7);
    auto pb = random_problem(rng, p);
    pb.copy = pb.beta;
    for (auto& m : pb.sizes) m += 1;
    const auto tree = adaptive_binomial_tree(pb, std::nullopt);
    const Rank r = tree.shape.root;
    const Time bound = std::log2(static_cast<double>(p)) * pb.alpha +
                       pb.beta * (mass(pb, 0, p - 1) - pb.sizes[static_cast<std::size_t>(r)]) +
                       pb.copy * pb.sizes[static_cast<std::size_t>(r)];
    EXPECT_EQ(tree.cost, bound) << "trial " << trial;
  }
}

TEST(TreeDp, PropositionOneIsNotAnUpperBoundInGeneral) {
  // p = 3, alpha = 0, beta = 1, copy = 0, blocks 1 4 5: round 0, rank 0 sends 1 to rank 1
  // (done at 1); round 1 ties (max(1, 0) + 5 = 6 both ways), the lower block sends: root 2
  // finishes at 6 > the formula's 0 + (1 + 4) + 0 = 5.
  const GatherProblem pb{{1, 4, 5}, 0, 1, 0};
  const auto tree = adaptive_binomial_tree(pb, std::nullopt);
  EXPECT_EQ(tree.shape.root, 2);
  EXPECT_EQ(tree.cost, 6);
}

TEST(TreeDp, TwoBlocksLemmaTwoExample) {
  // Spec §7: alpha = 10, beta = copy = 1, b_S = 3, b_L = 200, p = 7: the ordered optimum is
  // 228 with the large block at rank 0, and 238 (+alpha) with it at rank 3 or 6.
  for (const auto& [j, expected] :
       std::vector<std::pair<Rank, Time>>{{0, 228}, {3, 238}, {6, 238}}) {
    GatherProblem pb{std::vector<Time>(7, 3), 10, 1, 1};
    pb.sizes[static_cast<std::size_t>(j)] = 200;
    EXPECT_EQ(optimal_tree(pb, std::nullopt).cost, expected) << j;
    // Lemma 2: the non-ordered optimum gathers the small blocks while j copies its large one:
    // copy·b_L + alpha + beta·(p-1)·b_S = 200 + 10 + 18 = 228 wherever j is.
    EXPECT_EQ(unordered_optimal_cost(pb, std::nullopt), 228) << j;
  }
}

// ---- the schedules: simulated time = planned time -----------------------------------------

TEST(TreeSchedules, SimulatorMatchesThePlan) {
  std::mt19937_64 rng(16);
  const std::vector<std::pair<TreeKind, std::string>> kinds{
      {TreeKind::kOptimal, "optimal"},
      {TreeKind::kAdaptiveBinomial, "adaptive_binomial"},
      {TreeKind::kObliviousBinomial, "oblivious_binomial"},
      {TreeKind::kBinaryOptimal, "binary_optimal"}};
  for (int trial = 0; trial < 60; ++trial) {
    const Rank p = 1 + trial % 24;
    const auto pb = random_problem(rng, p, trial % 2 == 0);
    std::vector<Count> counts;
    for (const Time m : pb.sizes) counts.push_back(static_cast<Count>(m));
    const Rank root = static_cast<Rank>(rng() % static_cast<std::uint64_t>(p));
    CostModel model;
    model.alpha = pb.alpha;
    model.beta = pb.beta;
    model.copy = pb.copy;
    model.ports = 1;
    model.duplex = trial % 3 == 0 ? Duplex::kFull : Duplex::kHalf;
    model.overlap = false;
    for (const auto& [kind, name] : kinds) {
      const Time planned = plan_tree(kind, pb, root).cost;
      for (const auto coll : {CollectiveKind::kGatherv, CollectiveKind::kScatterv}) {
        auto spec = make_spec_v(coll, p, counts, root);
        const auto schedule =
            build(std::string(collective_name(coll)) + "/" + name, spec, {}, model);
        const auto result = simulate(schedule, model);
        ASSERT_EQ(result.status, SimStatus::kOk);
        EXPECT_EQ(result.makespan, planned)
            << collective_name(coll) << "/" << name << " trial " << trial << " p " << p;
      }
    }
  }
}

TEST(TreeSchedules, BestRootHookFindsTheBestRoot) {
  // plan_best_root asks the DPs for their root: the plan it returns must be as fast as the
  // best of planning every root (optimal, binary, oblivious), and the adaptive tree's time.
  std::mt19937_64 rng(17);
  for (int trial = 0; trial < 20; ++trial) {
    const Rank p = 2 + trial % 11;
    const auto pb = random_problem(rng, p, trial % 2 == 0);
    std::vector<Count> counts;
    for (const Time m : pb.sizes) counts.push_back(static_cast<Count>(m));
    CostModel model;
    model.alpha = pb.alpha;
    model.beta = pb.beta;
    model.copy = pb.copy;
    model.duplex = Duplex::kHalf;
    for (const std::string coll : {"gatherv", "scatterv"}) {
      const auto kind = coll == "gatherv" ? CollectiveKind::kGatherv : CollectiveKind::kScatterv;
      const auto spec = make_spec_v(kind, p, counts, 0);
      for (const std::string name : {"optimal", "binary_optimal", "oblivious_binomial"}) {
        Time every_root = INFINITY;
        for (Rank r = 0; r < p; ++r) {
          auto at_r = spec;
          at_r.root = r;
          every_root = std::min(every_root, plan(at_r, model, coll + "/" + name).predicted_time);
        }
        EXPECT_EQ(plan_best_root(spec, model, coll + "/" + name).predicted_time, every_root)
            << coll << "/" << name << " trial " << trial;
      }
      EXPECT_EQ(plan_best_root(spec, model, coll + "/adaptive_binomial").predicted_time,
                adaptive_binomial_tree(pb, std::nullopt).cost);
    }
  }
}

TEST(TreeSchedules, BestRootHooksAreTheTreePlanners) {
  // The algorithms whose planner chooses its root (docs/design.md, "Best-root hook"): Träff's
  // four gather/scatter trees and the Theorem 4 bcast/reduce trees. Every other algorithm
  // has no hook (plan_best_root searches roots for it).
  const auto has_hook = [](const algorithms::AlgorithmInfo& info) {
    const std::string_view name = info.short_name();
    switch (info.collective) {
      case CollectiveKind::kGather:
      case CollectiveKind::kGatherv:
      case CollectiveKind::kScatter:
      case CollectiveKind::kScatterv:
        return name == "optimal" || name == "adaptive_binomial" || name == "oblivious_binomial" ||
               name == "binary_optimal";
      case CollectiveKind::kBcast:
      case CollectiveKind::kReduce:
        return name == "optimal_ordered";
      default:
        return false;
    }
  };
  const auto spec_for = [](CollectiveKind kind) {
    if (kind == CollectiveKind::kBarrier) return make_spec(kind, 6, 0);
    if (!takes_counts(kind)) return make_spec(kind, 6, 12);
    std::vector<Count> counts{1, 5, 0, 3, 7, 2};
    if (kind == CollectiveKind::kAlltoallv) counts.resize(36, 4);
    return make_spec_v(kind, 6, counts);
  };
  CostModel model;
  model.alpha = 10;
  int hooks = 0;
  for (const auto& info : algorithms::all_algorithms()) {
    const auto spec = spec_for(info.collective);
    const auto root = algorithms::planned_best_root(info, spec, {}, model);
    EXPECT_EQ(root.has_value(), has_hook(info)) << info.name;
    if (root) {
      ++hooks;
      EXPECT_GE(*root, 0) << info.name;
      EXPECT_LT(*root, spec.nranks) << info.name;
    }
    // A hook answers only for its own collective.
    const auto other =
        spec_for(info.collective == CollectiveKind::kGather ? CollectiveKind::kScatter
                                                            : CollectiveKind::kGather);
    EXPECT_FALSE(algorithms::planned_best_root(info, other, {}, model)) << info.name;
  }
  EXPECT_EQ(hooks, 18);
}

TEST(TreeDp, BestAndFixedFromOneTable) {
  std::mt19937_64 rng(18);
  for (int trial = 0; trial < 100; ++trial) {
    const Rank p = 1 + trial % 30;
    const auto pb = random_problem(rng, p, trial % 2 == 0);
    const Rank r = static_cast<Rank>(rng() % static_cast<std::uint64_t>(p));
    const auto opt = optimal_trees_best_and_fixed(pb, r);
    EXPECT_EQ(opt.first.cost, optimal_tree(pb, std::nullopt).cost);
    EXPECT_EQ(opt.first.shape, optimal_tree(pb, std::nullopt).shape);
    EXPECT_EQ(opt.second.cost, optimal_tree(pb, r).cost);
    const auto bin = binary_trees_best_and_fixed(pb, r);
    EXPECT_EQ(bin.first.cost, binary_optimal_tree(pb, std::nullopt).cost);
    EXPECT_EQ(bin.second.cost, binary_optimal_tree(pb, r).cost);
  }
}

// ---- non-homogeneous costs (docs/math/gather-scatter-trees.md §3.3) ------------------------

// Random pair costs (integers, so every time is exact): alpha_st in [0, 40], beta_st in [1, 5],
// copy <= every beta.
GatherProblem random_pair_problem(std::mt19937_64& rng, Rank p) {
  GatherProblem pb = random_problem(rng, p, rng() % 3 == 0);
  const auto n = static_cast<std::size_t>(p);
  pb.copy = std::min<Time>(pb.copy, 1);
  pb.pair_alpha.resize(n * n);
  pb.pair_beta.resize(n * n);
  for (std::size_t q = 0; q < n * n; ++q) {
    pb.pair_alpha[q] = static_cast<Time>(std::uniform_int_distribution<int>(0, 40)(rng));
    pb.pair_beta[q] = static_cast<Time>(std::uniform_int_distribution<int>(1, 5)(rng));
  }
  return pb;
}

// Definition 2 under pair costs, written out here (child -> parent messages).
Time pair_completion(const TreeShape& shape, const std::vector<int>& slot, const GatherProblem& pb,
                     Rank v, Time* total) {
  const auto& kids = shape.children[static_cast<std::size_t>(v)];
  const bool copies = v == shape.root || !kids.empty();
  const auto n = pb.sizes.size();
  Time t = 0;
  *total = pb.sizes[static_cast<std::size_t>(v)];
  for (std::size_t q = 0; q <= kids.size(); ++q) {
    if (copies && static_cast<int>(q) == slot[static_cast<std::size_t>(v)])
      t += pb.copy * pb.sizes[static_cast<std::size_t>(v)];
    if (q == kids.size()) break;
    Time sub = 0;
    const Time done = pair_completion(shape, slot, pb, kids[q], &sub);
    const std::size_t e = static_cast<std::size_t>(kids[q]) * n + static_cast<std::size_t>(v);
    t = std::max(t, done) + (sub > 0 ? pb.pair_alpha[e] + pb.pair_beta[e] * sub : 0);
    *total += sub;
  }
  return t;
}

// Every tree of the ordered class, built explicitly (continuation passing): a node's segment
// grows outward by whole child ranges, left or right in any interleaving, each child range
// with any root and any subtree; the node copies first unless its first child is on its left,
// then right after that reception. Each complete tree is evaluated by pair_completion.
class PairTreeEnumerator {
 public:
  explicit PairTreeEnumerator(const GatherProblem& pb) : pb_(pb), p_(pb.nranks()) {}

  Time best(std::optional<Rank> root) {
    Time best = INFINITY;
    for (Rank r = 0; r < p_; ++r) {
      if (root && r != *root) continue;
      shape_.root = r;
      shape_.children.assign(static_cast<std::size_t>(p_), {});
      slot_.assign(static_cast<std::size_t>(p_), 0);
      subtree(0, p_ - 1, r, [&] {
        Time total = 0;
        best = std::min(best, pair_completion(shape_, slot_, pb_, r, &total));
        ++trees_;
      });
    }
    return best;
  }
  long trees() const { return trees_; }

 private:
  void subtree(Rank i, Rank j, Rank r, const std::function<void()>& done) {
    grow(i, j, r, r, r, done);
  }
  void grow(Rank i, Rank j, Rank r, Rank lo, Rank hi, const std::function<void()>& done) {
    if (lo == i && hi == j) {
      done();
      return;
    }
    auto& kids = shape_.children[static_cast<std::size_t>(r)];
    const bool first = kids.empty();
    for (Rank x = lo - 1; x >= i; --x) {  // child range [x..lo-1]
      for (Rank c = x; c <= lo - 1; ++c) {
        kids.push_back(c);
        if (first) slot_[static_cast<std::size_t>(r)] = 1;
        subtree(x, lo - 1, c, [&, x] { grow(i, j, r, x, hi, done); });
        kids.pop_back();
      }
    }
    for (Rank y = hi + 1; y <= j; ++y) {  // child range [hi+1..y]
      for (Rank c = hi + 1; c <= y; ++c) {
        kids.push_back(c);
        if (first) slot_[static_cast<std::size_t>(r)] = 0;
        subtree(hi + 1, y, c, [&, y] { grow(i, j, r, lo, y, done); });
        kids.pop_back();
      }
    }
  }

  const GatherProblem& pb_;
  Rank p_;
  TreeShape shape_;
  std::vector<int> slot_;
  long trees_ = 0;
};

TEST(NonHomogeneousDp, EnumeratorMatchesTheHomogeneousSearch) {
  // The enumerator itself, on homogeneous costs written as pairs: the known search's optimum.
  std::mt19937_64 rng(30);
  for (int trial = 0; trial < 30; ++trial) {
    const Rank p = 1 + trial % 6;
    GatherProblem pb = random_problem(rng, p, trial % 3 == 0);
    const auto n = static_cast<std::size_t>(p);
    pb.pair_alpha.assign(n * n, pb.alpha);
    pb.pair_beta.assign(n * n, pb.beta);
    GatherProblem homogeneous = pb;
    homogeneous.pair_alpha.clear();
    homogeneous.pair_beta.clear();
    OrderedSearch search(homogeneous);
    PairTreeEnumerator all(pb);
    EXPECT_EQ(all.best(std::nullopt), p == 1 ? pb.copy * pb.sizes[0] : search.range(0, p - 1))
        << "trial " << trial;
  }
}

TEST(NonHomogeneousDp, EqualsExhaustiveSearchOverOrderedTrees) {
  std::mt19937_64 rng(31);
  long trees = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const Rank p = 1 + trial % 7;  // 1..7
    const auto pb = random_pair_problem(rng, p);
    PairTreeEnumerator all(pb);
    const auto best = optimal_tree_nonhomogeneous(pb, std::nullopt);
    EXPECT_EQ(best.cost, all.best(std::nullopt)) << "trial " << trial << " p " << p;
    EXPECT_EQ(completion_time(best.shape, best.copy_slot, pb), best.cost) << "trial " << trial;
    EXPECT_EQ(optimal_cost_nonhomogeneous_literal(pb, std::nullopt), best.cost);
    for (Rank r = 0; r < p; ++r) {
      const auto fixed = optimal_tree_nonhomogeneous(pb, r);
      EXPECT_EQ(fixed.shape.root, r);
      EXPECT_EQ(fixed.cost, all.best(r)) << "trial " << trial << " root " << r;
      EXPECT_EQ(completion_time(fixed.shape, fixed.copy_slot, pb), fixed.cost);
      Time total = 0;
      EXPECT_EQ(pair_completion(fixed.shape, fixed.copy_slot, pb, r, &total), fixed.cost);
      EXPECT_EQ(optimal_cost_nonhomogeneous_literal(pb, r), fixed.cost);
    }
    trees += all.trees();
  }
  EXPECT_GT(trees, 100000);  // the enumeration really enumerates
}

TEST(NonHomogeneousDp, FastEqualsLiteralRecurrence) {
  std::mt19937_64 rng(32);
  for (int trial = 0; trial < 200; ++trial) {
    const Rank p = 1 + trial % 24;
    auto pb = random_pair_problem(rng, p);
    if (trial % 4 == 1) {  // wide spread: some links 100x slower
      for (auto& a : pb.pair_alpha) a *= (rng() % 5 == 0 ? 100 : 1);
    }
    const Rank r = static_cast<Rank>(rng() % static_cast<std::uint64_t>(p));
    const auto best = optimal_tree_nonhomogeneous(pb, std::nullopt);
    EXPECT_EQ(best.cost, optimal_cost_nonhomogeneous_literal(pb, std::nullopt)) << trial;
    EXPECT_EQ(completion_time(best.shape, best.copy_slot, pb), best.cost) << trial;
    const auto fixed = optimal_tree_nonhomogeneous(pb, r);
    EXPECT_EQ(fixed.cost, optimal_cost_nonhomogeneous_literal(pb, r)) << trial;
    EXPECT_EQ(completion_time(fixed.shape, fixed.copy_slot, pb), fixed.cost) << trial;
  }
}

TEST(NonHomogeneousDp, AllPairsEqualGiveTheHomogeneousOptimum) {
  std::mt19937_64 rng(33);
  for (int trial = 0; trial < 150; ++trial) {
    const Rank p = 1 + trial % 30;
    const auto homogeneous = random_problem(rng, p, trial % 2 == 0);
    GatherProblem pb = homogeneous;
    const auto n = static_cast<std::size_t>(p);
    pb.pair_alpha.assign(n * n, pb.alpha);
    pb.pair_beta.assign(n * n, pb.beta);
    EXPECT_EQ(optimal_tree_nonhomogeneous(pb, std::nullopt).cost,
              optimal_tree(homogeneous, std::nullopt).cost)
        << "trial " << trial;
    // The homogeneous problem itself (no matrices) goes through the same program.
    EXPECT_EQ(optimal_tree_nonhomogeneous(homogeneous, std::nullopt).cost,
              optimal_tree(homogeneous, std::nullopt).cost);
    const Rank r = static_cast<Rank>(rng() % static_cast<std::uint64_t>(p));
    EXPECT_EQ(optimal_tree_nonhomogeneous(pb, r).cost, optimal_tree(homogeneous, r).cost)
        << "trial " << trial << " root " << r;
  }
}

TEST(NonHomogeneousDp, WorkedExample) {
  // The header's example: p = 3, sizes 0 5 5, copy 0, alpha 0 but alpha_{1,2} = 100, beta 1.
  GatherProblem pb{{0, 5, 5}, 0, 1, 0};
  pb.pair_alpha.assign(9, 0);
  pb.pair_beta.assign(9, 1);
  pb.pair_alpha[1 * 3 + 2] = 100;
  const auto tree = optimal_tree_nonhomogeneous(pb, 2);
  EXPECT_EQ(tree.cost, 10);
  EXPECT_EQ(tree.shape.children[2], std::vector<Rank>{0});
  EXPECT_EQ(tree.shape.children[0], std::vector<Rank>{1});
  // The homogeneous DP (alpha = 0) does not see the slow link; its tree (child 1) costs
  // 105 here.
  const auto blind = optimal_tree(GatherProblem{{0, 5, 5}, 0, 1, 0}, 2);
  EXPECT_GE(completion_time(blind.shape, blind.copy_slot, pb), tree.cost);
}

TEST(TreeSchedules, SimulatorMatchesThePlanUnderPairCosts) {
  // gather(v)/optimal and scatter(v)/optimal plan with the model's matrices (scatter: the
  // parent -> child direction) and the simulator reproduces the planned time exactly.
  std::mt19937_64 rng(34);
  for (int trial = 0; trial < 40; ++trial) {
    const Rank p = 1 + trial % 16;
    const auto pb = random_pair_problem(rng, p);
    std::vector<Count> counts;
    for (const Time m : pb.sizes) counts.push_back(static_cast<Count>(m));
    const Rank root = static_cast<Rank>(rng() % static_cast<std::uint64_t>(p));
    CostModel model;
    model.copy = pb.copy;
    model.duplex = trial % 2 == 0 ? Duplex::kFull : Duplex::kHalf;
    model.pair_nranks = p;
    model.pair_alpha = pb.pair_alpha;
    model.pair_beta = pb.pair_beta;
    for (const auto coll : {CollectiveKind::kGatherv, CollectiveKind::kScatterv}) {
      const auto direction =
          coll == CollectiveKind::kGatherv ? TreeDirection::kGather : TreeDirection::kScatter;
      auto spec = make_spec_v(coll, p, counts, root);
      const auto problem = gather_problem(Layout(spec), model, spec.elem_bytes, direction);
      const Time planned = optimal_tree_nonhomogeneous(problem, root).cost;
      const auto schedule = build(std::string(collective_name(coll)) + "/optimal", spec, {}, model);
      const auto result = simulate(schedule, model);
      ASSERT_EQ(result.status, SimStatus::kOk);
      EXPECT_EQ(result.makespan, planned) << collective_name(coll) << " trial " << trial;
      // Best root: the hook answers with the DP's root, and that plan is the best of all roots.
      Time every_root = INFINITY;
      for (Rank r = 0; r < p; ++r) {
        auto at_r = spec;
        at_r.root = r;
        every_root = std::min(
            every_root,
            plan(at_r, model, std::string(collective_name(coll)) + "/optimal").predicted_time);
      }
      const std::string name = std::string(collective_name(coll)) + "/optimal";
      EXPECT_EQ(plan_best_root(spec, model, name).predicted_time, every_root)
          << name << " trial " << trial;
      EXPECT_EQ(every_root, optimal_tree_nonhomogeneous(problem, std::nullopt).cost);
    }
  }
}

}  // namespace
}  // namespace optcoll::algorithms::planners
