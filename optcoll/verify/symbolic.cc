// SPDX-License-Identifier: Apache-2.0
// File: symbolic execution of a schedule over buffer cells, and the postcondition check.
#include "optcoll/verify/symbolic.h"

#include <algorithm>

#include <fmt/format.h>

#include "optcoll/model/error.h"
#include "optcoll/verify/cell_store.h"
#include "optcoll/verify/happens_before.h"
#include "optcoll/verify/rank_sets.h"

namespace optcoll::verify_detail {
namespace {

constexpr int kMaxMismatchesPerRank = 3;

enum class Problem { kUndefined, kIndex, kTwice, kOrder };

struct Operand {
  Count index = 0;
  SetId set = kUndefined;
};

// Where a combination happens, for its diagnostic: the op, its destination cells and the
// position inside the destination slice.
struct Site {
  GlobalOp op = 0;
  CellRange dst;
  Count position = 0;
  bool reported = false;  // one diagnostic per op
};

class Executor {
 public:
  Executor(const Schedule& schedule, const FlatSchedule& flat, const Layout& layout,
           DiagnosticList& out)
      : schedule_(schedule),
        flat_(flat),
        layout_(layout),
        out_(out),
        reduction_(is_reduction(layout.kind())),
        commutative_(layout.spec().commutative),
        fold_(reduction_ && layout.spec().reproducible ? kFoldBit : 0),
        sets_(layout.nranks()),
        store_(flat) {}

  void load_inputs() {
    for (Rank r = 0; r < flat_.nranks; ++r) {
      for (const Buf buf : {Buf::kInput, Buf::kOutput}) {
        if (layout_.buffer_count(r, buf) == 0) continue;
        for (const ValueRun& run : initial_contents(layout_, r, buf)) load_run(r, buf, run);
      }
    }
  }

  void run(std::span<const GlobalOp> starts) {
    for (const GlobalOp entry : starts) {
      const GlobalOp g = entry & ~kCompletesPair;
      switch (flat_.ops[g].kind) {
        case OpKind::kCopy:
          incoming_.clear();
          store_.read(flat_.ops[g].src, incoming_);
          store_.write(flat_.ops[g].dst, incoming_);
          break;
        case OpKind::kReduce:
          incoming_.clear();
          store_.read(flat_.ops[g].src, incoming_);
          combine_into(g);
          break;
        default:
          if ((entry & kCompletesPair) != 0) transfer(g);
          break;
      }
    }
  }

  void check_outputs() {
    for (Rank r = 0; r < flat_.nranks; ++r) {
      if (layout_.output_count(r) == 0) continue;
      const CellId begin = flat_.cells_begin(r, Buf::kOutput);
      const CellId end = flat_.cells_end(r, Buf::kOutput);
      incoming_.clear();
      store_.read({begin, end - begin - 1}, incoming_);
      check_rank_output(r, expected_output(layout_, r));
    }
  }

 private:
  void load_run(Rank r, Buf buf, const ValueRun& run) {
    const CellId end = flat_.cells_end(r, buf) - 1;
    CellId c = flat_.cell_at(r, buf, run.offset);
    OPTCOLL_CHECK(flat_.bound[c] == run.offset, "verify: initial run at {} splits a cell",
                  run.offset);
    for (; c < end && flat_.bound[c] < run.offset + run.count; ++c) {
      store_.set(c, run.index_base + (flat_.bound[c] - run.offset),
                 RankSets::range(run.first, run.last) | (run.first == run.last ? fold_ : 0));
    }
    OPTCOLL_CHECK(flat_.bound[c] == run.offset + run.count,
                  "verify: initial run ending at {} splits a cell", run.offset + run.count);
  }

  // Both halves of the message that `g` completes are posted: the data moves now.
  void transfer(GlobalOp g) {
    const GlobalOp q = flat_.partner[g];
    const GlobalOp send = is_send(flat_.ops[g].kind) ? g : q;
    const GlobalOp recv = send == g ? q : g;
    incoming_.clear();
    // A SendSlices' message is its slices' contents one after another.
    for (const CellRange src : flat_.src_ranges(send)) store_.read(src, incoming_);
    switch (flat_.ops[recv].kind) {
      case OpKind::kRecv:
        store_.write(flat_.ops[recv].dst, incoming_);
        break;
      case OpKind::kRecvSlices:
        scatter_incoming(recv);
        break;
      default:
        combine_into(recv);
        break;
    }
  }

  // A RecvSlices: the message's first elements into its first slice, the next into the
  // second, and so on.
  void scatter_incoming(GlobalOp g) {
    std::size_t next = 0;  // piece of incoming_ being consumed
    Count used = 0;        // elements of incoming_[next] already placed
    for (const CellRange dst : flat_.dst_ranges(g)) {
      if (dst.n == 0) continue;
      Count need = flat_.bound[dst.first + dst.n] - flat_.bound[dst.first];
      result_.clear();
      while (need > 0) {
        OPTCOLL_CHECK(next < incoming_.size(), "verify: a message shorter than its receive");
        const Piece& piece = incoming_[next];
        const Count take = std::min(need, piece.length - used);
        append_piece(result_, {take, piece.index_at(used), piece.set});
        used += take;
        need -= take;
        if (used == piece.length) {
          ++next;
          used = 0;
        }
      }
      store_.write(dst, result_);
    }
  }

  // dst = op(incoming, dst) or op(dst, incoming), element by element, with incoming_ holding
  // the incoming (or src) runs.
  void combine_into(GlobalOp g) {
    Site site{g, flat_.ops[g].dst, 0, false};
    const Side side = flat_.ops[g].side;
    current_.clear();
    store_.read(site.dst, current_);
    result_.clear();
    std::size_t i = 0;
    std::size_t j = 0;
    Count used_i = 0;
    Count used_j = 0;
    while (i < incoming_.size() && j < current_.size()) {
      const Piece& a = incoming_[i];
      const Piece& b = current_[j];
      const Count len = std::min(a.length - used_i, b.length - used_j);
      const Operand in{a.index_at(used_i), a.set};
      const SetId set = combine(site, in, {b.index_at(used_j), b.set}, side);
      append_piece(result_, {len, is_set(set) ? in.index : 0, set});
      site.position += len;
      used_i += len;
      used_j += len;
      if (used_i == a.length) {
        ++i;
        used_i = 0;
      }
      if (used_j == b.length) {
        ++j;
        used_j = 0;
      }
    }
    store_.write(site.dst, result_);
  }

  SetId combine(Site& site, const Operand& in, const Operand& cur, Side side) {
    const SetId set = combine_sets(site, in, cur, side);
    if (fold_ == 0 || !is_set(set)) return set;
    // Still a left fold: a left fold on the left, the next single rank on the right.
    const SetId left = side == Side::kLeft ? in.set : cur.set;
    const SetId right = side == Side::kLeft ? cur.set : in.set;
    if ((left & kFoldBit) == 0 || !RankSets::is_range(right)) return set;
    const RankRange l = RankSets::range_of(left);
    const RankRange r = RankSets::range_of(right);
    return r.first == r.last && l.last + 1 == r.first ? set | kFoldBit : set;
  }

  SetId combine_sets(Site& site, const Operand& in, const Operand& cur, Side side) {
    if (in.set == kInvalid || cur.set == kInvalid) return kInvalid;  // already reported
    const Operand& left = side == Side::kLeft ? in : cur;
    const Operand& right = side == Side::kLeft ? cur : in;
    RankRange shared;
    if (in.set == kUndefined || cur.set == kUndefined) {
      if (reduction_) report(site, Problem::kUndefined, in, left, right, shared);
      return kUndefined;
    }
    if (in.index != cur.index) {
      report(site, Problem::kIndex, in, left, right, shared);
      return kInvalid;
    }
    if (commutative_) {
      const SetId set = sets_.unite(left.set, right.set, shared);
      if (set == kInvalid) report(site, Problem::kTwice, in, left, right, shared);
      return set;
    }
    if (!RankSets::is_range(left.set) || !RankSets::is_range(right.set)) {
      report(site, Problem::kOrder, in, left, right, shared);  // only commutative ops make these
      return kInvalid;
    }
    const RankRange l = RankSets::range_of(left.set);
    const RankRange r = RankSets::range_of(right.set);
    shared = {std::max(l.first, r.first), std::min(l.last, r.last)};
    if (shared.first <= shared.last) {
      report(site, Problem::kTwice, in, left, right, shared);
      return kInvalid;
    }
    if (l.last + 1 != r.first) {
      report(site, Problem::kOrder, in, left, right, shared);
      return kInvalid;
    }
    return RankSets::range(l.first, r.last);
  }

  std::string reason(Problem problem, const Operand& in, const Operand& left, const Operand& right,
                     RankRange shared) const {
    switch (problem) {
      case Problem::kUndefined:
        return in.set == kUndefined ? "the incoming operand was never written"
                                    : "the destination operand was never written";
      case Problem::kIndex:
        return fmt::format("element indices differ ({} vs {})", left.index, right.index);
      case Problem::kTwice:
        if (shared.first == shared.last) return fmt::format("rank {} counted twice", shared.first);
        return fmt::format("ranks {}..{} counted twice", shared.first, shared.last);
      case Problem::kOrder:
        return "operands out of rank order for a non-commutative operator (the left "
               "operand's ranks must end just before the right operand's begin)";
    }
    return "";
  }

  void report(Site& site, Problem problem, const Operand& in, const Operand& left,
              const Operand& right, RankRange shared) {
    if (site.reported) return;
    site.reported = true;
    if (!out_.wants_more()) return;
    const Rank r = flat_.rank_of(site.op);
    const OpId local = flat_.local_of(site.op);
    const Buf buf = buf_of_cell(flat_, r, site.dst.first);
    const std::string l = sets_.format_value(left.index, left.set);
    const std::string rv = sets_.format_value(right.index, right.set);
    const Operand& cur = &left == &in ? right : left;
    Diagnostic d;
    d.check = VerifyCheck::kSemantics;
    d.rank = r;
    d.op = local;
    d.element = flat_.bound[site.dst.first] + site.position;
    d.actual = fmt::format("op({}, {})", l, rv);
    d.expected = problem == Problem::kTwice   ? "disjoint rank sets"
                 : problem == Problem::kOrder ? "left ranks just before right ranks"
                 : problem == Problem::kIndex ? "equal element indices"
                                              : "two defined operands";
    d.message = fmt::format(
        "{}: combines {} {} with {} at {}[{}]{}: {}", describe_op(schedule_, r, local),
        flat_.ops[site.op].kind == OpKind::kReduce ? "src" : "incoming",
        sets_.format_value(in.index, in.set), sets_.format_value(cur.index, cur.set), buf_name(buf),
        d.element, problem == Problem::kOrder ? fmt::format(" as {}", d.actual) : std::string(),
        reason(problem, in, left, right, shared));
    out_.add(std::move(d));
  }

  // Compares incoming_ (the rank's output runs) with the postcondition.
  void check_rank_output(Rank r, const std::vector<ValueRun>& expected) {
    std::vector<Diagnostic> found;
    Count wrong = 0;
    std::size_t j = 0;
    Count piece_start = 0;
    for (const ValueRun& run : expected) {
      Count x = run.offset;
      const Count end = run.offset + run.count;
      while (j < incoming_.size() && piece_start + incoming_[j].length <= x) {
        piece_start += incoming_[j++].length;
      }
      while (x < end && j < incoming_.size()) {
        const Piece& a = incoming_[j];
        const Count stop = std::min(end, piece_start + a.length);
        const Count want = run.index_base + (x - run.offset);
        const SetId want_set = RankSets::range(run.first, run.last) | fold_;
        if (a.set != want_set || a.index_at(x - piece_start) != want) {
          wrong += stop - x;
          if (found.size() < kMaxMismatchesPerRank) {
            found.push_back(mismatch(r, x, sets_.format_value(want, want_set),
                                     sets_.format_value(a.index_at(x - piece_start), a.set)));
          }
        }
        x = stop;
        if (x == piece_start + a.length) piece_start += incoming_[j++].length;
      }
    }
    if (found.empty()) return;
    found.front().message +=
        fmt::format(" ({} of {} output elements are wrong)", wrong, layout_.output_count(r));
    for (auto& d : found) out_.add(std::move(d));
  }

  Diagnostic mismatch(Rank r, Count element, std::string expected, std::string actual) const {
    Diagnostic d;
    d.check = VerifyCheck::kSemantics;
    d.rank = r;
    d.element = element;
    d.message = fmt::format("rank {}: out[{}] holds {} but the postcondition requires {}", r,
                            element, actual, expected);
    d.expected = std::move(expected);
    d.actual = std::move(actual);
    return d;
  }

  const Schedule& schedule_;
  const FlatSchedule& flat_;
  const Layout& layout_;
  DiagnosticList& out_;
  bool reduction_;
  bool commutative_;
  SetId fold_;  // kFoldBit for reproducible reductions (values track the left fold), else 0
  RankSets sets_;
  CellStore store_;
  std::vector<Piece> incoming_;  // runs read from a source (or an output buffer)
  std::vector<Piece> current_;   // runs of a reduction's destination
  std::vector<Piece> result_;
};

}  // namespace

void check_semantics(const Schedule& schedule, const FlatSchedule& flat, const Layout& layout,
                     std::span<const GlobalOp> starts, bool check_outputs, DiagnosticList& out) {
  Executor executor(schedule, flat, layout, out);
  executor.load_inputs();
  executor.run(starts);
  if (check_outputs) executor.check_outputs();
}

}  // namespace optcoll::verify_detail
