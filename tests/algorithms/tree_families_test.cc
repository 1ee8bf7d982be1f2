// SPDX-License-Identifier: Apache-2.0
// File: geometry of the tree families (heap binary, in-order binary, k-nomial, chains) and
// their slot counts, against definitions written out here.
#include "optcoll/algorithms/patterns/tree_families.h"

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/patterns/tree.h"
#include "optcoll/algorithms/patterns/tree_emit.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/model/cost_model.h"

namespace optcoll::algorithms::patterns {
namespace {

// Rank ranges of every subtree: {lo, hi, size}.
struct Range {
  Rank lo, hi, size;
};
Range range_of(const TreeShape& t, Rank v) {
  Range r{v, v, 1};
  for (const Rank c : t.children[static_cast<std::size_t>(v)]) {
    const Range s = range_of(t, c);
    r = {std::min(r.lo, s.lo), std::max(r.hi, s.hi), r.size + s.size};
  }
  return r;
}

TEST(AutoSegments, StopAt1024EvenWithoutStartUpCost) {
  // alpha = 0: the formula's optimum is one element per segment; auto stops at 1024
  // segments (tree_params.cc) so that a schedule stays O(1024 x edges) ops.
  CostModel model;
  model.alpha = 0;
  const auto spec = make_spec(CollectiveKind::kBcast, 16, 100000);
  for (const char* name : {"bcast/pipelined_chain", "bcast/pipelined_binary"}) {
    const auto schedule = algorithms::build(name, spec, {}, model);
    const auto segment = algorithms::Params::parse(schedule.params).get_int("segment");
    EXPECT_GE(segment, (100000 + 1023) / 1024) << name;
    EXPECT_LE(segment, 100000 / 512) << name;  // still deeply pipelined
  }
}

TEST(HeapBinaryTree, ParentIsHalfTheVirtualRank) {
  for (Rank p = 1; p <= 40; ++p) {
    for (const Rank root : {Rank{0}, p / 2, p - 1}) {
      const auto t = heap_binary_tree(p, root, ChildOrder::kLargestFirst);
      ASSERT_NO_THROW(check_tree(t, p));
      const auto parents = t.parents();
      for (Rank v = 1; v < p; ++v) {
        EXPECT_EQ(parents[static_cast<std::size_t>((v + root) % p)], ((v - 1) / 2 + root) % p);
      }
      // Largest first: the odd virtual child comes first.
      for (const auto& kids : t.children) {
        if (kids.size() == 2) {
          EXPECT_EQ((kids[0] - root + p) % p % 2, 1);
        }
      }
    }
  }
}

TEST(InorderBinaryTree, SubtreesAreRankRangesLeftBelowRightAbove) {
  for (Rank p = 1; p <= 40; ++p) {
    for (Rank root = 0; root < p; ++root) {
      const auto t = inorder_binary_tree(p, root);
      ASSERT_NO_THROW(check_tree(t, p));
      EXPECT_EQ(t.root, root);
      for (Rank v = 0; v < p; ++v) {
        const Range r = range_of(t, v);
        EXPECT_EQ(r.hi - r.lo + 1, r.size) << "p=" << p << " root=" << root << " v=" << v;
        const auto& kids = t.children[static_cast<std::size_t>(v)];
        ASSERT_LE(kids.size(), 2u);
        // Children listed outward: a child below v comes before a child above v.
        if (kids.size() == 2) {
          EXPECT_LT(range_of(t, kids[0]).hi, v);
          EXPECT_GT(range_of(t, kids[1]).lo, v);
        }
      }
      // Height: one more than the taller balanced side, ceil(log2(size + 1)) - 1 each.
      auto balanced = [](Rank size) {
        int h = 0;
        while ((Rank{1} << h) < size + 1) ++h;
        return h - 1;
      };
      const int sides = std::max(balanced(root), balanced(p - 1 - root));
      EXPECT_EQ(tree_height(t), p == 1 ? 0 : sides + 1) << "p=" << p << " root=" << root;
    }
  }
}

TEST(KnomialTree, RadixTwoIsTheBinomialTree) {
  for (Rank p = 1; p <= 40; ++p) {
    for (const auto order : {ChildOrder::kLargestFirst, ChildOrder::kSmallestFirst}) {
      EXPECT_EQ(knomial_tree(p, p / 3, 2, order), binomial_tree(p, p / 3, order)) << "p=" << p;
    }
  }
}

TEST(KnomialTree, ParentClearsTheLowestNonZeroDigit) {
  for (const Rank k : {3, 4, 5}) {
    for (Rank p = 1; p <= 70; ++p) {
      const auto t = knomial_tree(p, 0, k, ChildOrder::kSmallestFirst);
      ASSERT_NO_THROW(check_tree(t, p));
      const auto parents = t.parents();
      for (Rank v = 1; v < p; ++v) {
        Rank w = 1;
        while (v % (w * k) == 0) w *= k;
        EXPECT_EQ(parents[static_cast<std::size_t>(v)], v - v % (w * k)) << "k=" << k;
      }
      // Root 0, smallest first: children in increasing rank order, subtrees rank ranges.
      for (Rank v = 0; v < p; ++v) {
        const auto& kids = t.children[static_cast<std::size_t>(v)];
        EXPECT_TRUE(std::is_sorted(kids.begin(), kids.end()));
        const Range r = range_of(t, v);
        EXPECT_EQ(r.hi - r.lo + 1, r.size);
      }
    }
  }
}

TEST(Chains, VirtualAndSplit) {
  for (Rank p = 1; p <= 20; ++p) {
    for (Rank root = 0; root < p; ++root) {
      const auto v = virtual_chain(p, root);
      ASSERT_NO_THROW(check_tree(v, p));
      EXPECT_EQ(tree_height(v), p - 1);
      const auto s = split_chain(p, root);
      ASSERT_NO_THROW(check_tree(s, p));
      EXPECT_EQ(tree_height(s), std::max(root, p - 1 - root));
      for (Rank r = 0; r < p; ++r) {
        const Range range = range_of(s, r);
        EXPECT_EQ(range.hi - range.lo + 1, range.size);
      }
    }
  }
}

TEST(DoubleBinaryTrees, ValidTreesAndEveryRankALeafInOne) {
  for (Rank p = 1; p <= 70; ++p) {
    for (const Rank root : {Rank{0}, p / 2, p - 1}) {
      const auto trees = double_binary_trees(p, root);
      for (const auto& t : trees) {
        ASSERT_NO_THROW(check_tree(t, p)) << "p=" << p;
        EXPECT_LE(t.children[static_cast<std::size_t>(root)].size(), p > 1 ? 1u : 0u);
        for (const auto& kids : t.children) EXPECT_LE(kids.size(), 2u);
      }
      int leaf_in_both = 0;
      for (Rank r = 0; r < p; ++r) {
        if (r == root) continue;
        const bool leaf0 = trees[0].children[static_cast<std::size_t>(r)].empty();
        const bool leaf1 = trees[1].children[static_cast<std::size_t>(r)].empty();
        EXPECT_TRUE(leaf0 || leaf1) << "p=" << p << " rank " << r << " is inner in both";
        leaf_in_both += leaf0 && leaf1 ? 1 : 0;
      }
      // Even p − 1: exactly one tree each; odd p − 1: position 1 is a leaf in both.
      EXPECT_EQ(leaf_in_both, (p - 1) % 2 == 1 ? 1 : 0) << "p=" << p;
    }
  }
}

TEST(Slots, HandCountedTrees) {
  // p = 7 heap tree, largest first: 0→1 (1), 0→2 (2), 1→3 (2), 1→4 (3), 2→5 (3), 2→6 (4).
  EXPECT_EQ(bcast_slots(heap_binary_tree(7, 0, ChildOrder::kLargestFirst)), 4);
  // p = 4: 0→1, 0→2 ‖ 1→3: 2 slots.
  EXPECT_EQ(bcast_slots(heap_binary_tree(4, 0, ChildOrder::kLargestFirst)), 2);
  // reduce p = 4, smaller child first: 3→1 ‖ 2→0, then 1→0: 2 slots; p = 7: 4 slots.
  EXPECT_EQ(reduce_slots(heap_binary_tree(4, 0, ChildOrder::kSmallestFirst)), 2);
  EXPECT_EQ(reduce_slots(heap_binary_tree(7, 0, ChildOrder::kSmallestFirst)), 4);
  // A chain of p ranks: p - 1 slots both ways; a flat tree: p - 1 slots.
  EXPECT_EQ(bcast_slots(virtual_chain(9, 4)), 8);
  EXPECT_EQ(reduce_slots(virtual_chain(9, 4)), 8);
  EXPECT_EQ(bcast_slots(flat_tree(9, 0)), 8);
  EXPECT_EQ(max_fanout(flat_tree(9, 0)), 8);
  // k-nomial p = k^L: L(k-1) slots.
  EXPECT_EQ(bcast_slots(knomial_tree(27, 0, 3, ChildOrder::kLargestFirst)), 6);
  EXPECT_EQ(reduce_slots(knomial_tree(64, 5, 4, ChildOrder::kSmallestFirst)), 9);
}

}  // namespace
}  // namespace optcoll::algorithms::patterns
