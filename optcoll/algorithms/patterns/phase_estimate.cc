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

std::vector<Time> halving_reduce_scatter_clock(Rank q, const std::vector<Count>& slots, Count n,
                                               const LinkCosts& costs, Time start) {
  const Fold fold(q);
  const auto prefix = prefix_of(slots);
  auto span = [&](Rank v, int k) {
    const Piece range = halving_range(v, k, fold.pow2);
    return span_of(prefix, static_cast<Rank>(range.offset),
                   static_cast<Rank>(range.offset + range.count));
  };
  std::vector<Time> clock(at(fold.pow2), start);
  for (Rank v = 0; v < fold.rem; ++v) clock[at(v)] += costs.message_reduce(n);
  std::vector<Time> next(clock.size());
  for (int k = 0; k < fold.bits; ++k) {
    for (Rank v = 0; v < fold.pow2; ++v) {
      const Rank partner = v ^ (Rank{1} << k);
      const Count in = span(v, k);
      const Time both = std::max(clock[at(v)], clock[at(partner)]);
      next[at(v)] =
          both + std::max(costs.message(in), costs.message(span(partner, k))) + costs.reduce(in);
    }
    clock.swap(next);
  }
  return clock;
}

Time halving_allgather_finish(std::vector<Time> clock, const std::vector<Count>& slots,
                              const LinkCosts& costs) {
  const auto pow2 = static_cast<Rank>(slots.size());
  const int bits = static_cast<int>(floor_log2(pow2));
  const auto prefix = prefix_of(slots);
  std::vector<Time> next(clock.size());
  for (int k = bits - 1; k >= 0; --k) {
    for (Rank v = 0; v < pow2; ++v) {
      const Rank partner = v ^ (Rank{1} << k);
      const Piece mine = halving_range(v, k, pow2);
      const Piece theirs = halving_range(partner, k, pow2);
      const Count out = span_of(prefix, static_cast<Rank>(mine.offset),
                                static_cast<Rank>(mine.offset + mine.count));
      const Count in = span_of(prefix, static_cast<Rank>(theirs.offset),
                               static_cast<Rank>(theirs.offset + theirs.count));
      next[at(v)] = std::max(clock[at(v)], clock[at(partner)]) +
                    std::max(costs.message(out), costs.message(in));
    }
    clock.swap(next);
  }
  return clock.empty() ? 0 : *std::max_element(clock.begin(), clock.end());
}

Time halving_gather_finish(std::vector<Time> clock, const std::vector<Count>& slots, Rank target,
                           const LinkCosts& costs) {
  const auto pow2 = static_cast<Rank>(slots.size());
  const int bits = static_cast<int>(floor_log2(pow2));
  const auto prefix = prefix_of(slots);
  for (int k = bits - 1; k >= 0; --k) {
    const Rank bit = Rank{1} << k;
    const Rank above = ~((bit << 1) - 1);
    for (Rank v = 0; v < pow2; ++v) {
      if (((v ^ target) & above) != 0 || ((v ^ target) & bit) == 0) continue;
      const Piece range = halving_range(v, k, pow2);
      const Count m = span_of(prefix, static_cast<Rank>(range.offset),
                              static_cast<Rank>(range.offset + range.count));
      const Rank to = v ^ bit;
      clock[at(to)] = std::max(clock[at(to)], clock[at(v)]) + costs.message(m);
    }
  }
  return clock[at(target)];
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
