// SPDX-License-Identifier: Apache-2.0
// File: the optimal strictly rank-ordered binary gather/scatter tree (Träff 2019, Figure 7,
// Theorem 3; docs/math/gather-scatter-trees.md §3.5). B[i][j] over ranks i..j, every node's items
// in rank order:
//   root i, one child  [i+1..j]:                  [copy, child]
//   root i, children   [i+1..k], [k+1..j]:        [copy, c1, c2]
//   root q (i<q<j),    [i..q-1], [q+1..j]:        [left, copy, right]
//   root j, one child  [i..j-1]:                  [child, copy]
//   root j, children   [i..k], [k+1..j-1]:        [c1, c2, copy]
// Ties: the smallest root index. A fixed root r only changes the top range [0..p-1].
// Cost: O(p^3) time in the worst case, O(p^2) memory; exact block pruning (below; docs/
// design.md, "How the binary DP is fast") evaluates 2.6% of the candidates at p = 2000 on
// Träff's Increasing instance, and the tree is the unpruned program's bit for bit.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>

#include "optcoll/algorithms/planners/gather_trees.h"
#include "optcoll/model/error.h"

namespace optcoll::algorithms::planners {
namespace {

struct Choice {
  Rank root = 0;
  Rank split = -1;  // k of a two-children case, -1 otherwise
};

struct BinaryDp {
  const GatherProblem* pb = nullptr;
  std::size_t p = 0;
  std::vector<Time> prefix;
  // Square tables, [a * p + b] for ranges a <= b, and their transposes [b * p + a], so that
  // every inner loop below reads contiguous memory: B and c(M(a, b)).
  std::vector<Time> b, bt, msg, msg_t;
  std::vector<Choice> choice;

  std::size_t idx(Rank i, Rank j) const {
    return static_cast<std::size_t>(i) * p + static_cast<std::size_t>(j);
  }
  Time at(Rank i, Rank j) const { return i > j ? 0 : b[idx(i, j)]; }
  Time message(Rank i, Rank j) const { return i > j ? 0 : msg[idx(i, j)]; }
  Time copy(Rank q) const { return pb->copy * pb->sizes[static_cast<std::size_t>(q)]; }

  void init(const GatherProblem& problem) {
    pb = &problem;
    p = problem.sizes.size();
    prefix.assign(p + 1, 0);
    for (std::size_t i = 0; i < p; ++i) prefix[i + 1] = prefix[i] + problem.sizes[i];
    b.assign(p * p, 0);
    bt.assign(p * p, 0);
    msg.assign(p * p, 0);
    msg_t.assign(p * p, 0);
    choice.assign(p * p, Choice{});
    for (std::size_t i = 0; i < p; ++i) {
      choice[i * p + i] = {static_cast<Rank>(i), -1};
      for (std::size_t j = i; j < p; ++j) {
        msg[i * p + j] = msg_t[j * p + i] = problem.message(prefix[j + 1] - prefix[i]);
      }
    }
  }

  // Best tree of [i..j] (i < j) rooted at q; ties: the first split k.
  std::pair<Time, Choice> rooted(Rank i, Rank j, Rank q) const {
    if (q > i && q < j) {
      return {
          std::max(at(i, q - 1) + message(i, q - 1) + copy(q), at(q + 1, j)) + message(q + 1, j),
          {q, -1}};
    }
    std::pair<Time, Choice> best{0, {q, -1}};
    if (q == i) {
      const Time c = copy(i);
      const Time* row = &b[idx(i + 1, 0)];     // row[k] = B[i+1][k]
      const Time* mrow = &msg[idx(i + 1, 0)];  // mrow[k] = c(M(i+1, k))
      const Time* col = &bt[idx(j, 0)];        // col[a] = B[a][j]
      const Time* mcol = &msg_t[idx(j, 0)];    // mcol[a] = c(M(a, j))
      best.first = std::max(c, col[i + 1]) + mcol[i + 1];
      for (Rank k = i + 1; k < j; ++k) {
        const Time v = std::max(std::max(c, row[k]) + mrow[k], col[k + 1]) + mcol[k + 1];
        if (v < best.first) best = {v, {q, k}};
      }
      return best;
    }
    const Time* row = &b[idx(i, 0)];
    const Time* mrow = &msg[idx(i, 0)];
    const Time* col = &bt[idx(j - 1, 0)];
    const Time* mcol = &msg_t[idx(j - 1, 0)];
    const Time c = copy(j);
    best.first = row[j - 1] + mrow[j - 1] + c;
    for (Rank k = i; k + 1 < j; ++k) {
      const Time v = std::max(row[k] + mrow[k], col[k + 1]) + mcol[k + 1] + c;
      if (v < best.first) best = {v, {q, k}};
    }
    return best;
  }

  // The three families of candidates of [i..j] (i + 1 < j), each of n = j - i - 1, back to
  // back in a buffer: q = i with split k = i+1+t; q = i+1+t (one child each side); q = j
  // with split k = i+t (t = 0..n-1).
  enum Family : std::uint8_t { kFirst, kMiddle, kLast };

  // Writes the candidates t0 <= t < t1 of `family` to out[t - t0] (a vectorizable loop).
  void fill(Family family, Rank i, Rank j, Rank t0, Rank t1, Time* out) const {
    switch (family) {
      case kFirst: {
        const Time c = copy(i);
        const Time* row = &b[idx(i + 1, 0)];     // row[k] = B[i+1][k]
        const Time* mrow = &msg[idx(i + 1, 0)];  // mrow[k] = c(M(i+1, k))
        const Time* col = &bt[idx(j, 0)];        // col[a] = B[a][j]
        const Time* mcol = &msg_t[idx(j, 0)];    // mcol[a] = c(M(a, j))
        for (Rank t = t0; t < t1; ++t) {
          const Rank k = i + 1 + t;
          out[t - t0] = std::max(std::max(c, row[k]) + mrow[k], col[k + 1]) + mcol[k + 1];
        }
        return;
      }
      case kMiddle: {
        const Time* row = &b[idx(i, 0)];
        const Time* mrow = &msg[idx(i, 0)];
        const Time* col = &bt[idx(j, 0)];
        const Time* mcol = &msg_t[idx(j, 0)];
        const Time* sizes = pb->sizes.data();
        const Time rate = pb->copy;
        for (Rank t = t0; t < t1; ++t) {
          const Rank q = i + 1 + t;
          out[t - t0] =
              std::max(row[q - 1] + mrow[q - 1] + rate * sizes[q], col[q + 1]) + mcol[q + 1];
        }
        return;
      }
      case kLast: {
        const Time c = copy(j);
        const Time* row = &b[idx(i, 0)];
        const Time* mrow = &msg[idx(i, 0)];
        const Time* col = &bt[idx(j - 1, 0)];
        const Time* mcol = &msg_t[idx(j - 1, 0)];
        for (Rank t = t0; t < t1; ++t) {
          const Rank k = i + t;
          out[t - t0] = std::max(row[k] + mrow[k], col[k + 1]) + mcol[k + 1] + c;
        }
        return;
      }
    }
  }

  // The first candidate in the tie order (the one-child cases, then by family and index)
  // whose value is `best`; candidates not evaluated hold +infinity.
  std::pair<Time, Choice> first_attaining(Rank i, Rank j, Time best, Time one_first, Time one_last,
                                          const Time* first) const {
    const Rank n = j - i - 1;
    const Time* middle = first + n;
    const Time* last = middle + n;
    if (one_first == best) return {best, {i, -1}};
    for (Rank t = 0; t < n; ++t) {
      if (first[t] == best) return {best, {i, i + 1 + t}};
    }
    for (Rank t = 0; t < n; ++t) {
      if (middle[t] == best) return {best, {i + 1 + t, -1}};
    }
    if (one_last == best) return {best, {j, -1}};
    for (Rank t = 0; t < n; ++t) {
      if (last[t] == best) return {best, {j, i + t}};
    }
    OPTCOLL_CHECK(false, "binary tree DP lost its minimum at [{}, {}]", i, j);
    return {best, {i, -1}};
  }

  // Best tree of [i..j] over every root (ties: the smallest root, then the first split),
  // every candidate evaluated: the reference (binary_optimal_tree_plain) and small ranges.
  std::pair<Time, Choice> best_root_plain(Rank i, Rank j, std::vector<Time>& buf) const {
    const Rank n = j - i - 1;
    buf.resize(3 * static_cast<std::size_t>(n) + 1);
    for (const Family f : {kFirst, kMiddle, kLast}) fill(f, i, j, 0, n, buf.data() + f * n);
    const Time one_first = std::max(copy(i), at(i + 1, j)) + message(i + 1, j);
    const Time one_last = at(i, j - 1) + message(i, j - 1) + copy(j);
    Time best = std::min(one_first, one_last);
    const Time* all = buf.data();
    const Rank total = 3 * n;
#pragma omp simd reduction(min : best)
    for (Rank t = 0; t < total; ++t) best = std::min(best, all[t]);
    return first_attaining(i, j, best, one_first, one_last, buf.data());
  }

  // ---- exact block pruning (best_root)
  //
  // With P the prefix sums of the sizes and c(M) >= beta·M (c(M) = alpha + beta·M for M > 0,
  // c(0) = 0; alpha, beta >= 0), every candidate is at least max(row side, column side):
  //   first (q = i, split k):  v >= [B[i+1][k] + c(M(i+1,k)) - beta·P[k+1]] + beta·P[j+1]
  //                            v >= B[k+1][j] + c(M(k+1,j))
  //   middle (root q):         v >= [B[i][q-1] + c(M(i,q-1)) - beta·P[q+1]] + beta·P[j+1]
  //                            v >= B[q+1][j] + c(M(q+1,j))
  //   last (q = j, split k):   v >= [B[i][k] + c(M(i,k)) - beta·P[k+1]] + beta·P[j] + copy_j
  //                            v >= B[k+1][j-1] + c(M(k+1,j-1))
  // (each candidate adds non-negative terms to these: its own message cost, at least beta
  // times its mass, and the copies). The bracketed terms depend on their row alone, the
  // column sides on their column alone: their minima over aligned blocks of ranks are kept
  // per row and per column, running (over the entries filled so far, which include every
  // entry a range reads), on three levels: blocks of 8, 64 and 512 ranks. A block of a
  // level's width of candidates spans at most two aligned blocks of each side, so the
  // maximum of the two sides' minima bounds every candidate of it. The search goes top-down:
  // a block whose bound rules out the first candidate in tie order that attains the minimum
  // (above the best value found so far, or equal to it while an earlier candidate attains
  // it) is skipped with everything below it. With integer parameters and sizes whose sums
  // stay below 2^52 the arithmetic is exact; otherwise the bound is lowered by a margin of 64
  // eps of the magnitudes involved (as in optimal_tree_dp.cc).
  static constexpr Rank kFine = 8;
  static constexpr Rank kFanout = 8;
  static constexpr int kTop = 2;  // the top level
  static constexpr Rank width(int level) { return level == 0 ? kFine : kFanout * width(level - 1); }

  // Minima of terms over the aligned blocks of `level`, for `lines` lines (a row's terms or a
  // column's), at [line * nblocks + block].
  template <int kLevel>
  struct BlockMinima {
    static constexpr Rank kWidth = width(kLevel);
    std::size_t nblocks = 0;
    std::vector<Time> min;

    void init(std::size_t lines, std::size_t nranks) {
      nblocks = (nranks + static_cast<std::size_t>(kWidth) - 1) / static_cast<std::size_t>(kWidth);
      min.assign(lines * nblocks, kNone);
    }
    void reset() { std::fill(min.begin(), min.end(), kNone); }
    void take(std::size_t line, Rank k, Time v) {
      Time& m = min[line * nblocks + static_cast<std::size_t>(k / kWidth)];
      m = std::min(m, v);
    }
    const Time* line(std::size_t l) const { return &min[l * nblocks]; }
  };

  // Every level of one kind of term.
  struct Levels {
    template <std::size_t... L>
    static auto make(std::index_sequence<L...>) -> std::tuple<BlockMinima<static_cast<int>(L)>...>;
    decltype(make(std::make_index_sequence<kTop + 1>())) level;
    void init(std::size_t lines, std::size_t nranks) {
      std::apply([&](auto&... m) { (m.init(lines, nranks), ...); }, level);
    }
    void reset() {
      std::apply([](auto&... m) { (m.reset(), ...); }, level);
    }
    void take(std::size_t line, Rank k, Time v) {
      std::apply([&](auto&... m) { (m.take(line, k, v), ...); }, level);
    }
  };

  // Block minima (running: over the entries filled so far): of the row terms
  // [B + c(M) - beta·P[k+1]] (line r: row r), of the same with P[k+2] (middle), and of the
  // column terms (line c: column c over aligned blocks of rows).
  Levels rows, rows_middle, column;
  Time margin_ulps = 0;
  Time magnitude = 0;                          // alpha + beta · total mass
  std::int64_t candidates = 0, evaluated = 0;  // for the statistics
  bool prune = false;                          // pruning_applies(), set by init_pruning

  static constexpr Time kNone = std::numeric_limits<Time>::infinity();
  Time column_term(Rank r, Rank c) const { return b[idx(r, c)] + msg[idx(r, c)]; }
  Time row_term(Rank r, Rank k, Rank shift) const {
    return b[idx(r, k)] + msg[idx(r, k)] - pb->beta * prefix[static_cast<std::size_t>(k + shift)];
  }

  void init_pruning() {
    rows.init(p, p);
    rows_middle.init(p, p);
    column.init(p, p);
    for (std::size_t c = 0; c < p; ++c) {
      const auto r = static_cast<Rank>(c);
      column.take(c, r, column_term(r, r));
      rows.take(c, r, row_term(r, r, 1));
      if (c + 2 <= p) rows_middle.take(c, r, row_term(r, r, 2));
    }
    hints.assign(p, std::nullopt);
    bool exact = std::trunc(pb->alpha) == pb->alpha && std::trunc(pb->beta) == pb->beta &&
                 std::trunc(pb->copy) == pb->copy;
    Time max_size = 0;
    for (const Time m : pb->sizes) {
      exact = exact && std::trunc(m) == m;
      max_size = std::max(max_size, m);
    }
    magnitude = pb->alpha + pb->beta * prefix.back();
    const Time largest = 2 * pb->copy * max_size + static_cast<Time>(p + 1) * magnitude;
    exact = exact && prefix.back() < 0x1p52 && largest < 0x1p52;
    margin_ulps = exact ? 0 : 64 * std::numeric_limits<Time>::epsilon();
    prune = pruning_applies();
  }

  // Whether pruning is sound here: non-negative finite parameters and sizes.
  bool pruning_applies() const {
    bool ok = pb->alpha >= 0 && pb->beta >= 0 && pb->copy >= 0 && std::isfinite(pb->alpha) &&
              std::isfinite(pb->beta) && std::isfinite(pb->copy) && std::isfinite(prefix.back());
    for (const Time m : pb->sizes) ok = ok && m >= 0;
    return ok;
  }

  // B[i][j] is known: the running minima take it in.
  void take_in(Rank i, Rank j) {
    const auto ci = static_cast<std::size_t>(i);
    rows.take(ci, j, row_term(i, j, 1));
    if (static_cast<std::size_t>(j) + 2 <= p) rows_middle.take(ci, j, row_term(i, j, 2));
    column.take(static_cast<std::size_t>(j), i, column_term(i, j));
  }

  Time beta_prefix(Rank k) const { return pb->beta * prefix[static_cast<std::size_t>(k)]; }

  // The position of candidate t of `family` in the tie order of [i..j] (n = j - i - 1): the
  // one-child root i (0), the first family, the middle family, the one-child root j (2n + 1),
  // the last family.
  static std::int64_t tie_position(Family family, Rank n, Rank t) {
    const std::int64_t offset[] = {1, 1 + std::int64_t{n}, 2 + 2 * std::int64_t{n}};
    return offset[family] + t;
  }

  // The search of one range [i..j]: the least value found so far and the first position in
  // tie order that attains it.
  struct Search {
    Rank i, j, n;
    Time best;
    std::int64_t at;
  };

  // Evaluates candidates t0..t1-1 of `family` (t1 - t0 <= kFine) into `s`: their minimum
  // first (branch-free), then, if it improves on `s` (lower, or equal and earlier in tie
  // order), the first candidate of the block that attains it.
  void evaluate_block(Family family, Rank t0, Rank t1, Search& s) {
    Time out[kFine] = {};
    fill(family, s.i, s.j, t0, t1, out);
    evaluated += t1 - t0;
    const Rank len = t1 - t0;
    Time m = kNone;
#pragma omp simd reduction(min : m)
    for (Rank u = 0; u < len; ++u) m = std::min(m, out[u]);
    const std::int64_t start = tie_position(family, s.n, t0);
    if (m > s.best || (m == s.best && start > s.at)) return;
    Rank u = 0;
    while (out[u] != m) ++u;
    s.best = m;
    s.at = start + u;
  }

  // One family's operands for the bounds of [i..j]: per level the row line and the column
  // line of block minima, the offsets from candidate t to the ranks of the row side and the
  // column side, and the terms added to the row side's minimum:
  //   first:  row i+1 at k = i+1+t, column j at k+1,     + beta·P[j+1]
  //   middle: row i at q-1 = i+t (P[q+1]), column j at q+1 = i+2+t, + beta·P[j+1]
  //   last:   row i at k = i+t, column j-1 at k+1,       + beta·P[j] + copy_j
  struct FamilyView {
    Family family = kFirst;
    std::int64_t tie0 = 0;  // the tie position of t = 0
    std::array<const Time*, kTop + 1> row{}, col{};
    unsigned row_off = 0, col_off = 0;
    Time add = 0, add_copy = 0;
  };

  template <std::size_t... L>
  void set_lines(FamilyView& v, const Levels& r, Rank row, Rank col,
                 std::index_sequence<L...> /*levels*/) const {
    ((v.row[L] = std::get<L>(r.level).line(static_cast<std::size_t>(row)),
      v.col[L] = std::get<L>(column.level).line(static_cast<std::size_t>(col))),
     ...);
  }

  FamilyView family_view(Family family, Rank i, Rank j, Rank n) const {
    FamilyView v;
    v.family = family;
    v.tie0 = tie_position(family, n, 0);
    const auto levels = std::make_index_sequence<kTop + 1>();
    const Rank row = family == kFirst ? i + 1 : i;
    set_lines(v, family == kMiddle ? rows_middle : rows, row, family == kLast ? j - 1 : j, levels);
    v.row_off = static_cast<unsigned>(row);
    v.col_off = static_cast<unsigned>(family == kLast ? i + 1 : i + 2);
    v.add = beta_prefix(family == kLast ? j : j + 1);
    v.add_copy = family == kLast ? copy(j) : 0;
    return v;
  }

  // The bound of candidates t0..t1-1 of a family (before the margin) from the minima of level
  // L (t1 - t0 at most its width): the maximum of the two sides' minima over the aligned
  // blocks that cover the candidates' ranks.
  template <int L>
  static Time bound(const FamilyView& v, Rank t0, Rank t1) {
    constexpr auto kW = static_cast<unsigned>(width(L));
    const auto lo = static_cast<unsigned>(t0);
    const auto hi = static_cast<unsigned>(t1 - 1);
    const Time* r = v.row[L];
    const Time* c = v.col[L];
    return std::max(
        std::min(r[(lo + v.row_off) / kW], r[(hi + v.row_off) / kW]) + v.add + v.add_copy,
        std::min(c[(lo + v.col_off) / kW], c[(hi + v.col_off) / kW]));
  }

  // Whether a block starting at tie position `first` with bound `bnd` may hold the first
  // candidate in tie order that attains the minimum: one below s.best, or one equal to it
  // and earlier. The bound is lowered by the margin of init_pruning where it applies.
  bool may_hold(const Search& s, Time bnd, std::int64_t first) const {
    const Time low = margin_ulps == 0
                         ? bnd
                         : bnd - margin_ulps * (std::abs(bnd) + std::abs(s.best) + 2 * magnitude);
    return low < s.best || (low == s.best && first < s.at);
  }

  // The block of level L at candidates t0.. of a family: skipped if its bound rules it out,
  // else evaluated (level 0) or searched block by block one level down.
  template <int L>
  void descend(const FamilyView& v, Rank t0, Search& s) {
    const Rank t1 = std::min(s.n, t0 + width(L));
    if (!may_hold(s, bound<L>(v, t0, t1), v.tie0 + t0)) return;
    if constexpr (L == 0) {
      evaluate_block(v.family, t0, t1, s);
    } else {
      for (Rank u = t0; u < t1; u += width(L - 1)) descend<L - 1>(v, u, s);
    }
  }

  // The choice at tie position `at` of [i..j].
  static Choice choice_at(Rank i, Rank j, std::int64_t at) {
    const std::int64_t n = j - i - 1;
    if (at == 0) return {i, -1};
    if (at <= n) return {i, static_cast<Rank>(i + at)};           // first: k = i + 1 + t
    if (at <= 2 * n) return {static_cast<Rank>(i + at - n), -1};  // middle: q = i + 1 + t
    if (at == 2 * n + 1) return {j, -1};                          // one child, root j
    return {j, static_cast<Rank>(i + at - 2 * n - 2)};            // last: k = i + t
  }

  // The family and index of tie position `at` of a range of n + 2 ranks (a one-child root:
  // none).
  static std::optional<std::pair<Family, Rank>> family_at(Rank n, std::int64_t at) {
    if (at == 0 || at == 2 * std::int64_t{n} + 1) return std::nullopt;
    if (at <= n) return std::pair{kFirst, static_cast<Rank>(at - 1)};
    if (at <= 2 * std::int64_t{n}) return std::pair{kMiddle, static_cast<Rank>(at - 1 - n)};
    return std::pair{kLast, static_cast<Rank>(at - 2 - 2 * std::int64_t{n})};
  }

  // Per row, the previous range's answer (family, index): a first guess for the next range.
  std::vector<std::optional<std::pair<Family, Rank>>> hints;

  // best_root_plain's answer, skipping the blocks that cannot hold the first candidate in tie
  // order attaining the minimum: those whose bound is above the least value found so far, or
  // not below it while an earlier candidate attains it (docs/design.md, "How the binary DP is
  // fast"). First the fine block of the previous range's answer (a guess, for a low value
  // early), then the top blocks, the one with the lowest bound first.
  std::pair<Time, Choice> best_root(Rank i, Rank j, std::vector<Time>& buf,
                                    std::vector<Time>& bounds) {
    const Rank n = j - i - 1;
    candidates += 3 * static_cast<std::int64_t>(n);
    if (n < 2 * kFine || !prune) {
      evaluated += 3 * static_cast<std::int64_t>(n);
      hints[static_cast<std::size_t>(i)].reset();
      return best_root_plain(i, j, buf);
    }
    const Time one_first = std::max(copy(i), at(i + 1, j)) + message(i + 1, j);
    const Time one_last = at(i, j - 1) + message(i, j - 1) + copy(j);
    Search s{i, j, n, one_first, 0};
    if (one_last < one_first) s.best = one_last, s.at = 2 * std::int64_t{n} + 1;
    auto& hint = hints[static_cast<std::size_t>(i)];
    if (hint) {
      const Rank t0 = std::min(hint->second, n - 1) / kFine * kFine;
      evaluate_block(hint->first, t0, std::min(n, t0 + kFine), s);
    }
    constexpr Rank kTopWidth = width(kTop);
    const std::array<FamilyView, 3> views{
        family_view(kFirst, i, j, n), family_view(kMiddle, i, j, n), family_view(kLast, i, j, n)};
    const Rank per_family = (n + kTopWidth - 1) / kTopWidth;
    bounds.resize(3 * static_cast<std::size_t>(per_family));
    std::size_t lowest = 0;
    for (std::size_t blk = 0; blk < bounds.size(); ++blk) {
      const auto& v = views[blk / static_cast<std::size_t>(per_family)];
      const Rank t0 = static_cast<Rank>(blk % static_cast<std::size_t>(per_family)) * kTopWidth;
      bounds[blk] = bound<kTop>(v, t0, std::min(n, t0 + kTopWidth));
      if (bounds[blk] < bounds[lowest]) lowest = blk;
    }
    auto visit = [&](std::size_t blk) {
      const auto& v = views[blk / static_cast<std::size_t>(per_family)];
      descend<kTop>(v, static_cast<Rank>(blk % static_cast<std::size_t>(per_family)) * kTopWidth,
                    s);
    };
    visit(lowest);
    for (std::size_t blk = 0; blk < bounds.size(); ++blk) {
      if (blk != lowest) visit(blk);
    }
    hint = family_at(n, s.at);
    return {s.best, choice_at(i, j, s.at)};
  }

  Rank rebuild(OrderedTree& tree, Rank i, Rank j, const Choice& ch) const {
    const Rank q = ch.root;
    auto& kids = tree.shape.children[static_cast<std::size_t>(q)];
    auto sub = [&](Rank a, Rank z) {
      if (a > z) return;
      kids.push_back(rebuild(
          tree, a, z, choice[static_cast<std::size_t>(a) * p + static_cast<std::size_t>(z)]));
    };
    if (i == j) return q;
    if (q > i && q < j) {
      sub(i, q - 1), sub(q + 1, j);
      tree.copy_slot[static_cast<std::size_t>(q)] = 1;
    } else if (q == i) {
      if (ch.split < 0)
        sub(i + 1, j);
      else
        sub(i + 1, ch.split), sub(ch.split + 1, j);
      tree.copy_slot[static_cast<std::size_t>(q)] = 0;
    } else {
      if (ch.split < 0)
        sub(i, j - 1);
      else
        sub(i, ch.split), sub(ch.split + 1, j - 1);
      tree.copy_slot[static_cast<std::size_t>(q)] = static_cast<int>(kids.size());
    }
    return q;
  }
};

}  // namespace

namespace {

// The tables of every range: [i..j] needs rows > i and shorter ranges of row i. In tiles of
// kTileRows rows by kTileCols columns: row tiles from the bottom, within one the column tiles
// from the left, within a tile rows from the bottom and columns from the left (a column's
// data stays in cache while the rows of a tile use it). `pruned`: best_root (exact block
// pruning); else best_root_plain.
constexpr Rank kTileRows = 16;
constexpr Rank kTileCols = 64;

BinaryDp fill_binary(const GatherProblem& pb, bool pruned = true) {
  const Rank n = pb.nranks();
  OPTCOLL_CHECK(n >= 1, "empty gather problem");
  BinaryDp dp;
  dp.init(pb);
  dp.init_pruning();
  std::vector<Time> buf;
  std::vector<Time> bounds;
  for (Rank bottom = n - 2; bottom >= 0; bottom -= kTileRows) {
    const Rank top = std::max(Rank{0}, bottom - kTileRows + 1);
    for (Rank j0 = top + 1; j0 < n; j0 += kTileCols) {
      const Rank j1 = std::min(n, j0 + kTileCols);
      for (Rank i = bottom; i >= top; --i) {
        for (Rank j = std::max(i + 1, j0); j < j1; ++j) {
          const auto best =
              pruned ? dp.best_root(i, j, buf, bounds) : dp.best_root_plain(i, j, buf);
          dp.b[dp.idx(i, j)] = dp.bt[dp.idx(j, i)] = best.first;
          dp.choice[dp.idx(i, j)] = best.second;
          dp.take_in(i, j);
        }
      }
    }
  }
  return dp;
}

OrderedTree extract(const BinaryDp& dp, const GatherProblem& pb, std::optional<Rank> root) {
  const Rank n = pb.nranks();
  OrderedTree tree;
  tree.shape.children.resize(dp.p);
  tree.copy_slot.assign(dp.p, 0);
  const auto top = root && n > 1 ? dp.rooted(0, n - 1, *root)
                                 : std::pair<Time, Choice>{dp.at(0, n - 1), dp.choice[dp.p - 1]};
  tree.shape.root = dp.rebuild(tree, 0, n - 1, top.second);
  tree.cost = n == 1 ? pb.copy * pb.sizes[0] : top.first;
  return tree;
}

}  // namespace

OrderedTree binary_optimal_tree(const GatherProblem& pb, std::optional<Rank> root) {
  OPTCOLL_CHECK(!root || (*root >= 0 && *root < pb.nranks()), "root out of range");
  return extract(fill_binary(pb), pb, root);
}

OrderedTree binary_optimal_tree_plain(const GatherProblem& pb, std::optional<Rank> root) {
  OPTCOLL_CHECK(!root || (*root >= 0 && *root < pb.nranks()), "root out of range");
  return extract(fill_binary(pb, /*pruned=*/false), pb, root);
}

TreeDpStats binary_tree_dp_stats(const GatherProblem& pb) {
  const BinaryDp dp = fill_binary(pb);
  return {dp.candidates, dp.evaluated};
}

std::pair<OrderedTree, OrderedTree> binary_trees_best_and_fixed(const GatherProblem& pb,
                                                                Rank root) {
  OPTCOLL_CHECK(root >= 0 && root < pb.nranks(), "root {} out of range", root);
  const BinaryDp dp = fill_binary(pb);
  return {extract(dp, pb, std::nullopt), extract(dp, pb, root)};
}

}  // namespace optcoll::algorithms::planners
