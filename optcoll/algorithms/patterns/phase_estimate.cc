// SPDX-License-Identifier: Apache-2.0
// File: group phase times without schedules (phase_estimate.h).
#include "optcoll/algorithms/patterns/phase_estimate.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "optcoll/algorithms/bounds.h"
#include "optcoll/algorithms/patterns/butterfly.h"
#include "optcoll/algorithms/patterns/group_phases.h"
#include "optcoll/algorithms/patterns/partition.h"

namespace optcoll::algorithms::patterns {
namespace {

std::size_t at(Rank r) { return static_cast<std::size_t>(r); }

// Elements of parts lo..hi - 1.
Count span_of(const std::vector<Count>& prefix, Rank lo, Rank hi) {
  return prefix[at(hi)] - prefix[at(lo)];
}

}  // namespace

std::vector<Count> prefix_of(const std::vector<Count>& parts) {
  std::vector<Count> prefix(parts.size() + 1, 0);
  for (std::size_t i = 0; i < parts.size(); ++i) prefix[i + 1] = prefix[i] + parts[i];
  return prefix;
}

std::vector<Count> even_sizes(Count n, Rank q) {
  std::vector<Count> sizes(at(q));
  for (Rank i = 0; i < q; ++i) sizes[at(i)] = even_piece(n, q, i).count;
  return sizes;
}

Time mst_scatter_time(const std::vector<Count>& parts, Rank root, const LinkCosts& costs) {
  const auto q = static_cast<Rank>(parts.size());
  const auto prefix = prefix_of(parts);
  std::vector<Time> holds(at(q), 0);      // when the rank holds its range
  std::vector<Time> send_free(at(q), 0);  // when its send port is free
  Time last = 0;
  for (const MstEdge& e : mst(q, root)) {
    const Time start = std::max(holds[at(e.from)], send_free[at(e.from)]);
    const Time end = start + costs.message(span_of(prefix, e.lo, e.hi));
    send_free[at(e.from)] = end;
    holds[at(e.to)] = end;
    last = std::max(last, end);
  }
  return last;
}

Time mst_gather_time(const std::vector<Count>& parts, Rank root, const LinkCosts& costs) {
  const auto q = static_cast<Rank>(parts.size());
  const auto prefix = prefix_of(parts);
  std::vector<Time> gathered(at(q), 0);   // when the rank holds its subtree's parts
  std::vector<Time> recv_free(at(q), 0);  // when its receive port is free
  const auto edges = mst(q, root);
  for (auto e = edges.rbegin(); e != edges.rend(); ++e) {
    const Time start = std::max(gathered[at(e->to)], recv_free[at(e->from)]);
    const Time end = start + costs.message(span_of(prefix, e->lo, e->hi));
    recv_free[at(e->from)] = end;
    gathered[at(e->from)] = std::max(gathered[at(e->from)], end);
  }
  return gathered[at(root)];
}

Time ring_allgather_time(Rank q, Count largest_part, const LinkCosts& costs) {
  return static_cast<Time>(std::max<Rank>(0, q - 1)) * costs.message(largest_part);
}

Time ring_reduce_scatter_time(Rank q, Count largest_part, const LinkCosts& costs) {
  return static_cast<Time>(std::max<Rank>(0, q - 1)) * costs.message_reduce(largest_part);
}

Time doubling_allgather_time(const std::vector<Count>& parts, const LinkCosts& costs) {
  const Fold fold(static_cast<Rank>(parts.size()));
  const auto prefix = prefix_of(parts);
  Time t = 0;
  Time step = 0;
  for (Rank i = 0; i < fold.rem; ++i) step = std::max(step, costs.message(parts[at(2 * i)]));
  t += step;
  for (Rank dist = 1; dist < fold.pow2; dist *= 2) {
    step = 0;
    for (Rank lo = 0; lo < fold.pow2; lo += dist) {
      step = std::max(step,
                      costs.message(span_of(prefix, fold.first(lo), fold.last(lo + dist - 1) + 1)));
    }
    t += step;
  }
  if (fold.rem > 0) t += costs.message(prefix.back());
  return t;
}

ButterflyCosts::ButterflyCosts(const LinkCosts& costs) : intra_(costs), inter_(costs) {}

ButterflyCosts::ButterflyCosts(const TwoLevelCosts& levels)
    : intra_(levels.intra), inter_(levels.inter), levels_(levels) {}

std::vector<Time> ButterflyCosts::times(const std::vector<Send>& sends) const {
  std::vector<Time> times(sends.size());
  if (!levels_) {
    for (std::size_t i = 0; i < sends.size(); ++i) times[i] = intra_.message(sends[i].m);
    return times;
  }
  const Placement& placement = *levels_->placement;
  std::vector<std::int32_t> leaving(at(placement.nodes()), 0);
  for (const Send& s : sends) {
    if (s.m > 0 && !placement.same_node(s.from, s.to)) {
      ++leaving[at(placement.node_of[at(s.from)])];
    }
  }
  for (std::size_t i = 0; i < sends.size(); ++i) {
    const Send& s = sends[i];
    if (placement.same_node(s.from, s.to)) {
      times[i] = intra_.message(s.m);
      continue;
    }
    const std::int32_t turns =
        (leaving[at(placement.node_of[at(s.from)])] + levels_->nic_ports - 1) / levels_->nic_ports;
    times[i] = static_cast<Time>(turns) * inter_.message(s.m);
  }
  return times;
}

Time ButterflyCosts::slowest(const std::vector<Send>& sends) const {
  const auto all = times(sends);
  return all.empty() ? 0 : *std::max_element(all.begin(), all.end());
}

namespace {

// The fold's messages (index 2i hands its m elements to 2i+1, i < rem), or the unfold's
// (2i+1 to 2i).
std::vector<ButterflyCosts::Send> fold_sends(const Fold& fold, Count m, bool unfold) {
  std::vector<ButterflyCosts::Send> sends;
  for (Rank i = 0; i < fold.rem; ++i) {
    sends.push_back(unfold ? ButterflyCosts::Send{2 * i + 1, 2 * i, m}
                           : ButterflyCosts::Send{2 * i, 2 * i + 1, m});
  }
  return sends;
}

}  // namespace

std::optional<ButterflyCosts> butterfly_costs(const CollectiveSpec& spec, const CostModel& model) {
  if (const auto c = closed_form_costs(spec, model)) return ButterflyCosts(*c);
  if (const auto levels = two_level_costs(spec, model)) return ButterflyCosts(*levels);
  return std::nullopt;
}

std::vector<Time> halving_reduce_scatter_clock(Rank q, const std::vector<Count>& slots, Count n,
                                               const ButterflyCosts& costs, Time start) {
  const Fold fold(q);
  const auto prefix = prefix_of(slots);
  auto span = [&](Rank v, int k) {
    const Piece range = halving_range(v, k, fold.pow2);
    return span_of(prefix, static_cast<Rank>(range.offset),
                   static_cast<Rank>(range.offset + range.count));
  };
  std::vector<Time> clock(at(fold.pow2), start);
  const Time fold_step = costs.slowest(fold_sends(fold, n, false)) + costs.intra().reduce(n);
  for (Rank v = 0; v < fold.rem; ++v) clock[at(v)] += fold_step;
  std::vector<Time> next(clock.size());
  std::vector<ButterflyCosts::Send> sends(at(fold.pow2));
  for (int k = 0; k < fold.bits; ++k) {
    for (Rank v = 0; v < fold.pow2; ++v) {  // v sends what its partner keeps
      const Rank partner = v ^ (Rank{1} << k);
      sends[at(v)] = {fold.player(v), fold.player(partner), span(partner, k)};
    }
    const auto took = costs.times(sends);
    for (Rank v = 0; v < fold.pow2; ++v) {
      const Rank partner = v ^ (Rank{1} << k);
      const Time both = std::max(clock[at(v)], clock[at(partner)]);
      next[at(v)] = both + std::max(took[at(v)], took[at(partner)]) +
                    costs.intra().reduce(sends[at(partner)].m);
    }
    clock.swap(next);
  }
  return clock;
}

Time halving_allgather_finish(Rank q, std::vector<Time> clock, const std::vector<Count>& slots,
                              const ButterflyCosts& costs) {
  const Fold fold(q);
  const auto prefix = prefix_of(slots);
  std::vector<Time> next(clock.size());
  std::vector<ButterflyCosts::Send> sends(at(fold.pow2));
  for (int k = fold.bits - 1; k >= 0; --k) {
    for (Rank v = 0; v < fold.pow2; ++v) {  // v sends the range it holds
      const Piece mine = halving_range(v, k, fold.pow2);
      sends[at(v)] = {fold.player(v), fold.player(v ^ (Rank{1} << k)),
                      span_of(prefix, static_cast<Rank>(mine.offset),
                              static_cast<Rank>(mine.offset + mine.count))};
    }
    const auto took = costs.times(sends);
    for (Rank v = 0; v < fold.pow2; ++v) {
      const Rank partner = v ^ (Rank{1} << k);
      next[at(v)] =
          std::max(clock[at(v)], clock[at(partner)]) + std::max(took[at(v)], took[at(partner)]);
    }
    clock.swap(next);
  }
  return clock.empty() ? 0 : *std::max_element(clock.begin(), clock.end());
}

Time halving_gather_finish(Rank q, std::vector<Time> clock, const std::vector<Count>& slots,
                           Rank target, const ButterflyCosts& costs) {
  const Fold fold(q);
  const auto prefix = prefix_of(slots);
  std::vector<Rank> senders;
  std::vector<ButterflyCosts::Send> sends;  // only the ranks that send in the step
  for (int k = fold.bits - 1; k >= 0; --k) {
    const Rank bit = Rank{1} << k;
    const Rank above = ~((bit << 1) - 1);
    senders.clear();
    sends.clear();
    for (Rank v = 0; v < fold.pow2; ++v) {
      if (((v ^ target) & above) != 0 || ((v ^ target) & bit) == 0) continue;
      const Piece range = halving_range(v, k, fold.pow2);
      senders.push_back(v);
      sends.push_back({fold.player(v), fold.player(v ^ bit),
                       span_of(prefix, static_cast<Rank>(range.offset),
                               static_cast<Rank>(range.offset + range.count))});
    }
    const auto took = costs.times(sends);
    for (std::size_t i = 0; i < senders.size(); ++i) {
      const Rank to = senders[i] ^ bit;
      clock[at(to)] = std::max(clock[at(to)], clock[at(senders[i])]) + took[i];
    }
  }
  return clock[at(target)];
}

Time doubling_exchange_finish(Rank q, Count m, const ButterflyCosts& costs, bool combine) {
  const Fold fold(q);
  const Time reduce = combine ? costs.intra().reduce(m) : 0;
  std::vector<Time> clock(at(fold.pow2), 0);
  const Time fold_step = costs.slowest(fold_sends(fold, m, false)) + reduce;
  for (Rank v = 0; v < fold.rem; ++v) clock[at(v)] = fold_step;
  std::vector<Time> next(clock.size());
  std::vector<ButterflyCosts::Send> sends(at(fold.pow2));
  for (int k = 0; k < fold.bits; ++k) {
    const Rank bit = Rank{1} << k;
    for (Rank v = 0; v < fold.pow2; ++v) sends[at(v)] = {fold.player(v), fold.player(v ^ bit), m};
    const auto took = costs.times(sends);
    for (Rank v = 0; v < fold.pow2; ++v) {
      const Rank partner = v ^ bit;
      next[at(v)] = std::max(clock[at(v)], clock[at(partner)]) +
                    std::max(took[at(v)], took[at(partner)]) + reduce;
    }
    clock.swap(next);
  }
  const Time last = clock.empty() ? 0 : *std::max_element(clock.begin(), clock.end());
  return last + costs.slowest(fold_sends(fold, m, true));
}

Time fold_message(const ButterflyCosts& costs, Rank q, Count m) {
  return costs.slowest(fold_sends(Fold(q), m, false));
}

Time unfold_message(const ButterflyCosts& costs, Rank q, Count m) {
  return costs.slowest(fold_sends(Fold(q), m, true));
}

double halving_elements(Rank q, Count n) {
  const Fold fold(q);
  return static_cast<double>(fold.pow2 - 1) * static_cast<double>(n);
}

Estimate ring_allreduce_estimate(const CollectiveSpec& spec, const LinkCosts& costs,
                                 std::int64_t pieces, std::string params) {
  const Rank p = spec.nranks;
  const Count n = spec.count;
  const Count piece = (n + p - 1) / p;
  const Time alpha = static_cast<Time>(pieces) * costs.alpha;
  const Time step = piece == 0 ? 0 : alpha + costs.beta * piece;
  const Time time = costs.copy_of(n) + static_cast<Time>(p - 1) * (2 * step + costs.reduce(piece));
  return make_estimate(spec, time, 2.0 * (p - 1) * static_cast<double>(n),
                       6.0 * p * p * static_cast<double>(pieces), pieces == 1 && n % p == 0,
                       std::move(params));
}

std::optional<Time> bucket_ring_allreduce_bound(const CollectiveSpec& spec,
                                                const CostModel& model) {
  if (model.topology) return std::nullopt;
  return chain_bound(spec, model, 2 * (spec.nranks - 1), std::min<Count>(spec.count, 1));
}

std::optional<Estimate> bucket_ring_allreduce_estimate(const CollectiveSpec& spec,
                                                       const Params& params,
                                                       const CostModel& model) {
  const auto c = closed_form_costs(spec, model);
  if (!c) return std::nullopt;
  const std::int64_t pieces = params.get_int("pieces");
  if (pieces < 1) return std::nullopt;
  const std::string_view directions = params.get("directions");
  if (directions != "auto" && directions != "1") return std::nullopt;
  return ring_allreduce_estimate(spec, *c, pieces,
                                 fmt::format("directions=1,pieces={},sync=0", pieces));
}

}  // namespace optcoll::algorithms::patterns
