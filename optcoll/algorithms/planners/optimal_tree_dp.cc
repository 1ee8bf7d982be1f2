// SPDX-License-Identifier: Apache-2.0
// File: the homogeneous optimal ordered gather/scatter tree (Träff 2019, Proposition 3,
// Figure 6, Theorem 2; spec §3.2, §3.4). C[i][j] = the best completion time of a gather over
// ranks i..j to the best root of the range:
//   (5) root i, one child [i+1..j]:      max(copy·m_i, C[i+1][j]) + c(M(i+1,j))
//   (6) root j, one child [i..j-1]:      C[i][j-1] + c(M(i,j-1)) + X·m_j
//   (4) k = i..j-2, root in [k+1..j]:    max(C[i][k], C[k+1][j]) + c(M(i,k))
//   (3) k = i+1..j-1, root in [i..k]:    max(C[i][k], C[k+1][j]) + c(M(k+1,j))
// where (4)/(3) append the other range as the root's last child. Ties: (5), (6), then by k
// with (4) before (3), the first strictly smaller value (this reproduces every root the paper
// reports). A fixed root r uses a second table R over the ranges holding r (spec §3.4).
// Tables are triangular: C and its transpose (so that the k loop reads both contiguously).
#include <algorithm>
#include <cstdint>
#include <limits>

#include "optcoll/algorithms/planners/gather_trees.h"
#include "optcoll/model/error.h"

namespace optcoll::algorithms::planners {
namespace {

constexpr std::int32_t kCase5 = -1;
constexpr std::int32_t kCase6 = -2;
// (4) at k: 2k, (3) at k: 2k + 1.
constexpr Rank kBlock = 32;
constexpr Time kInf = std::numeric_limits<Time>::infinity();

// min over k in [k0, k1) of max(row[k], col[k+1]) + min(lf[k], rt[k+1]) (vectorized).
Time block_minimum(const Time* row, const Time* col, const Time* lf, const Time* rt, Rank k0,
                   Rank k1) {
  Time m = kInf;
#pragma omp simd reduction(min : m)
  for (Rank k = k0; k < k1; ++k) {
    m = std::min(m, std::max(row[k], col[k + 1]) + std::min(lf[k], rt[k + 1]));
  }
  return m;
}

struct Dp {
  Rank p = 0;
  const GatherProblem* pb = nullptr;
  std::vector<Time> prefix;          // prefix[i] = m_0 + ... + m_{i-1}
  std::vector<std::size_t> row_off;  // upper triangle by rows: (i, j >= i)
  std::vector<std::size_t> col_off;  // lower triangle by rows of the transpose: (j, i <= j)
  std::vector<Time> c, ct, r_table;  // C by rows, C transposed, R (fixed root) by rows
  std::vector<std::int32_t> choice, r_choice;

  std::size_t up(Rank i, Rank j) const { return row_off[static_cast<std::size_t>(i)] + (j - i); }
  std::size_t lo(Rank j, Rank i) const { return col_off[static_cast<std::size_t>(j)] + i; }
  Time mass(Rank i, Rank j) const {
    return prefix[static_cast<std::size_t>(j) + 1] - prefix[static_cast<std::size_t>(i)];
  }
  Time msg(Rank i, Rank j) const { return pb->message(mass(i, j)); }
  Time size(Rank i) const { return pb->sizes[static_cast<std::size_t>(i)]; }
};

void init(Dp& dp, const GatherProblem& pb, bool fixed_root) {
  dp.p = pb.nranks();
  dp.pb = &pb;
  const auto p = static_cast<std::size_t>(dp.p);
  dp.prefix.assign(p + 1, 0);
  for (std::size_t i = 0; i < p; ++i) dp.prefix[i + 1] = dp.prefix[i] + pb.sizes[i];
  dp.row_off.resize(p);
  dp.col_off.resize(p);
  std::size_t up = 0;
  for (std::size_t i = 0; i < p; ++i) {
    dp.row_off[i] = up;
    up += p - i;
    dp.col_off[i] = i * (i + 1) / 2;
  }
  dp.c.assign(up, 0);
  dp.ct.assign(up, 0);
  dp.choice.assign(up, 0);
  if (fixed_root) {
    dp.r_table.assign(up, 0);
    dp.r_choice.assign(up, 0);
  }
}

// Fills C (and its transpose) for every range, row by row from the bottom (C[i][j] needs
// C[i][k < j] from its own row and C[k+1][j] from rows below). For each (i, j) a first pass
// finds the minimum branch-free (min(v4, v3) = mx + min(c_left, c_right) exactly, since
// rounding is monotone), a second pass finds the first candidate in tie order that attains it.
void fill_free(Dp& dp, Time case_six_rate) {
  const Rank p = dp.p;
  std::vector<Time> left(static_cast<std::size_t>(p));  // left[k] = c(M(i, k))
  std::vector<Time> block_min;
  block_min.reserve(static_cast<std::size_t>(p / kBlock + 2));
  // msg_t[lo(j, a)] = c(M(a, j)): the right-hand messages, contiguous in a for each j.
  std::vector<Time> msg_t(dp.ct.size());
  for (Rank j = 0; j < p; ++j) {
    for (Rank a = 0; a <= j; ++a) msg_t[dp.lo(j, a)] = dp.msg(a, j);
  }
  for (Rank i = p - 2; i >= 0; --i) {
    for (Rank k = i; k < p; ++k) left[static_cast<std::size_t>(k)] = dp.msg(i, k);
    Time* row = &dp.c[dp.up(i, i)] - i;  // row[k] = C[i][k]
    for (Rank j = i + 1; j < p; ++j) {
      const Time* col = &dp.ct[dp.lo(j, 0)];  // col[k] = C[k][j]
      const Time* rt = &msg_t[dp.lo(j, 0)];   // rt[k + 1] = c(M(k + 1, j))
      const Time v5 = std::max(dp.pb->copy * dp.size(i), col[i + 1]) + rt[i + 1];
      const Time v6 =
          row[j - 1] + left[static_cast<std::size_t>(j) - 1] + case_six_rate * dp.size(j);
      const Time* lf = left.data();
      // Candidates in tie order: (5), (6), (4) at k = i, then k = i+1..j-2 ((4), (3)), then
      // (3) at k = j-1. The middle ones in blocks of kBlock: a vectorized minimum per block.
      const Time v4_first = i <= j - 2 ? std::max(row[i], col[i + 1]) + lf[i] : kInf;
      const Time v3_last = j - 1 >= i + 1 ? std::max(row[j - 1], col[j]) + rt[j] : kInf;
      Time best = std::min(std::min(v5, v6), std::min(v4_first, v3_last));
      block_min.clear();
      for (Rank k0 = i + 1; k0 <= j - 2; k0 += kBlock) {
        const Rank k1 = std::min<Rank>(k0 + kBlock, j - 1);
        const Time m = block_minimum(row, col, lf, rt, k0, k1);
        block_min.push_back(m);
        best = std::min(best, m);
      }
      std::int32_t how = -3;
      if (v5 == best) {
        how = kCase5;
      } else if (v6 == best) {
        how = kCase6;
      } else if (v4_first == best) {
        how = 2 * i;
      } else {
        for (std::size_t blk = 0; blk < block_min.size() && how == -3; ++blk) {
          if (block_min[blk] != best) continue;
          const Rank k0 = i + 1 + static_cast<Rank>(blk) * kBlock;
          for (Rank k = k0; k < std::min<Rank>(k0 + kBlock, j - 1); ++k) {
            const Time mx = std::max(row[k], col[k + 1]);
            if (mx + lf[k] == best) {
              how = 2 * k;
              break;
            }
            if (mx + rt[k + 1] == best) {
              how = 2 * k + 1;
              break;
            }
          }
        }
        if (how == -3 && v3_last == best) how = 2 * (j - 1) + 1;
      }
      OPTCOLL_CHECK(how != -3, "optimal tree DP lost its minimum at [{}, {}]", i, j);
      row[j] = best;
      dp.ct[dp.lo(j, i)] = best;
      dp.choice[dp.up(i, j)] = how;
    }
  }
}

// Fills R for the ranges [i..j] holding the fixed root r (spec §3.4, X' = copy). Split k
// at r: for k < r the root lies right ((4), or (6) at k = j-1), for k >= r left ((5) at
// k = i, else (3)); both loops read contiguous rows (R and its transpose r_t, C and C^T).
void fill_rooted(Dp& dp, Rank r) {
  const Rank p = dp.p;
  const Time copy = dp.pb->copy;
  std::vector<Time> r_t(dp.ct.size(), 0);  // r_t[lo(j, i)] = R[i][j]
  for (Rank len = 1; len < p; ++len) {
    for (Rank i = std::max<Rank>(0, r - len); i <= r && i + len < p; ++i) {
      const Rank j = i + len;
      const Time* c_row = &dp.c[dp.up(i, i)] - i;        // C[i][k]
      const Time* r_row = &dp.r_table[dp.up(i, i)] - i;  // R[i][k]
      const Time* c_col = &dp.ct[dp.lo(j, 0)];           // C[k][j]
      const Time* r_col = &r_t[dp.lo(j, 0)];             // R[k][j]
      Time best = kInf;
      std::int32_t how = 0;
      for (Rank k = i; k < r; ++k) {  // root in [k+1..j]
        const Time v = k + 1 == j ? c_row[j - 1] + dp.msg(i, j - 1) + copy * dp.size(r)
                                  : std::max(c_row[k], r_col[k + 1]) + dp.msg(i, k);
        if (v < best) best = v, how = k + 1 == j ? kCase6 : 2 * k;
      }
      for (Rank k = std::max(r, i); k < j; ++k) {  // root in [i..k]
        const Time v = k == i ? std::max(copy * dp.size(r), c_col[i + 1]) + dp.msg(i + 1, j)
                              : std::max(r_row[k], c_col[k + 1]) + dp.msg(k + 1, j);
        if (v < best) best = v, how = k == i ? kCase5 : 2 * k + 1;
      }
      dp.r_table[dp.up(i, j)] = best;
      r_t[dp.lo(j, i)] = best;
      dp.r_choice[dp.up(i, j)] = how;
    }
  }
}

// Rebuilds the tree of [i..j] (from R if `rooted`); returns its root.
Rank rebuild(const Dp& dp, OrderedTree& tree, Rank i, Rank j, bool rooted) {
  if (i == j) return i;
  const std::int32_t how = (rooted ? dp.r_choice : dp.choice)[dp.up(i, j)];
  auto& kids = tree.shape.children;
  if (how == kCase5 || how == kCase6) {
    const Rank root = how == kCase5 ? i : j;
    const Rank child =
        how == kCase5 ? rebuild(dp, tree, i + 1, j, false) : rebuild(dp, tree, i, j - 1, false);
    kids[static_cast<std::size_t>(root)].push_back(child);
    tree.copy_slot[static_cast<std::size_t>(root)] = how == kCase5 ? 0 : 1;
    return root;
  }
  const Rank k = how / 2;
  const bool root_right = how % 2 == 0;  // (4): the root lies in [k+1..j]
  const Rank root =
      root_right ? rebuild(dp, tree, k + 1, j, rooted) : rebuild(dp, tree, i, k, rooted);
  const Rank child =
      root_right ? rebuild(dp, tree, i, k, false) : rebuild(dp, tree, k + 1, j, false);
  kids[static_cast<std::size_t>(root)].push_back(child);
  return root;
}

}  // namespace

namespace {

OrderedTree extract(const Dp& dp, const GatherProblem& pb, bool rooted) {
  const Rank p = dp.p;
  OrderedTree tree;
  tree.shape.children.resize(static_cast<std::size_t>(p));
  tree.copy_slot.assign(static_cast<std::size_t>(p), 0);
  tree.shape.root = rebuild(dp, tree, 0, p - 1, rooted);
  if (p == 1) {
    tree.cost = pb.copy * pb.sizes[0];
  } else {
    tree.cost = rooted ? dp.r_table[dp.up(0, p - 1)] : dp.c[dp.up(0, p - 1)];
  }
  return tree;
}

}  // namespace

OrderedTree optimal_tree(const GatherProblem& pb, std::optional<Rank> root, CaseSix case_six) {
  const Rank p = pb.nranks();
  OPTCOLL_CHECK(p >= 1, "empty gather problem");
  OPTCOLL_CHECK(!root || (*root >= 0 && *root < p), "root out of range");
  Dp dp;
  init(dp, pb, root.has_value());
  // The fixed-root program charges copy in case (6) (the paper's, too: spec §3.4).
  fill_free(dp, root || case_six == CaseSix::kText ? pb.copy : pb.beta);
  if (root) fill_rooted(dp, *root);
  return extract(dp, pb, root.has_value());
}

std::pair<OrderedTree, OrderedTree> optimal_trees_best_and_fixed(const GatherProblem& pb,
                                                                 Rank root) {
  const Rank p = pb.nranks();
  OPTCOLL_CHECK(p >= 1 && root >= 0 && root < p, "root {} out of range", root);
  Dp dp;
  init(dp, pb, true);
  fill_free(dp, pb.copy);
  fill_rooted(dp, root);
  return {extract(dp, pb, false), extract(dp, pb, true)};
}

Time optimal_cost_plain(const GatherProblem& pb) {
  const auto p = static_cast<std::size_t>(pb.nranks());
  std::vector<Time> prefix(p + 1, 0);
  for (std::size_t i = 0; i < p; ++i) prefix[i + 1] = prefix[i] + pb.sizes[i];
  auto msg = [&](std::size_t a, std::size_t b) { return pb.message(prefix[b + 1] - prefix[a]); };
  std::vector<Time> c(p * p, 0);
  for (std::size_t len = 1; len < p; ++len) {
    for (std::size_t i = 0; i + len < p; ++i) {
      const std::size_t j = i + len;
      Time best = std::max(pb.copy * pb.sizes[i], c[(i + 1) * p + j]) + msg(i + 1, j);
      best = std::min(best, c[i * p + j - 1] + msg(i, j - 1) + pb.copy * pb.sizes[j]);
      for (std::size_t k = i; k + 2 <= j; ++k)
        best = std::min(best, std::max(c[i * p + k], c[(k + 1) * p + j]) + msg(i, k));
      for (std::size_t k = i + 1; k < j; ++k)
        best = std::min(best, std::max(c[i * p + k], c[(k + 1) * p + j]) + msg(k + 1, j));
      c[i * p + j] = best;
    }
  }
  return p == 1 ? pb.copy * pb.sizes[0] : c[p - 1];
}

}  // namespace optcoll::algorithms::planners
