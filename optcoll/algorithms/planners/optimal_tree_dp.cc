// SPDX-License-Identifier: Apache-2.0
// File: the homogeneous optimal ordered gather/scatter tree (Träff 2019, Proposition 3,
// Figure 6, Theorem 2; docs/math/gather-scatter-trees.md
// §3.2, §3.4). C[i][j] = the best completion time of a gather over
// ranks i..j to the best root of the range:
//   (5) root i, one child [i+1..j]:      max(copy·m_i, C[i+1][j]) + c(M(i+1,j))
//   (6) root j, one child [i..j-1]:      C[i][j-1] + c(M(i,j-1)) + X·m_j
//   (4) k = i..j-2, root in [k+1..j]:    max(C[i][k], C[k+1][j]) + c(M(i,k))
//   (3) k = i+1..j-1, root in [i..k]:    max(C[i][k], C[k+1][j]) + c(M(k+1,j))
// where (4)/(3) append the other range as the root's last child. Ties: (5), (6), then by k
// with (4) before (3), the first strictly smaller value (this reproduces every root the paper
// reports). A fixed root r uses a second table R over the ranges holding r
// (gather-scatter-trees.md §3.4).
// Tables are triangular: C and its transpose (so that the k loop reads both contiguously).
// The free table is filled in O(p^3) worst case but with exact pruning of split points (lower
// bounds per block of 32; see fill_free), in tiles, and by two threads for large p; the result
// (costs, choices, tie order) is the plain program's bit for bit
// (tests/algorithms/tree_dp_test.cc).
#include <system_error>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <thread>

#include "optcoll/algorithms/planners/gather_trees.h"
#include "optcoll/model/error.h"

namespace optcoll::algorithms::planners {
namespace {

constexpr std::int32_t kCase5 = -1;
constexpr std::int32_t kCase6 = -2;
// (4) at k: 2k, (3) at k: 2k + 1.
constexpr Rank kBlock = 32;
constexpr Rank kTileRows = 32;  // fill_free's tiles
constexpr Rank kTileCols = 64;
constexpr Time kInf = std::numeric_limits<Time>::infinity();

// min over k in [k0, k1) of max(row[k], col[k+1]) + min(lf[k], rt[k+1]) (vectorized, with
// eight running minima: the minimum is exact in any order).
Time block_minimum(const Time* row, const Time* col, const Time* lf, const Time* rt, Rank k0,
                   Rank k1) {
  const auto at = [&](Rank k) { return std::max(row[k], col[k + 1]) + std::min(lf[k], rt[k + 1]); };
  Time m[8] = {kInf, kInf, kInf, kInf, kInf, kInf, kInf, kInf};
  Rank k = k0;
  for (; k + 8 <= k1; k += 8) {
#pragma omp simd
    for (int q = 0; q < 8; ++q) m[q] = std::min(m[q], at(k + q));
  }
  for (; k < k1; ++k) m[0] = std::min(m[0], at(k));
  return std::min(std::min(std::min(m[0], m[1]), std::min(m[2], m[3])),
                  std::min(std::min(m[4], m[5]), std::min(m[6], m[7])));
}

struct Dp {
  Rank p = 0;
  const GatherProblem* pb = nullptr;
  std::vector<Time> prefix;          // prefix[i] = m_0 + ... + m_{i-1}
  std::vector<std::size_t> row_off;  // upper triangle by rows: (i, j >= i)
  std::vector<std::size_t> col_off;  // lower triangle by rows of the transpose: (j, i <= j)
  std::vector<Time> c, ct, r_table;  // C by rows, C transposed, R (fixed root) by rows
  std::vector<std::int32_t> choice, r_choice;
  TreeDpStats stats;

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

// Whether block pruning may be used, and the margin its bounds need (below).
struct PruneRule {
  bool on = false;
  Time ulps = 0;  // margin = ulps · (the largest magnitude involved)
};

PruneRule prune_rule(const Dp& dp, Time case_six_rate) {
  const GatherProblem& pb = *dp.pb;
  const Time total = dp.prefix.back();
  PruneRule rule;
  rule.on = pb.alpha >= 0 && pb.beta >= 0 && pb.copy >= 0 && case_six_rate >= 0 &&
            std::isfinite(pb.alpha) && std::isfinite(pb.beta) && std::isfinite(pb.copy) &&
            std::isfinite(total);
  Time max_size = 0;
  bool integral = std::trunc(pb.alpha) == pb.alpha && std::trunc(pb.beta) == pb.beta &&
                  std::trunc(pb.copy) == pb.copy && std::trunc(case_six_rate) == case_six_rate;
  for (const Time m : pb.sizes) {
    rule.on = rule.on && m >= 0;
    max_size = std::max(max_size, m);
    integral = integral && std::trunc(m) == m;
  }
  // By induction over (5) every C[i][j] is at most copy·max m + (j - i)·(alpha + beta·M), M the
  // total, so every candidate, C and bound term is below `magnitude` in absolute value. With
  // integer parameters and sizes and that bound below 2^52 all arithmetic here is exact.
  const Time magnitude = 2 * (pb.copy + case_six_rate) * max_size +
                         static_cast<Time>(dp.p + 1) * (pb.alpha + pb.beta * total);
  const bool exact = integral && total < 0x1p52 && magnitude < 0x1p52;
  rule.ulps = exact ? 0 : 64 * std::numeric_limits<Time>::epsilon();
  return rule;
}

// Fills C (and its transpose) for every range, row by row from the bottom (C[i][j] needs
// C[i][k < j] from its own row and C[k+1][j] from rows below). For each (i, j) a first pass
// finds the minimum branch-free (min(v4, v3) = mx + min(c_left, c_right) exactly, since
// rounding is monotone), a second pass finds the first candidate in tie order that attains it.
//
// Exact pruning. The middle split points k in [i+1, j-2] form segments: a head [i+1, 32·b0),
// whole aligned blocks [32b, 32b+32) for b0 <= b < b1, and a tail [32·b1, j-1). With
// L_k = c(M(i,k)), T_k = c(M(k+1,j)), P the prefix sums and c(M) >= beta·M (= alpha + beta·M
// for M > 0; alpha, beta >= 0), every candidate of a segment [ks, ke) satisfies
//   v4_k = max(C[i][k], C[k+1][j]) + L_k
//       >= max(C[i][k] + L_k,  C[k+1][j] + beta·P[k+1] - beta·P[i] + a4)
//   v3_k = max(C[i][k], C[k+1][j]) + T_k
//       >= max(C[k+1][j] + T_k,  C[i][k] - beta·P[k+1] + beta·P[j+1] + a3)
// with a4 = alpha if M(i, ks) > 0 and a3 = alpha if M(ke, j) > 0 (else 0). Each term is a
// quantity of row i alone or of column j alone, so its minimum over a segment is kept:
//   row i:    head and whole blocks when the row has filled them, the tail as it grows;
//   column j: whole block b when row 32b+1 (its last row; rows fill bottom-up) reaches column
//             j, the tail's rows [32·b1+1, j-1] likewise, the head's rows [i+2, 32·b0] grow
//             by one row per row.
// The bound min(bound4, bound3) less a rounding margin is below every candidate of the segment
// as computed. The margin is 0 when the arithmetic is exact (prune_rule); else 64·eps·(|bound|
// + best + 2·(alpha + beta·M)): each of the few roundings in a bound term, in a message cost
// and in a candidate is at most eps/2 of a magnitude below |bound| + 2·(alpha + beta·M) (for the
// bound) or below the candidate itself (compared with best), so 64·eps covers them many times
// over. (Without it the tests find rounded instances where pruning changes the tree.)
// A segment is skipped when its bound is above the best value found so far, or equal to it
// while an earlier candidate in tie order already attains it: it cannot hold the first
// candidate that attains the minimum. The segment with the lowest bound is evaluated first,
// then the others in order.
void fill_free(Dp& dp, Time case_six_rate, int threads) {
  const Rank p = dp.p;
  const GatherProblem& pb = *dp.pb;
  const Time alpha = pb.alpha;
  const Time beta = pb.beta;
  const PruneRule rule = prune_rule(dp, case_six_rate);
  const Time mass_term = alpha + beta * dp.prefix.back();
  // msg_t[lo(j, a)] = c(M(a, j)): the right-hand messages, contiguous in a for each j.
  std::vector<Time> msg_t(dp.ct.size());
  for (Rank j = 0; j < p; ++j) {
    for (Rank a = 0; a <= j; ++a) msg_t[dp.lo(j, a)] = dp.msg(a, j);
  }
  const Time* pre = dp.prefix.data();
  const auto nb = static_cast<std::size_t>(p / kBlock + 1);
  // P at the start of whole block b: pre_lo[b] = P[32b+1] (M(i, 32b) > 0 iff pre_lo[b] > P[i]).
  std::vector<Time> pre_lo(nb, kInf);
  for (std::size_t b = 0; b * kBlock + 1 <= static_cast<std::size_t>(p); ++b) {
    pre_lo[b] = pre[b * kBlock + 1];
  }
  // Minima of the bound terms over whole blocks: row i's (a: C[i][k] + L_k, d: C[i][k] -
  // beta·P[k+1]; in RowState) and column j's at [j * nb + b] (e: C[k+1][j] + T_k,
  // b: C[k+1][j] + beta·P[k+1]).
  std::vector<Time> col_e(static_cast<std::size_t>(p) * nb, kInf);
  std::vector<Time> col_b(static_cast<std::size_t>(p) * nb, kInf);
  std::vector<Time> col_3(static_cast<std::size_t>(p) * nb, kInf);  // beta·P[j+1] + a3
  struct Terms {  // the same four minima over a head or a tail
    Time a = kInf, d = kInf, e = kInf, b = kInf;
  };
  std::vector<Terms> col_head(static_cast<std::size_t>(p));  // column j, the head's rows
  std::vector<Terms> col_tail(static_cast<std::size_t>(p));  // column j, the tail's rows
  const auto add_row = [&](Terms& t, const Time* row, const Time* lf, Rank k) {
    t.a = std::min(t.a, row[k] + lf[k]);
    t.d = std::min(t.d, row[k] - beta * pre[k + 1]);
  };
  const auto add_col = [&](Terms& t, const Time* col, const Time* rt, Rank k1) {  // k1 = k + 1
    t.e = std::min(t.e, col[k1] + rt[k1]);
    t.b = std::min(t.b, col[k1] + beta * pre[k1]);
  };
  // Row i's state while its cells are filled.
  struct RowState {
    std::vector<Time> left;  // left[k] = c(M(i, k))
    std::vector<Time> a, d;  // row_a, row_d: minima over whole blocks
    std::vector<Time> off4;  // a4 - beta·P[i] by whole block
    Terms head, tail;        // minima over the head (once filled) and the current tail
  };
  // One worker's state: its tile's rows; per (i, j), by segment index s (0 the head, 1..n the
  // whole blocks b0..b1-1, n+1 the tail), the bounds, the minima found and the evaluated list.
  struct Worker {
    std::vector<RowState> rows;
    std::vector<Time> low, seg_min;
    std::vector<std::size_t> done;
    TreeDpStats stats;
  };
  const auto cell = [&](Worker& wk, RowState& rs, Rank i, Rank j) {
    std::vector<Time>& low = wk.low;
    std::vector<Time>& seg_min = wk.seg_min;
    std::vector<std::size_t>& done = wk.done;
    const Time* lf = rs.left.data();
    Time* row = &dp.c[dp.up(i, i)] - i;             // row[k] = C[i][k]
    const Rank b0 = (i + 1 + kBlock - 1) / kBlock;  // the first whole block starts at >= i+1
    const Time* col = &dp.ct[dp.lo(j, 0)];          // col[k] = C[k][j]
    const Time* rt = &msg_t[dp.lo(j, 0)];           // rt[k + 1] = c(M(k + 1, j))
    Terms& head_col = col_head[static_cast<std::size_t>(j)];
    if ((i + 1) % kBlock == 0) {  // the head [i+1, 32·b0) is empty: its rows restart
      head_col = Terms{};
    } else if (i + 2 <= j) {
      add_col(head_col, col, rt, i + 2);
    }
    if (j == b0 * kBlock) {
      for (Rank k = i + 1; k < j; ++k) add_row(rs.head, row, lf, k);
    }
    if ((j - 1) % kBlock == 0) {
      rs.tail = Terms{};
    } else if (j - 2 >= i) {
      add_row(rs.tail, row, lf, j - 2);
    }
    const Time v5 = std::max(pb.copy * dp.size(i), col[i + 1]) + rt[i + 1];
    const Time v6 = row[j - 1] + lf[j - 1] + case_six_rate * dp.size(j);
    // Candidates in tie order: (5), (6), (4) at k = i, then k = i+1..j-2 ((4), (3)) by
    // segment, then (3) at k = j-1.
    const Time v4_first = i <= j - 2 ? std::max(row[i], col[i + 1]) + lf[i] : kInf;
    const Time v3_last = j - 1 >= i + 1 ? std::max(row[j - 1], col[j]) + rt[j] : kInf;
    Time best = std::min(std::min(v5, v6), std::min(v4_first, v3_last));
    const Rank b1 = std::max<Rank>(b0, (j - 1) / kBlock);  // blocks with 32b+32 <= j-1
    const auto n = static_cast<std::size_t>(b1 - b0);
    // Without a whole block (n = 0), the head is [i+1, j-1) and the tail empty.
    const auto seg_begin = [&](std::size_t s) {
      if (s == 0) return i + 1;
      return s <= n ? (b0 + static_cast<Rank>(s) - 1) * kBlock : n == 0 ? j - 1 : b1 * kBlock;
    };
    const auto seg_end = [&](std::size_t s) {
      if (s == 0) return n == 0 ? j - 1 : b0 * kBlock;
      return s <= n ? (b0 + static_cast<Rank>(s)) * kBlock : j - 1;
    };
    const std::size_t nseg = n + 2;
    Time lowest_low = kInf;  // the lowest bound of all segments
    std::size_t open = 0;    // segments whose bound is <= best (the others cannot hold it)
    wk.stats.splits += std::max<Rank>(0, j - i - 2);
    if (n == 0 || !rule.on) {
      for (std::size_t s = 0; s < nseg; ++s) low[s] = seg_begin(s) < seg_end(s) ? -kInf : kInf;
      lowest_low = std::min(low[0], low[1]);
      open = nseg;
    } else {
      const Time pi = pre[i];
      const Time pj = pre[j + 1];
      const Time off4 = -beta * pi;
      const Time off3 = beta * pj;
      const Time slack = best + 2 * mass_term;
      const auto bound = [&](Time a, Time d, Time e, Time bb, Time a4, Time a3) {
        const Time raw = std::min(std::max(a, bb + off4 + a4), std::max(e, d + off3 + a3));
        return raw - rule.ulps * (std::abs(raw) + slack);
      };
      const Terms& hc = head_col;
      low[0] = i + 1 == b0 * kBlock
                   ? kInf  // empty head
                   : bound(rs.head.a, rs.head.d, hc.e, hc.b, pre[i + 2] > pi ? alpha : 0,
                           pj > pre[b0 * kBlock] ? alpha : 0);
      const Terms& tc = col_tail[static_cast<std::size_t>(j)];
      low[n + 1] = b1 * kBlock == j - 1
                       ? kInf  // empty tail
                       : bound(rs.tail.a, rs.tail.d, tc.e, tc.b,
                               pre[b1 * kBlock + 1] > pi ? alpha : 0, pj > pre[j - 1] ? alpha : 0);
      // Whole blocks: bound4 = max(a, b + (a4 - beta·P[i])), bound3 = max(e, d + (beta·P[j+1] +
      // a3)), the parenthesized offsets kept per row (r4) and per column (c3).
      const std::size_t at = static_cast<std::size_t>(j) * nb;
      const Time* ce = &col_e[at];
      const Time* cb = &col_b[at];
      const Time* c3 = &col_3[at];
      const Time* ra = rs.a.data();
      const Time* rd = rs.d.data();
      const Time* r4 = rs.off4.data();
      Time* lw = &low[1] - b0;
      Time lowest = kInf;
      std::size_t count = 0;
      if (rule.ulps == 0) {
#pragma omp simd reduction(min : lowest) reduction(+ : count)
        for (Rank b = b0; b < b1; ++b) {
          lw[b] = std::min(std::max(ra[b], cb[b] + r4[b]), std::max(ce[b], rd[b] + c3[b]));
          lowest = std::min(lowest, lw[b]);
          count += lw[b] <= best ? 1 : 0;
        }
      } else {
#pragma omp simd reduction(min : lowest) reduction(+ : count)
        for (Rank b = b0; b < b1; ++b) {
          const Time raw = std::min(std::max(ra[b], cb[b] + r4[b]), std::max(ce[b], rd[b] + c3[b]));
          lw[b] = raw - rule.ulps * (std::abs(raw) + slack);
          lowest = std::min(lowest, lw[b]);
          count += lw[b] <= best ? 1 : 0;
        }
      }
      lowest_low = std::min(lowest, std::min(low[0], low[n + 1]));
      open = count + (low[0] <= best ? 1 : 0) + (low[n + 1] <= best ? 1 : 0);
    }
    // The candidate known to attain `best` first in tie order: (5), (6), (4) at i before
    // every segment (position -1), (3) at j-1 after them (nseg).
    std::ptrdiff_t best_at =
        std::min(std::min(v5, v6), v4_first) == best ? -1 : static_cast<std::ptrdiff_t>(nseg);
    const auto skip = [&](std::size_t s) {
      return low[s] > best || (low[s] >= best && best_at < static_cast<std::ptrdiff_t>(s));
    };
    std::size_t nevaluated = 0;  // evaluated segments, ascending, in done[]
    const auto eval = [&](std::size_t s) {
      const Time m = block_minimum(row, col, lf, rt, seg_begin(s), seg_end(s));
      wk.stats.evaluated += seg_end(s) - seg_begin(s);
      seg_min[s] = m;
      std::size_t q = nevaluated++;
      for (; q > 0 && done[q - 1] > s; --q) done[q] = done[q - 1];
      done[q] = s;
      const auto at = static_cast<std::ptrdiff_t>(s);
      if (m < best || (m == best && at < best_at)) best_at = at;
      best = std::min(best, m);
    };
    // The segment with the lowest bound first, then the others in order (few are open).
    if (open > 0) {
      std::size_t first = 0;
      while (first + 1 < nseg && low[first] != lowest_low) ++first;
      if (!skip(first)) eval(first);
      for (std::size_t s = 0; s < nseg && open > 1; ++s) {
        if (low[s] <= best && s != first && !skip(s)) eval(s);
      }
    }
    std::int32_t how = -3;
    // The first candidate in [k0, k1) (tie order) that attains `best`: the first group of 8
    // whose minimum is `best`, then within it.
    const auto scan = [&](Rank k0, Rank k1) {
      for (; k0 + 8 < k1 && block_minimum(row, col, lf, rt, k0, k0 + 8) != best; k0 += 8) {
      }
      for (Rank k = k0; k < k1; ++k) {
        const Time mx = std::max(row[k], col[k + 1]);
        if (mx + lf[k] == best) return 2 * k;
        if (mx + rt[k + 1] == best) return 2 * k + 1;
      }
      return -3;
    };
    if (v5 == best) {
      how = kCase5;
    } else if (v6 == best) {
      how = kCase6;
    } else if (v4_first == best) {
      how = 2 * i;
    } else {
      for (std::size_t q = 0; q < nevaluated && how == -3; ++q) {
        const std::size_t s = done[q];
        if (seg_min[s] == best) how = scan(seg_begin(s), seg_end(s));
      }
      if (how == -3 && v3_last == best) how = 2 * (j - 1) + 1;
    }
    OPTCOLL_CHECK(how != -3, "optimal tree DP lost its minimum at [{}, {}]", i, j);
    row[j] = best;
    dp.ct[dp.lo(j, i)] = best;
    dp.choice[dp.up(i, j)] = how;
    // Minima this cell completes: row i's block ending at j; at row i = 32b+1, column j's
    // block b (rows i..i+31) or, for j <= i+31, the tail's rows i..j-1 (b = (j-1)/32).
    if (j % kBlock == kBlock - 1 && j - (kBlock - 1) >= i + 1) {
      Terms t;
      for (Rank k = j - (kBlock - 1); k <= j; ++k) add_row(t, row, lf, k);
      rs.a[static_cast<std::size_t>(j / kBlock)] = t.a;
      rs.d[static_cast<std::size_t>(j / kBlock)] = t.d;
    }
    if (i % kBlock == 1) {
      Terms t;
      if (j >= i + kBlock) {
        for (Rank k1 = i; k1 < i + kBlock; ++k1) add_col(t, col, rt, k1);
        const std::size_t at =
            static_cast<std::size_t>(j) * nb + static_cast<std::size_t>(i / kBlock);
        col_e[at] = t.e;
        col_b[at] = t.b;
        const Rank ke = i + kBlock - 1;  // the block's last split + 1
        col_3[at] = beta * pre[j + 1] + (pre[j + 1] > pre[ke] ? alpha : 0);
      } else {
        for (Rank k1 = i; k1 < j; ++k1) add_col(t, col, rt, k1);
        col_tail[static_cast<std::size_t>(j)] = t;
      }
    }
  };
  // Tiles of kTileRows rows by kTileCols columns: row tiles from the bottom, within one the
  // column tiles from the left, within a tile rows from the bottom and columns from the left.
  // Every cell still finds its row's earlier columns and its column's lower rows filled, and
  // every column is visited by its rows in descending order (its running minima); a tile
  // reuses the rows of C^T of its columns across its rows.
  //
  // With two workers, worker w takes every other row tile (a wavefront): before a column tile
  // it waits until the row tile below has finished those columns (progress[t] = the columns
  // below which row tile t is done; release/acquire order the cells and column minima it
  // wrote). Each cell computes the same values in the same order of its own inputs, so the
  // result does not depend on the number of workers.
  const Rank ntiles = (p - 2) / kTileRows + 1;
  std::vector<std::atomic<Rank>> progress(static_cast<std::size_t>(ntiles) + 1);
  for (auto& pr : progress) pr.store(0, std::memory_order_relaxed);
  progress[static_cast<std::size_t>(ntiles)].store(p, std::memory_order_relaxed);  // none below
  std::atomic<bool> failed{false};
  const auto run = [&](Worker& wk, Rank first_tile, Rank stride) {
    for (Rank t = first_tile; t >= 0; t -= stride) {
      const Rank top = t * kTileRows;
      const Rank bottom = std::min(top + kTileRows - 1, p - 2);
      for (Rank i = top; i <= bottom; ++i) {
        RowState& rs = wk.rows[static_cast<std::size_t>(i - top)];
        for (Rank k = i; k < p; ++k) rs.left[static_cast<std::size_t>(k)] = dp.msg(i, k);
        for (std::size_t b = 0; b < nb; ++b) {
          rs.off4[b] = (pre_lo[b] > pre[i] ? alpha : 0) - beta * pre[i];
        }
        rs.head = Terms{};
        rs.tail = Terms{};
      }
      std::atomic<Rank>& mine = progress[static_cast<std::size_t>(t)];
      std::atomic<Rank>& below = progress[static_cast<std::size_t>(t) + 1];
      for (Rank j0 = (top + 1) / kTileCols * kTileCols; j0 < p; j0 += kTileCols) {
        const Rank j1 = std::min(j0 + kTileCols, p);
        for (;;) {
          if (failed.load(std::memory_order_relaxed)) return;
          const Rank seen = below.load(std::memory_order_acquire);
          if (seen >= j1) break;
          below.wait(seen, std::memory_order_acquire);
        }
        for (Rank i = bottom; i >= top; --i) {
          RowState& rs = wk.rows[static_cast<std::size_t>(i - top)];
          for (Rank j = std::max(j0, i + 1); j < j1; ++j) cell(wk, rs, i, j);
        }
        mine.store(j1, std::memory_order_release);
        mine.notify_all();
      }
      mine.store(p, std::memory_order_release);
      mine.notify_all();
    }
  };
  const auto make_worker = [&] {
    Worker wk;
    wk.rows.resize(static_cast<std::size_t>(kTileRows));
    for (RowState& rs : wk.rows) {
      rs.left.resize(static_cast<std::size_t>(p));
      rs.a.assign(nb, kInf);
      rs.d.assign(nb, kInf);
      rs.off4.assign(nb, kInf);
    }
    wk.low.resize(nb + 2);
    wk.seg_min.resize(nb + 2);
    wk.done.resize(nb + 2);
    return wk;
  };
  const int nworkers = std::min<int>(std::max(threads, 1), std::min<int>(2, ntiles));
  std::vector<Worker> workers;
  for (int w = 0; w < nworkers; ++w) workers.push_back(make_worker());
  if (nworkers == 1) {
    run(workers[0], ntiles - 1, 1);
  } else {
    // The second worker's exception (an internal check) is rethrown here; either failing
    // releases the other from its wait.
    std::exception_ptr error;
    const auto guarded = [&](Worker& wk, Rank first_tile) {
      try {
        run(wk, first_tile, 2);
      } catch (...) {
        if (!failed.exchange(true)) error = std::current_exception();
        for (auto& pr : progress) {
          pr.store(p, std::memory_order_release);
          pr.notify_all();
        }
      }
    };
    std::thread helper;
    try {
      helper = std::thread(guarded, std::ref(workers[1]), ntiles - 2);
    } catch (const std::system_error&) {  // no thread to be had: one worker does it all
      run(workers[0], ntiles - 1, 1);
    }
    if (helper.joinable()) {
      guarded(workers[0], ntiles - 1);
      helper.join();
      if (error) std::rethrow_exception(error);
    }
  }
  for (const Worker& wk : workers) {
    dp.stats.splits += wk.stats.splits;
    dp.stats.evaluated += wk.stats.evaluated;
  }
}

// Fills R for the ranges [i..j] holding the fixed root r (gather-scatter-trees.md §3.4, X' = copy).
// Split k at r: for k < r the root lies right ((4), or (6) at k = j-1), for k >= r left ((5) at k =
// i, else (3)); both loops read contiguous rows (R and its transpose r_t, C and C^T).
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

// Two workers from this many ranks on (below, the start-up and waits cost more than they save),
// when the machine has two or more hardware threads.
constexpr Rank kTwoWorkersFrom = 400;

int automatic_workers(Rank p) {
  return p >= kTwoWorkersFrom && std::thread::hardware_concurrency() >= 2 ? 2 : 1;
}

OrderedTree optimal_tree(const GatherProblem& pb, std::optional<Rank> root, CaseSix case_six) {
  const Rank p = pb.nranks();
  OPTCOLL_CHECK(p >= 1, "empty gather problem");
  OPTCOLL_CHECK(!root || (*root >= 0 && *root < p), "root out of range");
  Dp dp;
  init(dp, pb, root.has_value());
  // The fixed-root program charges copy in case (6) (the paper's, too: gather-scatter-trees.md
  // §3.4).
  fill_free(dp, root || case_six == CaseSix::kText ? pb.copy : pb.beta, automatic_workers(p));
  if (root) fill_rooted(dp, *root);
  return extract(dp, pb, root.has_value());
}

std::pair<OrderedTree, OrderedTree> optimal_trees_best_and_fixed(const GatherProblem& pb,
                                                                 Rank root) {
  const Rank p = pb.nranks();
  OPTCOLL_CHECK(p >= 1 && root >= 0 && root < p, "root {} out of range", root);
  Dp dp;
  init(dp, pb, true);
  fill_free(dp, pb.copy, automatic_workers(p));
  fill_rooted(dp, root);
  return {extract(dp, pb, false), extract(dp, pb, true)};
}

OrderedTree optimal_tree_best_root(const GatherProblem& pb, int workers, TreeDpStats* stats) {
  OPTCOLL_CHECK(pb.nranks() >= 1, "empty gather problem");
  Dp dp;
  init(dp, pb, false);
  fill_free(dp, pb.copy, workers <= 0 ? automatic_workers(pb.nranks()) : workers);
  if (stats != nullptr) *stats = dp.stats;
  return extract(dp, pb, false);
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
