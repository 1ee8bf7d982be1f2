// SPDX-License-Identifier: Apache-2.0
// File: pure arithmetic properties of the tree and ring geometry.
#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/patterns/levels.h"
#include "optcoll/algorithms/patterns/partition.h"
#include "optcoll/algorithms/patterns/ring.h"
#include "optcoll/algorithms/patterns/tree.h"
#include "optcoll/algorithms/patterns/tree_emit.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/model/error.h"

namespace optcoll::algorithms::patterns {
namespace {

int ceil_log2(Rank p) {
  int bits = 0;
  while ((Rank{1} << bits) < p) ++bits;
  return bits;
}

// Depth of virtual rank v is popcount(v); the root has ceil(log2 p) children, i.e. the
// tree finishes in ceil(log2 p) one-ported rounds.
int max_popcount_below(Rank p) {
  int best = 0;
  for (Rank v = 0; v < p; ++v) best = std::max(best, __builtin_popcount(static_cast<unsigned>(v)));
  return best;
}

// A phase over many groups: the slowest group's time, every group's bytes and work, each
// group priced as alone. Equal specs are priced once (levels.cc); twelve distinct sizes,
// revisited in a different order, outnumber what it remembers.
TEST(LevelEstimate, IsTheSlowestGroupAndEveryGroupsBytesAndWork) {
  const AlgorithmInfo& info = lookup("bcast/binomial", CollectiveKind::kBcast);
  const CostModel model = reference_cluster_model();
  std::vector<CollectiveSpec> specs;
  for (const Rank q : {64, 64, 3, 64, 5, 3})
    specs.push_back(make_spec(CollectiveKind::kBcast, q, 1000));
  for (Rank q = 2; q < 14; ++q) specs.push_back(make_spec(CollectiveKind::kBcast, q, 100));
  for (Rank q = 13; q >= 2; --q) specs.push_back(make_spec(CollectiveKind::kBcast, q, 100));
  Time slowest = 0;
  std::uint64_t bytes = 0;
  double work = 0;
  for (const CollectiveSpec& s : specs) {
    const auto alone = info.estimate(s, resolve_params(info, {}), model);
    ASSERT_TRUE(alone.has_value());
    slowest = std::max(slowest, alone->time);
    bytes += alone->bytes;
    work += alone->work;
  }
  const auto together = level_estimate(info, specs, model);
  ASSERT_TRUE(together.has_value());
  EXPECT_EQ(together->time, slowest);
  EXPECT_EQ(together->bytes, bytes);
  EXPECT_DOUBLE_EQ(together->work, work);
}

TEST(BinomialTree, EveryRankButTheRootHasOneParentAndRootHasCeilLog2Children) {
  for (Rank p = 1; p <= 70; ++p) {
    for (const Rank root : {0, p / 3, p - 1}) {
      for (const auto order : {ChildOrder::kLargestFirst, ChildOrder::kSmallestFirst}) {
        const TreeShape tree = binomial_tree(p, root, order);
        EXPECT_NO_THROW(check_tree(tree, p));
        const auto parent = tree.parents();
        for (Rank r = 0; r < p; ++r) {
          if (r == root) {
            EXPECT_EQ(parent[static_cast<std::size_t>(r)], kNoRank);
          } else {
            EXPECT_NE(parent[static_cast<std::size_t>(r)], kNoRank) << "p=" << p << " r=" << r;
          }
        }
        EXPECT_EQ(tree_height(tree), max_popcount_below(p)) << "p=" << p;
        EXPECT_EQ(static_cast<int>(tree.children[static_cast<std::size_t>(root)].size()),
                  ceil_log2(p));
      }
    }
  }
}

TEST(BinomialTree, ParentClearsLowestBitOfVirtualRank) {
  const Rank p = 13;
  const Rank root = 5;
  const auto parent = binomial_tree(p, root, ChildOrder::kLargestFirst).parents();
  for (Rank v = 1; v < p; ++v) {
    const Rank expected = to_real(v & (v - 1), root, p);
    EXPECT_EQ(parent[static_cast<std::size_t>(to_real(v, root, p))], expected) << v;
  }
}

TEST(BinomialTree, ChildOrderIsBySubtreeSize) {
  const TreeShape large = binomial_tree(8, 0, ChildOrder::kLargestFirst);
  EXPECT_EQ(large.children[0], (std::vector<Rank>{4, 2, 1}));
  EXPECT_EQ(large.children[4], (std::vector<Rank>{6, 5}));
  const TreeShape small = binomial_tree(8, 0, ChildOrder::kSmallestFirst);
  EXPECT_EQ(small.children[0], (std::vector<Rank>{1, 2, 4}));
}

TEST(FlatTree, RootHasEveryOtherRankInOrder) {
  const TreeShape tree = flat_tree(5, 2);
  EXPECT_EQ(tree.children[2], (std::vector<Rank>{0, 1, 3, 4}));
  EXPECT_EQ(tree_height(tree), 1);
  EXPECT_EQ(tree_height(flat_tree(1, 0)), 0);
}

TEST(CheckTree, RejectsBrokenShapes) {
  TreeShape cycle;
  cycle.root = 0;
  cycle.children = {{1}, {2}, {1}};
  EXPECT_THROW(check_tree(cycle, 3), InternalError);
  TreeShape unreachable;
  unreachable.root = 0;
  unreachable.children = {{1}, {}, {}};
  EXPECT_THROW(check_tree(unreachable, 3), InternalError);
}

TEST(Ring, ModuloAndNeighbours) {
  EXPECT_EQ(ring_mod(-1, 5), 4);
  EXPECT_EQ(ring_mod(-11, 5), 4);
  EXPECT_EQ(ring_mod(12, 5), 2);
  EXPECT_EQ(ring_right(4, 5), 0);
  EXPECT_EQ(ring_left(0, 5), 4);
}

TEST(Partition, PiecesCoverTheMessageExactly) {
  for (Count n : {0, 1, 7, 64, 1001}) {
    for (Rank parts : {1, 2, 3, 7, 64}) {
      Count next = 0;
      for (Rank i = 0; i < parts; ++i) {
        const Piece piece = even_piece(n, parts, i);
        EXPECT_EQ(piece.offset, next);
        EXPECT_GE(piece.count, n / parts);
        EXPECT_LE(piece.count, n / parts + 1);
        next += piece.count;
      }
      EXPECT_EQ(next, n);
    }
  }
}

}  // namespace
}  // namespace optcoll::algorithms::patterns
