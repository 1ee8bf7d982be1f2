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
// bounds per block of 32; "Exact pruning" below), in tiles, and by two threads for large p; the
// result (costs, choices, tie order) is the plain program's bit for bit
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
constexpr std::int32_t kNoChoice = -3;  // none found (an internal error)
constexpr Rank kBlock = 32;
constexpr Rank kTileRows = 32;  // TileDriver's tiles
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

// The free table C (and its transpose) is filled for every range, row by row from the bottom
// (C[i][j] needs C[i][k < j] from its own row and C[k+1][j] from rows below), in three parts:
// the bound bookkeeping (the minima below), the cell kernel (CellKernel: one cell's candidates
// in tie order, pruned by those bounds) and the tiling driver (TileDriver: which rows and
// columns are filled in which order, by one or two threads).
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
//   row i:    head and whole blocks when the row has filled them, the tail as it grows
//             (RowMinima);
//   column j: whole block b when row 32b+1 (its last row; rows fill bottom-up) reaches column
//             j, the tail's rows [32·b1+1, j-1] likewise, the head's rows [i+2, 32·b0] grow
//             by one row per row (ColumnMinima).
// The bound min(bound4, bound3) less a rounding margin is below every candidate of the segment
// as computed (CellKernel::bound_segments). The margin is 0 when the arithmetic is exact
// (prune_rule); else 64·eps·(|bound| + best + 2·(alpha + beta·M)): each of the few roundings in
// a bound term, in a message cost and in a candidate is at most eps/2 of a magnitude below
// |bound| + 2·(alpha + beta·M) (for the bound) or below the candidate itself (compared with
// best), so 64·eps covers them many times over. (Without it the tests find rounded instances
// where pruning changes the tree.)

// Minima of the bound terms over one segment of split points k: of row i, a = C[i][k] + L_k and
// d = C[i][k] - beta·P[k+1]; of column j, e = C[k+1][j] + T_k and b = C[k+1][j] + beta·P[k+1].
struct Terms {
  Time a = kInf, d = kInf, e = kInf, b = kInf;
};

// What the bound terms are made of: alpha, beta and the prefix sums P.
struct TermRule {
  Time alpha = 0;
  Time beta = 0;
  const Time* pre = nullptr;

  // Adds split point k's row terms; row[k] = C[i][k], lf[k] = L_k.
  void add_row(Terms& t, const Time* row, const Time* lf, Rank k) const {
    t.a = std::min(t.a, row[k] + lf[k]);
    t.d = std::min(t.d, row[k] - beta * pre[k + 1]);
  }
  // Adds split point k's column terms at k1 = k + 1; col[k1] = C[k+1][j], rt[k1] = T_k.
  void add_col(Terms& t, const Time* col, const Time* rt, Rank k1) const {
    t.e = std::min(t.e, col[k1] + rt[k1]);
    t.b = std::min(t.b, col[k1] + beta * pre[k1]);
  }
};

// Cell (i, j)'s middle split points by segment index s: 0 the head, 1..n the whole blocks
// b0..b1-1, n+1 the tail. Without a whole block (n = 0), the head is [i+1, j-1) and the tail
// empty.
struct Segments {
  Rank i, j;
  Rank b0;        // the first whole block starts at >= i+1
  Rank b1;        // blocks with 32b+32 <= j-1 end before b1
  std::size_t n;  // whole blocks

  Segments(Rank i_, Rank j_)
      : i(i_),
        j(j_),
        b0((i_ + 1 + kBlock - 1) / kBlock),
        b1(std::max<Rank>(b0, (j_ - 1) / kBlock)),
        n(static_cast<std::size_t>(b1 - b0)) {}
  std::size_t count() const { return n + 2; }
  Rank begin(std::size_t s) const {
    if (s == 0) return i + 1;
    return s <= n ? (b0 + static_cast<Rank>(s) - 1) * kBlock : n == 0 ? j - 1 : b1 * kBlock;
  }
  Rank end(std::size_t s) const {
    if (s == 0) return n == 0 ? j - 1 : b0 * kBlock;
    return s <= n ? (b0 + static_cast<Rank>(s)) * kBlock : j - 1;
  }
};

// Row i's minima while its cells are filled left to right (one per row of a worker's tile).
struct RowMinima {
  std::vector<Time> left;  // left[k] = c(M(i, k)) = L_k
  std::vector<Time> a, d;  // a and d by whole block, once the row has filled the block
  std::vector<Time> off4;  // a4 - beta·P[i] by whole block
  Terms head, tail;        // a and d over the head (once filled) and over the current tail

  RowMinima(Rank p, std::size_t nblocks)
      : left(static_cast<std::size_t>(p)),
        a(nblocks, kInf),
        d(nblocks, kInf),
        off4(nblocks, kInf) {}

  // Before row i's first cell. pre_lo[b] = P[32b+1]: M(i, 32b) > 0 iff pre_lo[b] > P[i].
  void start(const Dp& dp, const TermRule& tr, const std::vector<Time>& pre_lo, Rank i) {
    for (Rank k = i; k < dp.p; ++k) left[static_cast<std::size_t>(k)] = dp.msg(i, k);
    for (std::size_t b = 0; b < off4.size(); ++b) {
      off4[b] = (pre_lo[b] > tr.pre[i] ? tr.alpha : 0) - tr.beta * tr.pre[i];
    }
    head = Terms{};
    tail = Terms{};
  }
  // Before cell (i, j): the head once complete (j = 32·b0), the tail grown to [32·b1, j-1).
  void before_cell(const TermRule& tr, const Time* row, Rank i, Rank j, Rank b0) {
    if (j == b0 * kBlock) {
      for (Rank k = i + 1; k < j; ++k) tr.add_row(head, row, left.data(), k);
    }
    if ((j - 1) % kBlock == 0) {
      tail = Terms{};
    } else if (j - 2 >= i) {
      tr.add_row(tail, row, left.data(), j - 2);
    }
  }
  // After cell (i, j): the whole block that ends at j.
  void after_cell(const TermRule& tr, const Time* row, Rank i, Rank j) {
    if (j % kBlock == kBlock - 1 && j - (kBlock - 1) >= i + 1) {
      Terms t;
      for (Rank k = j - (kBlock - 1); k <= j; ++k) tr.add_row(t, row, left.data(), k);
      a[static_cast<std::size_t>(j / kBlock)] = t.a;
      d[static_cast<std::size_t>(j / kBlock)] = t.d;
    }
  }
};

// Every column's minima, shared by the rows (and workers) that visit the column bottom-up.
struct ColumnMinima {
  std::size_t nblocks;
  // e, b and beta·P[j+1] + a3 for column j's whole block b at [j · nblocks + b].
  std::vector<Time> e, b, off3;
  std::vector<Terms> head;  // column j's e and b over the head's rows [i+2, 32·b0]
  std::vector<Terms> tail;  // column j's e and b over the tail's rows [32·b1+1, j-1]

  ColumnMinima(Rank p, std::size_t nblocks_)
      : nblocks(nblocks_),
        e(static_cast<std::size_t>(p) * nblocks_, kInf),
        b(static_cast<std::size_t>(p) * nblocks_, kInf),
        off3(static_cast<std::size_t>(p) * nblocks_, kInf),
        head(static_cast<std::size_t>(p)),
        tail(static_cast<std::size_t>(p)) {}

  // Before cell (i, j): column j's head rows, restarted where the head is empty.
  void before_cell(const TermRule& tr, const Time* col, const Time* rt, Rank i, Rank j) {
    Terms& h = head[static_cast<std::size_t>(j)];
    if ((i + 1) % kBlock == 0) {
      h = Terms{};
    } else if (i + 2 <= j) {
      tr.add_col(h, col, rt, i + 2);
    }
  }
  // After cell (i, j): at row i = 32b+1, column j's block b (rows i..i+31) or, for j <= i+31,
  // the tail's rows i..j-1 (b = (j-1)/32).
  void after_cell(const TermRule& tr, const Time* col, const Time* rt, Rank i, Rank j) {
    if (i % kBlock != 1) return;
    Terms t;
    if (j >= i + kBlock) {
      for (Rank k1 = i; k1 < i + kBlock; ++k1) tr.add_col(t, col, rt, k1);
      const std::size_t at =
          static_cast<std::size_t>(j) * nblocks + static_cast<std::size_t>(i / kBlock);
      e[at] = t.e;
      b[at] = t.b;
      const Rank ke = i + kBlock - 1;  // the block's last split + 1
      const Time* pre = tr.pre;
      off3[at] = tr.beta * pre[j + 1] + (pre[j + 1] > pre[ke] ? tr.alpha : 0);
    } else {
      for (Rank k1 = i; k1 < j; ++k1) tr.add_col(t, col, rt, k1);
      tail[static_cast<std::size_t>(j)] = t;
    }
  }
};

// Cell (i, j)'s operands: row[k] = C[i][k], col[k] = C[k][j], lf[k] = c(M(i, k)),
// rt[k + 1] = c(M(k + 1, j)).
struct CellView {
  Rank i = 0, j = 0;
  Time* row = nullptr;
  const Time* col = nullptr;
  const Time* lf = nullptr;
  const Time* rt = nullptr;
};

// The candidates outside the segments, in tie order: (5), (6), (4) at k = i before every
// segment, (3) at k = j-1 after them (kInf where that split does not exist).
struct EdgeCandidates {
  Time v5, v6, v4_first, v3_last;
};

// A cell's minimum so far and where it was first attained in tie order: -1 for (5), (6) or (4)
// at i, s for segment s, the number of segments for (3) at j-1.
struct Running {
  Time best;
  std::ptrdiff_t at;
};

// The segments' lowest bound and how many have a bound <= best (the others cannot hold it).
struct SegmentBounds {
  Time lowest;
  std::size_t open;
};

// One worker's scratch for a cell, by segment index: the bounds, the minima found and the
// evaluated segments in ascending order; and its statistics.
struct CellScratch {
  std::vector<Time> low, seg_min;
  std::vector<std::size_t> done;
  std::size_t nevaluated = 0;
  TreeDpStats stats;

  explicit CellScratch(std::size_t nblocks)
      : low(nblocks + 2), seg_min(nblocks + 2), done(nblocks + 2) {}
};

// The first split k in [k0, k1) whose candidate attains `best` ((4) before (3) at each k), as
// the choice 2k or 2k + 1, else kNoChoice: the first group of 8 whose minimum is `best`, then
// within it.
std::int32_t first_split_attaining(const CellView& c, Rank k0, Rank k1, Time best) {
  for (; k0 + 8 < k1 && block_minimum(c.row, c.col, c.lf, c.rt, k0, k0 + 8) != best; k0 += 8) {
  }
  for (Rank k = k0; k < k1; ++k) {
    const Time mx = std::max(c.row[k], c.col[k + 1]);
    if (mx + c.lf[k] == best) return 2 * k;
    if (mx + c.rt[k + 1] == best) return 2 * k + 1;
  }
  return kNoChoice;
}

// The cell kernel: fills C[i][j], its transpose and its choice, given row i's earlier columns
// and column j's lower rows, and keeps the minima the cell completes. For each cell a first
// pass finds the minimum branch-free (min(v4, v3) = mx + min(c_left, c_right) exactly, since
// rounding is monotone), a second pass finds the first candidate in tie order that attains it.
// The result is the same in whatever order of cells respects those dependencies and visits
// each column's rows in descending order. Both workers read the kernel on every cell: it has
// cache lines of its own (alignas), apart from what a worker writes.
class alignas(64) CellKernel {
 public:
  CellKernel(Dp& dp, Time case_six_rate);
  std::size_t blocks() const { return nblocks_; }
  void start_row(RowMinima& rs, Rank i) const { rs.start(dp_, terms_, pre_lo_, i); }
  void fill(CellScratch& sc, RowMinima& rs, Rank i, Rank j);

 private:
  EdgeCandidates edge_candidates(const CellView& c) const;
  SegmentBounds bound_segments(CellScratch& sc, const RowMinima& rs, const Segments& seg,
                               Time best) const;
  std::size_t bound_blocks(Time* low, const RowMinima& rs, const Segments& seg, Time best,
                           Time slack, Time& lowest) const;
  void search_segments(CellScratch& sc, const CellView& c, const Segments& seg,
                       SegmentBounds bounds, Running& run) const;
  std::int32_t first_attaining(const CellScratch& sc, const CellView& c, const Segments& seg,
                               const EdgeCandidates& edge, Time best) const;

  Dp& dp_;
  Time case_six_rate_;
  PruneRule rule_;
  Time mass_term_;           // alpha + beta·M, M the total
  std::vector<Time> msg_t_;  // msg_t_[lo(j, a)] = c(M(a, j)): contiguous in a for each j
  std::size_t nblocks_;
  std::vector<Time> pre_lo_;  // P at the start of whole block b: P[32b+1]
  TermRule terms_;
  ColumnMinima cols_;
};

CellKernel::CellKernel(Dp& dp, Time case_six_rate)
    : dp_(dp),
      case_six_rate_(case_six_rate),
      rule_(prune_rule(dp, case_six_rate)),
      mass_term_(dp.pb->alpha + dp.pb->beta * dp.prefix.back()),
      msg_t_(dp.ct.size()),
      nblocks_(static_cast<std::size_t>(dp.p / kBlock + 1)),
      pre_lo_(nblocks_, kInf),
      terms_{dp.pb->alpha, dp.pb->beta, dp.prefix.data()},
      cols_(dp.p, nblocks_) {
  const Rank p = dp.p;
  for (Rank j = 0; j < p; ++j) {
    for (Rank a = 0; a <= j; ++a) msg_t_[dp.lo(j, a)] = dp.msg(a, j);
  }
  for (std::size_t b = 0; b * kBlock + 1 <= static_cast<std::size_t>(p); ++b) {
    pre_lo_[b] = dp.prefix[b * kBlock + 1];
  }
}

void CellKernel::fill(CellScratch& sc, RowMinima& rs, Rank i, Rank j) {
  const CellView c{
      i, j, &dp_.c[dp_.up(i, i)] - i, &dp_.ct[dp_.lo(j, 0)], rs.left.data(), &msg_t_[dp_.lo(j, 0)]};
  const Segments seg(i, j);
  cols_.before_cell(terms_, c.col, c.rt, i, j);
  rs.before_cell(terms_, c.row, i, j, seg.b0);
  const EdgeCandidates edge = edge_candidates(c);
  const Time best = std::min(std::min(edge.v5, edge.v6), std::min(edge.v4_first, edge.v3_last));
  sc.stats.splits += std::max<Rank>(0, j - i - 2);
  const SegmentBounds bounds = bound_segments(sc, rs, seg, best);
  Running run{best, std::min(std::min(edge.v5, edge.v6), edge.v4_first) == best
                        ? -1
                        : static_cast<std::ptrdiff_t>(seg.count())};
  search_segments(sc, c, seg, bounds, run);
  const std::int32_t how = first_attaining(sc, c, seg, edge, run.best);
  OPTCOLL_CHECK(how != kNoChoice, "optimal tree DP lost its minimum at [{}, {}]", i, j);
  c.row[j] = run.best;
  dp_.ct[dp_.lo(j, i)] = run.best;
  dp_.choice[dp_.up(i, j)] = how;
  rs.after_cell(terms_, c.row, i, j);
  cols_.after_cell(terms_, c.col, c.rt, i, j);
}

EdgeCandidates CellKernel::edge_candidates(const CellView& c) const {
  const Rank i = c.i;
  const Rank j = c.j;
  return {std::max(dp_.pb->copy * dp_.size(i), c.col[i + 1]) + c.rt[i + 1],
          c.row[j - 1] + c.lf[j - 1] + case_six_rate_ * dp_.size(j),
          i <= j - 2 ? std::max(c.row[i], c.col[i + 1]) + c.lf[i] : kInf,
          j - 1 >= i + 1 ? std::max(c.row[j - 1], c.col[j]) + c.rt[j] : kInf};
}

// Fills sc.low with every segment's bound: -kInf for a segment (kInf for an empty one) when
// pruning is off or there is no whole block, else the bound of the comment above.
SegmentBounds CellKernel::bound_segments(CellScratch& sc, const RowMinima& rs, const Segments& seg,
                                         Time best) const {
  Time* low = sc.low.data();
  if (seg.n == 0 || !rule_.on) {
    for (std::size_t s = 0; s < seg.count(); ++s) {
      low[s] = seg.begin(s) < seg.end(s) ? -kInf : kInf;
    }
    return {std::min(low[0], low[1]), seg.count()};
  }
  const Rank i = seg.i;
  const Rank j = seg.j;
  const Time* pre = terms_.pre;
  const Time alpha = terms_.alpha;
  const Time pi = pre[i];
  const Time pj = pre[j + 1];
  const Time off4 = -terms_.beta * pi;
  const Time off3 = terms_.beta * pj;
  const Time slack = best + 2 * mass_term_;
  const auto bound = [&](const Terms& row, const Terms& col, Time a4, Time a3) {
    const Time raw =
        std::min(std::max(row.a, col.b + off4 + a4), std::max(col.e, row.d + off3 + a3));
    return raw - rule_.ulps * (std::abs(raw) + slack);
  };
  const std::size_t n = seg.n;
  low[0] = i + 1 == seg.b0 * kBlock
               ? kInf  // empty head
               : bound(rs.head, cols_.head[static_cast<std::size_t>(j)],
                       pre[i + 2] > pi ? alpha : 0, pj > pre[seg.b0 * kBlock] ? alpha : 0);
  low[n + 1] = seg.b1 * kBlock == j - 1
                   ? kInf  // empty tail
                   : bound(rs.tail, cols_.tail[static_cast<std::size_t>(j)],
                           pre[seg.b1 * kBlock + 1] > pi ? alpha : 0, pj > pre[j - 1] ? alpha : 0);
  Time lowest = kInf;
  const std::size_t count = bound_blocks(low, rs, seg, best, slack, lowest);
  return {std::min(lowest, std::min(low[0], low[n + 1])),
          count + (low[0] <= best ? 1 : 0) + (low[n + 1] <= best ? 1 : 0)};
}

// The whole blocks' bounds into low[1..n]: bound4 = max(a, b + (a4 - beta·P[i])),
// bound3 = max(e, d + (beta·P[j+1] + a3)), the parenthesized offsets kept per row (off4) and
// per column (off3). Sets `lowest` to their minimum; returns how many are <= best.
std::size_t CellKernel::bound_blocks(Time* low, const RowMinima& rs, const Segments& seg, Time best,
                                     Time slack, Time& lowest) const {
  const std::size_t at = static_cast<std::size_t>(seg.j) * nblocks_;
  const Time* ce = &cols_.e[at];
  const Time* cb = &cols_.b[at];
  const Time* c3 = &cols_.off3[at];
  const Time* ra = rs.a.data();
  const Time* rd = rs.d.data();
  const Time* r4 = rs.off4.data();
  const Rank b0 = seg.b0;
  const Rank b1 = seg.b1;
  const Time ulps = rule_.ulps;
  Time* lw = &low[1] - b0;
  Time low_min = kInf;
  std::size_t count = 0;
  if (ulps == 0) {
#pragma omp simd reduction(min : low_min) reduction(+ : count)
    for (Rank b = b0; b < b1; ++b) {
      lw[b] = std::min(std::max(ra[b], cb[b] + r4[b]), std::max(ce[b], rd[b] + c3[b]));
      low_min = std::min(low_min, lw[b]);
      count += lw[b] <= best ? 1 : 0;
    }
  } else {
#pragma omp simd reduction(min : low_min) reduction(+ : count)
    for (Rank b = b0; b < b1; ++b) {
      const Time raw = std::min(std::max(ra[b], cb[b] + r4[b]), std::max(ce[b], rd[b] + c3[b]));
      lw[b] = raw - ulps * (std::abs(raw) + slack);
      low_min = std::min(low_min, lw[b]);
      count += lw[b] <= best ? 1 : 0;
    }
  }
  lowest = low_min;
  return count;
}

// Evaluates the segments that may hold the first candidate attaining the minimum. A segment is
// skipped when its bound is above the best value found so far, or equal to it while an earlier
// candidate in tie order already attains it. The segment with the lowest bound is evaluated
// first, then the others in order (few are open).
void CellKernel::search_segments(CellScratch& sc, const CellView& c, const Segments& seg,
                                 SegmentBounds bounds, Running& run) const {
  sc.nevaluated = 0;
  if (bounds.open == 0) return;
  const Time* low = sc.low.data();
  const auto skip = [&](std::size_t s) {
    return low[s] > run.best || (low[s] >= run.best && run.at < static_cast<std::ptrdiff_t>(s));
  };
  const auto eval = [&](std::size_t s) {
    const Time m = block_minimum(c.row, c.col, c.lf, c.rt, seg.begin(s), seg.end(s));
    sc.stats.evaluated += seg.end(s) - seg.begin(s);
    sc.seg_min[s] = m;
    std::size_t q = sc.nevaluated++;
    for (; q > 0 && sc.done[q - 1] > s; --q) sc.done[q] = sc.done[q - 1];
    sc.done[q] = s;
    const auto at = static_cast<std::ptrdiff_t>(s);
    if (m < run.best || (m == run.best && at < run.at)) run.at = at;
    run.best = std::min(run.best, m);
  };
  const std::size_t nseg = seg.count();
  std::size_t first = 0;
  while (first + 1 < nseg && low[first] != bounds.lowest) ++first;
  if (!skip(first)) eval(first);
  for (std::size_t s = 0; s < nseg && bounds.open > 1; ++s) {
    if (low[s] <= run.best && s != first && !skip(s)) eval(s);
  }
}

// The choice of the first candidate in tie order that attains `best`, else kNoChoice.
std::int32_t CellKernel::first_attaining(const CellScratch& sc, const CellView& c,
                                         const Segments& seg, const EdgeCandidates& edge,
                                         Time best) const {
  if (edge.v5 == best) return kCase5;
  if (edge.v6 == best) return kCase6;
  if (edge.v4_first == best) return 2 * c.i;
  for (std::size_t q = 0; q < sc.nevaluated; ++q) {
    const std::size_t s = sc.done[q];
    if (sc.seg_min[s] != best) continue;
    const std::int32_t how = first_split_attaining(c, seg.begin(s), seg.end(s), best);
    if (how != kNoChoice) return how;
  }
  return edge.v3_last == best ? 2 * (c.j - 1) + 1 : kNoChoice;
}

// One worker's state: the rows of its current tile (row top + r at r) and its cell scratch.
// Each in cache lines of its own (alignas): a worker writes its scratch on every cell, and
// sharing a line with the other worker's state costs the second worker most of its speedup.
struct alignas(64) Worker {
  std::vector<RowMinima> rows;
  CellScratch scratch;

  // The rows' arrays before the scratch, and no temporary row (the heap layout of the
  // previous version, whose two-worker timing at small p depends on it).
  Worker(Rank p, std::size_t nblocks) : rows(tile_rows(p, nblocks)), scratch(nblocks) {}

  static std::vector<RowMinima> tile_rows(Rank p, std::size_t nblocks) {
    std::vector<RowMinima> rows;
    rows.reserve(static_cast<std::size_t>(kTileRows));
    for (Rank r = 0; r < kTileRows; ++r) rows.emplace_back(p, nblocks);
    return rows;
  }
};

// The tiling driver. Tiles of kTileRows rows by kTileCols columns: row tiles from the bottom,
// within one the column tiles from the left, within a tile rows from the bottom and columns
// from the left. Every cell still finds its row's earlier columns and its column's lower rows
// filled, and every column is visited by its rows in descending order (its running minima); a
// tile reuses the rows of C^T of its columns across its rows.
//
// With two workers, worker w takes every other row tile (a wavefront): before a column tile
// it waits until the row tile below has finished those columns (progress[t] = the columns
// below which row tile t is done; release/acquire order the cells and column minima it
// wrote). Each cell computes the same values in the same order of its own inputs, so the
// result does not depend on the number of workers.
class TileDriver {
 public:
  TileDriver(CellKernel& kernel, Rank p);
  Rank tiles() const { return ntiles_; }
  // Row tiles first_tile, first_tile - stride, ... down to 0 (the top).
  void run(Worker& wk, Rank first_tile, Rank stride);
  // Two workers on alternate row tiles (one if no thread can be started).
  void run_two(Worker& first, Worker& second);

 private:
  bool wait_for_tile_below(Rank t, Rank j1);
  void publish(Rank t, Rank done);

  CellKernel& kernel_;
  Rank p_;
  Rank ntiles_;
  std::vector<std::atomic<Rank>> progress_;
  std::atomic<bool> failed_{false};
};

TileDriver::TileDriver(CellKernel& kernel, Rank p)
    : kernel_(kernel),
      p_(p),
      ntiles_((p - 2) / kTileRows + 1),
      progress_(static_cast<std::size_t>(ntiles_) + 1) {
  for (auto& pr : progress_) pr.store(0, std::memory_order_relaxed);
  progress_[static_cast<std::size_t>(ntiles_)].store(p, std::memory_order_relaxed);  // none below
}

// Waits until row tile t + 1 has finished the columns below j1; false if a worker failed.
bool TileDriver::wait_for_tile_below(Rank t, Rank j1) {
  std::atomic<Rank>& below = progress_[static_cast<std::size_t>(t) + 1];
  for (;;) {
    if (failed_.load(std::memory_order_relaxed)) return false;
    const Rank seen = below.load(std::memory_order_acquire);
    if (seen >= j1) return true;
    below.wait(seen, std::memory_order_acquire);
  }
}

void TileDriver::publish(Rank t, Rank done) {
  std::atomic<Rank>& mine = progress_[static_cast<std::size_t>(t)];
  mine.store(done, std::memory_order_release);
  mine.notify_all();
}

void TileDriver::run(Worker& wk, Rank first_tile, Rank stride) {
  for (Rank t = first_tile; t >= 0; t -= stride) {
    const Rank top = t * kTileRows;
    const Rank bottom = std::min(top + kTileRows - 1, p_ - 2);
    for (Rank i = top; i <= bottom; ++i) {
      kernel_.start_row(wk.rows[static_cast<std::size_t>(i - top)], i);
    }
    for (Rank j0 = (top + 1) / kTileCols * kTileCols; j0 < p_; j0 += kTileCols) {
      const Rank j1 = std::min(j0 + kTileCols, p_);
      if (!wait_for_tile_below(t, j1)) return;
      for (Rank i = bottom; i >= top; --i) {
        RowMinima& rs = wk.rows[static_cast<std::size_t>(i - top)];
        for (Rank j = std::max(j0, i + 1); j < j1; ++j) kernel_.fill(wk.scratch, rs, i, j);
      }
      publish(t, j1);
    }
    publish(t, p_);
  }
}

void TileDriver::run_two(Worker& first, Worker& second) {
  // The second worker's exception (an internal check) is rethrown here; either failing
  // releases the other from its wait.
  std::exception_ptr error;
  const auto guarded = [&](Worker& wk, Rank first_tile) {
    try {
      run(wk, first_tile, 2);
    } catch (...) {
      if (!failed_.exchange(true)) error = std::current_exception();
      for (auto& pr : progress_) {
        pr.store(p_, std::memory_order_release);
        pr.notify_all();
      }
    }
  };
  std::thread helper;
  try {
    helper = std::thread(guarded, std::ref(second), ntiles_ - 2);
  } catch (const std::system_error&) {  // no thread to be had: one worker does it all
    run(first, ntiles_ - 1, 1);
  }
  if (helper.joinable()) {
    guarded(first, ntiles_ - 1);
    helper.join();
    if (error) std::rethrow_exception(error);
  }
}

// Fills C, its transpose and the choices with `threads` workers (at most 2), and adds the
// workers' statistics to dp.stats.
void fill_free(Dp& dp, Time case_six_rate, int threads) {
  CellKernel kernel(dp, case_six_rate);
  TileDriver driver(kernel, dp.p);
  const int nworkers = std::min<int>(std::max(threads, 1), std::min<int>(2, driver.tiles()));
  std::vector<Worker> workers;
  for (int w = 0; w < nworkers; ++w) workers.push_back(Worker(dp.p, kernel.blocks()));
  if (nworkers == 1) {
    driver.run(workers[0], driver.tiles() - 1, 1);
  } else {
    driver.run_two(workers[0], workers[1]);
  }
  for (const Worker& wk : workers) {
    dp.stats.splits += wk.scratch.stats.splits;
    dp.stats.evaluated += wk.scratch.stats.evaluated;
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
