// SPDX-License-Identifier: Apache-2.0
// File: the two-tree step schedule (patterns/two_tree.h): a proper edge colouring of the two
// trees, one send and one receive per rank and step, every segment reaching every rank after
// its sender got it, and the step count S − 1 + D(p) with D(p) from its closed form.
#include "optcoll/algorithms/patterns/two_tree.h"

#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/patterns/tree_families.h"

namespace optcoll::algorithms::patterns {
namespace {

// 2·floor(log2(p−1)) + [p−1 ≡ 2 (mod 4) or p−1 = 2^k − 1]; p = 1, 2, 3: 0, 1, 2.
std::int64_t closed_form_depth(Rank p) {
  if (p <= 3) return p - 1;
  const std::int64_t q = p - 1;
  std::int64_t levels = 0;
  for (std::int64_t x = q; x > 1; x /= 2) ++levels;
  return 2 * levels + (q % 4 == 2 || (q & (q + 1)) == 0 ? 1 : 0);
}

TEST(TwoTree, ColouringSeparatesAdjacentEdges) {
  for (Rank p = 2; p <= 300; ++p) {
    for (const Rank root : {Rank{0}, p / 2, p - 1}) {
      const auto trees = double_binary_trees(p, root);
      const auto colours = two_tree_colouring(trees);
      // Per rank: colours of its edges out and its edges in.
      std::vector<std::vector<int>> out(static_cast<std::size_t>(p));
      std::vector<std::vector<int>> in(static_cast<std::size_t>(p));
      for (std::size_t k = 0; k < 2; ++k) {
        for (Rank u = 0; u < p; ++u) {
          for (const Rank v : trees[k].children[static_cast<std::size_t>(u)]) {
            const int c = colours[k][static_cast<std::size_t>(v)];
            ASSERT_TRUE(c == 0 || c == 1);
            out[static_cast<std::size_t>(u)].push_back(c);
            in[static_cast<std::size_t>(v)].push_back(c);
          }
        }
      }
      for (Rank r = 0; r < p; ++r) {
        for (const auto* sides : {&out, &in}) {
          const auto& cs = (*sides)[static_cast<std::size_t>(r)];
          ASSERT_LE(cs.size(), 2u) << "p=" << p << " rank " << r;
          if (cs.size() == 2) {
            EXPECT_NE(cs[0], cs[1]) << "p=" << p << " root=" << root << " rank " << r;
          }
        }
      }
    }
  }
}

TEST(TwoTree, StepsAreOnePortAndComplete) {
  for (Rank p = 1; p <= 70; ++p) {
    for (const Rank root : {Rank{0}, p / 2, p - 1}) {
      for (const Count segments : {1, 2, 3, 4, 7, 10}) {
        const auto plan = two_tree_schedule(p, root, segments);
        const std::string where = "p=" + std::to_string(p) + " root=" + std::to_string(root) +
                                  " S=" + std::to_string(segments);
        std::set<std::pair<std::int64_t, Rank>> sends;
        std::set<std::pair<std::int64_t, Rank>> recvs;
        std::map<std::pair<Rank, Count>, std::int64_t> got;  // (rank, segment) -> step
        std::int64_t last = -1;
        for (const TwoTreeTransfer& x : plan.transfers) {
          EXPECT_GE(x.step, last) << where << ": not sorted by step";
          last = x.step;
          EXPECT_TRUE(sends.insert({x.step, x.from}).second)
              << where << ": rank " << x.from << " sends twice in step " << x.step;
          EXPECT_TRUE(recvs.insert({x.step, x.to}).second)
              << where << ": rank " << x.to << " receives twice in step " << x.step;
          EXPECT_EQ(x.segment % 2 == 0 ? plan.first : 1 - plan.first, x.tree) << where;
          if (x.from != root) {
            const auto held = got.find({x.from, x.segment});
            ASSERT_NE(held, got.end()) << where << ": " << x.from << " forwards a segment it lacks";
            EXPECT_LT(held->second, x.step) << where;
          }
          EXPECT_TRUE(got.insert({{x.to, x.segment}, x.step}).second)
              << where << ": rank " << x.to << " gets segment " << x.segment << " twice";
        }
        EXPECT_EQ(got.size(), static_cast<std::size_t>((p - 1) * segments)) << where;
        EXPECT_EQ(plan.steps, p == 1 ? 0 : segments - 1 + closed_form_depth(p)) << where;
        EXPECT_EQ(plan.steps, last + 1) << where;
      }
    }
  }
}

// The estimates' two_tree_depth_formula at large p, where they use it most: around powers
// of two (where the depth steps) up to 2^17.
TEST(TwoTree, DepthFormulaAtLargeP) {
  for (Rank k = 11; k <= 17; ++k) {
    for (const Rank p : {(Rank{1} << k) - 1, Rank{1} << k, (Rank{1} << k) + 1, (Rank{1} << k) + 2,
                         (Rank{1} << k) + 3}) {
      EXPECT_EQ(two_tree_depth_formula(p), two_tree_depth(p)) << "p=" << p;
    }
  }
}

TEST(TwoTree, DepthMatchesTheClosedForm) {
  for (Rank p = 1; p <= 1200; ++p) {
    EXPECT_EQ(two_tree_depth(p), closed_form_depth(p)) << "p=" << p;
    EXPECT_EQ(two_tree_depth_formula(p), two_tree_depth(p)) << "p=" << p;  // the estimates' form
    if (p >= 2) {
      // Any other segment count: S − 1 more steps (the trees' depths differ by at most one).
      EXPECT_EQ(two_tree_schedule(p, p / 3, 2).steps, 1 + closed_form_depth(p)) << "p=" << p;
    }
  }
}

TEST(TwoTree, HandCheckedSevenRanks) {
  // two_tree.h's example: p = 7, S = 4, 8 steps; step 4 is 2→3 s0, 3→1 s3, 4→2 s2, 5→6 s1,
  // 6→5 s2.
  const auto plan = two_tree_schedule(7, 0, 4);
  EXPECT_EQ(plan.steps, 8);
  std::vector<std::tuple<Rank, Rank, Count>> step4;
  for (const TwoTreeTransfer& x : plan.transfers) {
    if (x.step == 4) step4.emplace_back(x.from, x.to, x.segment);
  }
  const std::vector<std::tuple<Rank, Rank, Count>> expected{
      {2, 3, 0}, {3, 1, 3}, {4, 2, 2}, {5, 6, 1}, {6, 5, 2}};
  EXPECT_EQ(step4, expected);
}

TEST(TwoTree, LargerSegmentsLast) {
  // 10 elements in 4 segments: 2, 2, 3, 3.
  EXPECT_EQ(larger_last_segment(10, 4, 0).offset, 0);
  EXPECT_EQ(larger_last_segment(10, 4, 0).count, 2);
  EXPECT_EQ(larger_last_segment(10, 4, 1).offset, 2);
  EXPECT_EQ(larger_last_segment(10, 4, 2).offset, 4);
  EXPECT_EQ(larger_last_segment(10, 4, 2).count, 3);
  EXPECT_EQ(larger_last_segment(10, 4, 3).offset, 7);
  EXPECT_EQ(larger_last_segment(10, 4, 3).count, 3);
  EXPECT_EQ(larger_last_segment(8, 4, 3).offset, 6);
  EXPECT_EQ(larger_last_segment(8, 4, 3).count, 2);
}

}  // namespace
}  // namespace optcoll::algorithms::patterns
