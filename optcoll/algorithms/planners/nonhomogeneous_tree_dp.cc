// SPDX-License-Identifier: Apache-2.0
// File: the optimal ordered gather/scatter tree under non-homogeneous (pair) costs (Träff
// 2019, Proposition 3, Figure 5, Theorem 1; docs/math/gather-scatter-trees.md
// §3.2-3.3). The tree class is the one of the
// homogeneous DP (optimal_tree_dp.cc): every subtree spans a contiguous rank range whose
// segment grows outward from its root. A message of M > 0 units from child root s to parent
// root t costs w(s, t, M) = alpha_st + beta_st·M (c(0) = 0), so the table needs the root:
//
//   C[i..j; r], i <= r <= j: the best completion of a gather over ranks i..j to r.
//   C[i..i; i] = 0. For i < j, the minimum over a split k and the last child's root s of
//   right (k >= r, child [k+1..j] rooted at s):  max(P, C[k+1..j; s]) + w(s, r, M(k+1, j))
//        with P = copy·m_i if k = i (case (5): r = i copies first), else C[i..k; r]  (3)
//   left (k < r, child [i..k] rooted at s):
//        k + 1 = j (r = j, case (6)):  C[i..j-1; s] + w(s, j, M(i, j-1)) + copy·m_j
//        otherwise (4):               max(C[k+1..j; r], C[i..k; s]) + w(s, r, M(i, k))
//
//   Worked example: p = 3, sizes 0 5 5, copy = 0, alpha = 0 except alpha_{1,2} = 100
//   (rank 1 is slow to reach rank 2), beta = 1 everywhere. Root 2: receiving [0..1] rooted at
//   1 costs 100 + 5 after 1 copies; rooted at 0 it costs max(0, 0 + 5) + 5 = 10 (0 gathers
//   1's block, then sends both): C[0..2; 2] = 10, the tree 1 -> 0 -> 2.
//
// Cost: the literal recurrence is O(p^5) (the minimum over s is coupled with P by the max).
// Here the right role is evaluated per finished child range R = [a..b] and parent root t for
// every parent part [i..a-1] at once: with the roots of R sorted by C[R; s], the minimum over
// s of max(P, B_s) + w_s is min(P + min{w : B <= P}, min{B + w : B > P}), a prefix and a suffix
// minimum, and the parts' values P sorted once per (a-1, t) are merged with them: O(p^4) in
// all (the fill goes by columns j ascending, rows i descending, so every P is known when R
// finishes). The left role cannot be batched in the same order (its queries C[k+1..j; r] come
// one column at a time); it is evaluated literally but skipped whenever its exact lower bound
// max(P + min_s w_s, min_s (B_s + w_s)) (tables per range and outside root, O(p^3) space)
// cannot beat the best so far: O(p^5) in the worst case, far less in practice (p = 200 in
// docs/performance.md). Space O(p^3). Every value is computed by the same floating-point
// expressions as the literal recurrence, so both give identical costs.
// Restrictions: any p >= 1, root and sizes; pair costs must be >= 0 (CostModel validates).
// Reference: Träff, "Optimal trees for irregular gather and scatter collectives", IEEE TPDS
//   30(9), 2019, Figure 5 and Theorem 1 (which claims O(p^4) without saying how;
//   docs/math/gather-scatter-trees.md §3.3).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>

#include "optcoll/algorithms/planners/gather_trees.h"
#include "optcoll/model/error.h"

namespace optcoll::algorithms::planners {
namespace {

constexpr Time kInf = std::numeric_limits<Time>::infinity();
std::size_t at(Rank r) { return static_cast<std::size_t>(r); }

// How C[i..j; r] was reached: the split k, the child root s, and which side the child is on.
struct Choice {
  std::int32_t k = -1;
  std::int32_t child = -1;
  bool left = false;
};

struct NhDp {
  Rank p = 0;
  const GatherProblem* pb = nullptr;
  std::vector<Time> prefix;
  // Receiver-major pair costs: at[t * p + s] = alpha_{s,t}, bt likewise (contiguous in s).
  std::vector<Time> at_, bt_;
  std::vector<std::size_t> off;  // off[i * p + j]: start of range [i..j]'s entries (r = i..j)
  std::vector<Time> c;
  std::vector<Choice> choice;
  // Per range X = [a..b] and root t > b (index left_row(a, t) + b - a, contiguous in b):
  // min_s w(s, t, M(X)) and min_s C[X; s] + w(s, t, M(X)) (the left-role lower bound, and
  // case (6)).
  std::vector<std::size_t> left_off;  // left_off[a * p + t], t > a
  std::vector<Time> min_w, min_bw;
  // The current column j: col_c[r * p + x] = C[x..j; r] (contiguous in x for the left role).
  std::vector<Time> col_c;

  std::size_t idx(Rank i, Rank j, Rank r) const { return off[at(i) * at(p) + at(j)] + at(r - i); }
  Time cv(Rank i, Rank j, Rank r) const { return c[idx(i, j, r)]; }
  std::size_t left_row(Rank a, Rank t) const { return left_off[at(a) * at(p) + at(t)]; }
  Time mass(Rank i, Rank j) const { return prefix[at(j) + 1] - prefix[at(i)]; }
  Time size(Rank i) const { return pb->sizes[at(i)]; }
  // w(s, t, M) exactly as GatherProblem::message computes it.
  Time w(Rank s, Rank t, Time m) const {
    const std::size_t q = at(t) * at(p) + at(s);
    return m > 0 ? at_[q] + bt_[q] * m : 0;
  }
};

void init(NhDp& dp, const GatherProblem& pb) {
  const Rank p = pb.nranks();
  const auto n = at(p);
  dp.p = p;
  dp.pb = &pb;
  dp.prefix.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) dp.prefix[i + 1] = dp.prefix[i] + pb.sizes[i];
  dp.at_.resize(n * n);
  dp.bt_.resize(n * n);
  for (std::size_t s = 0; s < n; ++s) {
    for (std::size_t t = 0; t < n; ++t) {
      const auto [a, b] = pb.homogeneous() ? std::pair{pb.alpha, pb.beta}
                                           : pb.pair(static_cast<Rank>(s), static_cast<Rank>(t));
      dp.at_[t * n + s] = a;
      dp.bt_[t * n + s] = b;
    }
  }
  dp.off.assign(n * n, 0);
  std::size_t total = 0;
  for (Rank i = 0; i < p; ++i) {
    for (Rank j = i; j < p; ++j) {
      dp.off[at(i) * n + at(j)] = total;
      total += at(j - i + 1);
    }
  }
  dp.c.assign(total, 0);
  dp.choice.assign(total, {});
  dp.left_off.assign(n * n, 0);
  std::size_t left = 0;
  for (Rank a = 0; a < p; ++a) {
    for (Rank t = a + 1; t < p; ++t) {
      dp.left_off[at(a) * n + at(t)] = left;
      left += at(t - a);
    }
  }
  dp.min_w.assign(left, kInf);
  dp.min_bw.assign(left, kInf);
  dp.col_c.assign(n * n, 0);
}

// min over s in [lo..hi] of max(a, B[s]) + w(s, t, m) (B indexed by s - lo).
Time literal_min(const NhDp& dp, const Time* b_vals, Rank lo, Rank hi, Rank t, Time m, Time a) {
  const Time* al = &dp.at_[at(t) * at(dp.p) + at(lo)];
  const Time* be = &dp.bt_[at(t) * at(dp.p) + at(lo)];
  const Rank n = hi - lo + 1;
  Time best = kInf;
  if (m > 0) {
#pragma omp simd reduction(min : best)
    for (Rank q = 0; q < n; ++q)
      best = std::min(best, std::max(a, b_vals[q]) + (al[q] + be[q] * m));
  } else {
#pragma omp simd reduction(min : best)
    for (Rank q = 0; q < n; ++q) best = std::min(best, std::max(a, b_vals[q]) + 0.0);
  }
  return best;
}

// The first s attaining literal_min's value.
Rank literal_argmin(const NhDp& dp, const Time* b_vals, Rank lo, Rank hi, Rank t, Time m, Time a,
                    Time value) {
  for (Rank s = lo; s <= hi; ++s) {
    if (std::max(a, b_vals[s - lo]) + dp.w(s, t, m) == value) return s;
  }
  throw InternalError("non-homogeneous tree DP lost its minimum");  // errors.md: internal
}

// After range X = [a..b] is final: its left-role tables for every root t > b, and its
// entries of the column copy.
void finish_range_tables(NhDp& dp, Rank a, Rank b) {
  const Time m = dp.mass(a, b);
  const Time* b_vals = &dp.c[dp.idx(a, b, a)];
  for (Rank r = a; r <= b; ++r) dp.col_c[at(r) * at(dp.p) + at(a)] = b_vals[r - a];
  for (Rank t = b + 1; t < dp.p; ++t) {
    const std::size_t row = dp.left_row(a, t) + at(b - a);
    Time mw = kInf;
    Time mbw = kInf;
    for (Rank s = a; s <= b; ++s) {
      const Time ws = dp.w(s, t, m);
      mw = std::min(mw, ws);
      mbw = std::min(mbw, b_vals[s - a] + ws);
    }
    dp.min_w[row] = mw;
    dp.min_bw[row] = mbw;
  }
}

// The parent part [i..k] rooted at r (r <= k) as the right role sees it: copy·m_i when it is
// the single rank i (case (5)), else C[i..k; r].
Time part_value(const NhDp& dp, Rank i, Rank k, Rank r) {
  return i == k ? dp.pb->copy * dp.size(i) : dp.cv(i, k, r);
}

// One column j: acc[i * p + t] collects the right-role minimum for C[i..j; t].
struct Column {
  std::vector<Time> acc;
  std::vector<Choice> how;
};

// Sorted parts per (k, t): (part_value(i, k, t), i) for i in [0..t], ascending (stored with
// the values, so that the merge reads them contiguously).
struct Part {
  Time value;
  Rank i;
};
using SortedParts = std::vector<std::vector<Part>>;  // index k * p + t

void sort_parts_of_column(const NhDp& dp, Rank k, SortedParts& parts) {
  for (Rank t = 0; t <= k; ++t) {
    auto& list = parts[at(k) * at(dp.p) + at(t)];
    list.clear();
    for (Rank i = 0; i <= t; ++i) list.push_back({part_value(dp, i, k, t), i});
    std::stable_sort(list.begin(), list.end(),
                     [](const Part& x, const Part& y) { return x.value < y.value; });
  }
}

// Range R = [a..b] (column b) is final: push its right-role value to every C[i..b; t] with
// t < a <= ... , i <= t (parent part [i..a-1] rooted at t).
void push_right_child(const NhDp& dp, Rank a, Rank b, const SortedParts& parts, Column& col,
                      std::vector<Rank>& order, std::vector<Time>& pre_w,
                      std::vector<Rank>& pre_arg, std::vector<Time>& suf_bw,
                      std::vector<Rank>& suf_arg) {
  const Rank n = b - a + 1;
  const Time m = dp.mass(a, b);
  const Time* b_vals = &dp.c[dp.idx(a, b, a)];
  order.resize(at(n));
  std::iota(order.begin(), order.end(), Rank{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](Rank x, Rank y) { return b_vals[x] < b_vals[y]; });
  pre_w.resize(at(n) + 1);
  pre_arg.resize(at(n) + 1);
  suf_bw.resize(at(n) + 1);
  suf_arg.resize(at(n) + 1);
  const Rank k = a - 1;
  for (Rank t = 0; t <= k; ++t) {
    // pre_w[q]: min w over the q smallest B; suf_bw[q]: min B + w over the others.
    pre_w[0] = kInf;
    pre_arg[0] = -1;
    for (Rank q = 0; q < n; ++q) {
      const Rank s = a + order[at(q)];
      const Time ws = dp.w(s, t, m);
      const bool better = ws < pre_w[at(q)];
      pre_w[at(q) + 1] = better ? ws : pre_w[at(q)];
      pre_arg[at(q) + 1] = better ? s : pre_arg[at(q)];
    }
    suf_bw[at(n)] = kInf;
    suf_arg[at(n)] = -1;
    for (Rank q = n - 1; q >= 0; --q) {
      const Rank s = a + order[at(q)];
      const Time v = b_vals[order[at(q)]] + dp.w(s, t, m);
      const bool better = v <= suf_bw[at(q) + 1];
      suf_bw[at(q)] = better ? v : suf_bw[at(q) + 1];
      suf_arg[at(q)] = better ? s : suf_arg[at(q) + 1];
    }
    // Merge the parts (ascending P) with the sorted B: pos = how many B are <= P.
    Rank pos = 0;
    for (const Part& part : parts[at(k) * at(dp.p) + at(t)]) {
      const Rank i = part.i;
      const Time pv = part.value;
      while (pos < n && b_vals[order[at(pos)]] <= pv) ++pos;
      const Time via_pre = pre_w[at(pos)] == kInf ? kInf : pv + pre_w[at(pos)];
      const Time v = std::min(via_pre, suf_bw[at(pos)]);
      Time& slot = col.acc[at(i) * at(dp.p) + at(t)];
      if (v < slot) {
        slot = v;
        col.how[at(i) * at(dp.p) + at(t)] = {
            k, via_pre <= suf_bw[at(pos)] ? pre_arg[at(pos)] : suf_arg[at(pos)], false};
      }
    }
  }
}

// C[i..j; r] for every r, given the right-role minima in `col` (column j, row i).
void fill_range(NhDp& dp, Rank i, Rank j, Column& col) {
  const Time copy = dp.pb->copy;
  for (Rank r = i; r <= j; ++r) {
    Time best = col.acc[at(i) * at(dp.p) + at(r)];
    Choice how = col.how[at(i) * at(dp.p) + at(r)];
    // Left role: child [i..k] rooted at s, k < r; the parent part [k+1..j] holds r.
    const Time* c_col = &dp.col_c[at(r) * at(dp.p)];  // c_col[x] = C[x..j; r]
    for (Rank k = r - 1; k >= i; --k) {
      const std::size_t row = dp.left_row(i, r) + at(k - i);
      const Time* b_vals = &dp.c[dp.idx(i, k, i)];
      const Time m = dp.mass(i, k);
      if (k + 1 == j) {  // (6): receive [i..j-1], then copy
        const Time v = dp.min_bw[row] + copy * dp.size(j);
        if (v < best) {
          best = v;
          how = {k, literal_argmin(dp, b_vals, i, k, r, m, -kInf, dp.min_bw[row]), true};
        }
        continue;
      }
      const Time a = c_col[k + 1];
      const Time bound = std::max(a + dp.min_w[row], dp.min_bw[row]);
      if (!(bound < best)) continue;
      const Time v = literal_min(dp, b_vals, i, k, r, m, a);
      if (v < best) {
        best = v;
        how = {k, literal_argmin(dp, b_vals, i, k, r, m, a, v), true};
      }
    }
    OPTCOLL_CHECK(how.k >= 0, "non-homogeneous tree DP found no tree for [{}, {}]", i, j);
    dp.c[dp.idx(i, j, r)] = best;
    dp.choice[dp.idx(i, j, r)] = how;
  }
}

void fill(NhDp& dp) {
  const Rank p = dp.p;
  SortedParts parts(at(p) * at(p));
  Column col;
  col.acc.resize(at(p) * at(p));
  col.how.resize(at(p) * at(p));
  std::vector<Rank> order, pre_arg, suf_arg;
  std::vector<Time> pre_w, suf_bw;
  for (Rank j = 0; j < p; ++j) {
    std::fill(col.acc.begin(), col.acc.end(), kInf);
    std::fill(col.how.begin(), col.how.end(), Choice{});
    // Row j: the single rank (a leaf as a child).
    dp.c[dp.idx(j, j, j)] = 0;
    for (Rank i = j; i >= 0; --i) {
      if (i < j) fill_range(dp, i, j, col);
      finish_range_tables(dp, i, j);
      if (i > 0) push_right_child(dp, i, j, parts, col, order, pre_w, pre_arg, suf_bw, suf_arg);
    }
    sort_parts_of_column(dp, j, parts);
  }
}

// Rebuilds the subtree of [i..j] rooted at r.
void rebuild(const NhDp& dp, OrderedTree& tree, Rank i, Rank j, Rank r) {
  if (i == j) return;
  const Choice how = dp.choice[dp.idx(i, j, r)];
  auto& kids = tree.shape.children[at(r)];
  const Rank k = how.k;
  if (!how.left) {
    if (k == i) {  // (5)
      tree.copy_slot[at(r)] = 0;
    } else {
      rebuild(dp, tree, i, k, r);
    }
    rebuild(dp, tree, k + 1, j, how.child);
  } else {
    if (k + 1 == j) {  // (6)
      tree.copy_slot[at(r)] = 1;
    } else {
      rebuild(dp, tree, k + 1, j, r);
    }
    rebuild(dp, tree, i, k, how.child);
  }
  kids.push_back(how.child);
}

}  // namespace

OrderedTree optimal_tree_nonhomogeneous(const GatherProblem& pb, std::optional<Rank> root) {
  const Rank p = pb.nranks();
  OPTCOLL_CHECK(p >= 1, "empty gather problem");
  OPTCOLL_CHECK(!root || (*root >= 0 && *root < p), "root out of range");
  const auto n = at(p);
  OPTCOLL_CHECK(pb.homogeneous() || pb.pair_model != nullptr ||
                    (pb.pair_alpha.size() == n * n && pb.pair_beta.size() == n * n),
                "pair matrices are not {} x {}", p, p);
  OrderedTree tree;
  tree.shape.children.resize(n);
  tree.copy_slot.assign(n, 0);
  if (p == 1) {
    tree.shape.root = 0;
    tree.cost = pb.copy * pb.sizes[0];
    return tree;
  }
  NhDp dp;
  init(dp, pb);
  fill(dp);
  Rank best = root.value_or(0);
  if (!root) {
    for (Rank r = 1; r < p; ++r) {
      if (dp.cv(0, p - 1, r) < dp.cv(0, p - 1, best)) best = r;
    }
  }
  tree.shape.root = best;
  rebuild(dp, tree, 0, p - 1, best);
  tree.cost = dp.cv(0, p - 1, best);
  return tree;
}

Time optimal_cost_nonhomogeneous_literal(const GatherProblem& pb, std::optional<Rank> root) {
  const Rank p = pb.nranks();
  OPTCOLL_CHECK(p >= 1, "empty gather problem");
  OPTCOLL_CHECK(!root || (*root >= 0 && *root < p), "root out of range");
  if (p == 1) return pb.copy * pb.sizes[0];
  const auto n = at(p);
  std::vector<Time> prefix(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + pb.sizes[i];
  auto mass = [&](Rank i, Rank j) { return prefix[at(j) + 1] - prefix[at(i)]; };
  std::vector<Time> c(n * n * n, 0);  // c[(i * p + j) * p + r]
  auto cell = [&](Rank i, Rank j, Rank r) -> Time& { return c[(at(i) * n + at(j)) * n + at(r)]; };
  for (Rank len = 1; len < p; ++len) {
    for (Rank i = 0; i + len < p; ++i) {
      const Rank j = i + len;
      for (Rank r = i; r <= j; ++r) {
        Time best = kInf;
        for (Rank k = i; k < j; ++k) {
          for (Rank s = i; s <= j; ++s) {
            Time v = kInf;
            if (k >= r && s > k) {  // child [k+1..j] on the right
              const Time part = k == i ? pb.copy * pb.sizes[at(i)] : cell(i, k, r);
              v = std::max(part, cell(k + 1, j, s)) + pb.message(s, r, mass(k + 1, j));
            } else if (k < r && s <= k) {  // child [i..k] on the left
              v = k + 1 == j
                      ? cell(i, k, s) + pb.message(s, r, mass(i, k)) + pb.copy * pb.sizes[at(j)]
                      : std::max(cell(k + 1, j, r), cell(i, k, s)) + pb.message(s, r, mass(i, k));
            }
            best = std::min(best, v);
          }
        }
        cell(i, j, r) = best;
      }
    }
  }
  if (root) return cell(0, p - 1, *root);
  Time best = kInf;
  for (Rank r = 0; r < p; ++r) best = std::min(best, cell(0, p - 1, r));
  return best;
}

}  // namespace optcoll::algorithms::planners
