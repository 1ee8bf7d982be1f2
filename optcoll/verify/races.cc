// SPDX-License-Identifier: Apache-2.0
// File: per-rank race detection over buffer cells.
#include "optcoll/verify/races.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace optcoll::verify_detail {
namespace {

constexpr GlobalOp kNone = std::numeric_limits<GlobalOp>::max();
constexpr std::uint32_t kNil = std::numeric_limits<std::uint32_t>::max();

class RaceSweep {
 public:
  RaceSweep(const Schedule& schedule, const FlatSchedule& flat, DiagnosticList& out)
      : schedule_(schedule), flat_(flat), out_(out) {}

  void rank(Rank r) {
    rank_ = r;
    base_ = flat_.op_base[static_cast<std::size_t>(r)];
    const GlobalOp end = flat_.op_base[static_cast<std::size_t>(r) + 1];
    if (base_ == end) return;
    first_cell_ = flat_.cells_begin(r, Buf::kInput);
    const std::size_t cells = flat_.cells_begin(r + 1, Buf::kInput) - first_cell_;
    writer_.assign(cells, kNone);
    readers_.assign(cells, kNil);
    nodes_.clear();
    stamp_.assign(end - base_, 0);
    epoch_ = 0;
    for (GlobalOp g = base_; g < end; ++g) op(g);
  }

 private:
  struct ReaderNode {
    GlobalOp op;
    std::uint32_t next;
  };

  void op(GlobalOp g) {
    reported_.clear();
    // What g reads and writes: one range each for the plain kinds, a list for a SendSlices
    // (src) or RecvSlices (dst; its slices are disjoint, structure_issues checks it).
    const std::span<const CellRange> sources = flat_.src_ranges(g);
    const std::span<const CellRange> targets = flat_.dst_ranges(g);
    // Cells tile slices, so slices of one buffer overlap exactly when their cells do.
    if (sources.size() == 1 && targets.size() == 1) {
      const CellRange src = sources[0];
      const CellRange dst = targets[0];
      if (src.first < dst.first + dst.n && dst.first < src.first + src.n) {
        self_overlap(g, std::max(src.first, dst.first));
      }
    }
    for (const CellRange src : sources) {
      for (CellId c = src.first; c < src.first + src.n; ++c) {
        const GlobalOp w = writer_[c - first_cell_];
        if (w != kNone && w != g) check(w, g, c, "reads", "writing");
      }
    }
    for (const CellRange dst : targets) {
      for (CellId c = dst.first; c < dst.first + dst.n; ++c) {
        const GlobalOp w = writer_[c - first_cell_];
        if (w != kNone) check(w, g, c, "writes", "writing");
        for (std::uint32_t k = readers_[c - first_cell_]; k != kNil; k = nodes_[k].next) {
          if (nodes_[k].op != g) check(nodes_[k].op, g, c, "writes", "reading");
        }
      }
    }
    for (const CellRange src : sources) {
      for (CellId c = src.first; c < src.first + src.n; ++c) {
        nodes_.push_back({g, readers_[c - first_cell_]});
        readers_[c - first_cell_] = static_cast<std::uint32_t>(nodes_.size() - 1);
      }
    }
    for (const CellRange dst : targets) {
      for (CellId c = dst.first; c < dst.first + dst.n; ++c) {
        writer_[c - first_cell_] = g;
        readers_[c - first_cell_] = kNil;
      }
    }
  }

  // Whether `earlier` happens before `later` through `after` edges (earlier < later).
  bool ordered(GlobalOp earlier, GlobalOp later) {
    const auto row = [this](GlobalOp x) {
      return std::pair{flat_.deps.begin() + flat_.dep_start[x],
                       flat_.deps.begin() + flat_.dep_start[x + 1]};
    };
    auto [first, last] = row(later);
    if (std::binary_search(first, last, earlier)) return true;
    ++epoch_;
    stack_.assign(1, later);
    while (!stack_.empty()) {
      const GlobalOp x = stack_.back();
      stack_.pop_back();
      auto [lo, hi] = row(x);
      for (auto it = std::lower_bound(lo, hi, earlier); it != hi; ++it) {
        if (*it == earlier) return true;
        if (stamp_[*it - base_] != epoch_) {
          stamp_[*it - base_] = epoch_;
          stack_.push_back(*it);
        }
      }
    }
    return false;
  }

  void check(GlobalOp earlier, GlobalOp later, CellId cell, const char* verb, const char* other) {
    if (std::find(reported_.begin(), reported_.end(), earlier) != reported_.end()) return;
    if (ordered(earlier, later)) return;
    reported_.push_back(earlier);
    if (!out_.wants_more()) return;
    const auto& ops = schedule_.ranks[static_cast<std::size_t>(rank_)].ops;
    const auto a = static_cast<OpId>(earlier - base_);
    const auto b = static_cast<OpId>(later - base_);
    const Buf buf = buf_of_cell(flat_, rank_, cell);
    Diagnostic d;
    d.check = VerifyCheck::kRace;
    d.rank = rank_;
    d.op = b;
    d.element = flat_.bound[cell];
    d.expected = fmt::format("op {} after op {}", b, a);
    d.actual = "unordered";
    d.message = fmt::format(
        "rank {}: race on {}[{}]: op {} ({}) {} it while op {} ({}) may still be {} it; no "
        "chain of `after` dependencies orders op {} after op {}",
        rank_, buf_name(buf), d.element, b, describe(ops[static_cast<std::size_t>(b)].action), verb,
        a, describe(ops[static_cast<std::size_t>(a)].action), other, b, a);
    out_.add(std::move(d));
  }

  // A copy or reduce whose source and destination overlap reads what it writes.
  void self_overlap(GlobalOp g, CellId cell) {
    if (!out_.wants_more()) return;
    const auto b = static_cast<OpId>(g - base_);
    const auto& ops = schedule_.ranks[static_cast<std::size_t>(rank_)].ops;
    const Action& action = ops[static_cast<std::size_t>(b)].action;
    Diagnostic d;
    d.check = VerifyCheck::kRace;
    d.rank = rank_;
    d.op = b;
    d.element = flat_.bound[cell];
    d.expected = "disjoint source and destination";
    d.actual = "overlapping";
    d.message = fmt::format(
        "rank {} op {}: {} reads and writes {}[{}] at once (its source and "
        "destination overlap)",
        rank_, b, describe(action), buf_name(buf_of_cell(flat_, rank_, cell)), d.element);
    out_.add(std::move(d));
  }

  const Schedule& schedule_;
  const FlatSchedule& flat_;
  DiagnosticList& out_;
  Rank rank_ = 0;
  GlobalOp base_ = 0;
  CellId first_cell_ = 0;
  std::vector<GlobalOp> writer_;        // per cell of the rank: last writer
  std::vector<std::uint32_t> readers_;  // per cell: readers since, as a list in nodes_
  std::vector<ReaderNode> nodes_;
  std::vector<std::uint32_t> stamp_;  // per op of the rank: visited in search `epoch_`
  std::uint32_t epoch_ = 0;
  std::vector<GlobalOp> stack_;
  std::vector<GlobalOp> reported_;  // earlier ops already reported against this op
};

}  // namespace

void check_races(const Schedule& schedule, const FlatSchedule& flat, DiagnosticList& out) {
  RaceSweep sweep(schedule, flat, out);
  for (Rank r = 0; r < flat.nranks; ++r) sweep.rank(r);
}

}  // namespace optcoll::verify_detail
