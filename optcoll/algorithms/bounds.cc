// SPDX-License-Identifier: Apache-2.0
// File: the building blocks of the registry's lower bounds (bounds.h).
#include "optcoll/algorithms/bounds.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

namespace optcoll::algorithms {

namespace {
// Under a placement a pair's costs depend only on whether its ranks share a node: one pair of
// ranks on one node and one of ranks on two nodes stand for all (either may not exist).
std::vector<std::pair<Rank, Rank>> placement_pairs(const Placement& placement) {
  std::vector<std::pair<Rank, Rank>> pairs;
  std::vector<Rank> first_on(static_cast<std::size_t>(placement.nodes()), kNoRank);
  bool same_found = false;
  bool across_found = false;
  for (Rank r = 0; r < placement.nranks() && !(same_found && across_found); ++r) {
    Rank& first =
        first_on[static_cast<std::size_t>(placement.node_of[static_cast<std::size_t>(r)])];
    if (first == kNoRank) {
      first = r;
      if (!across_found && r > 0) pairs.emplace_back(0, r);  // rank 0 is on another node
      across_found = across_found || r > 0;
    } else if (!same_found) {
      pairs.emplace_back(first, r);
      same_found = true;
    }
  }
  return pairs;
}

// The least of time(from, to) over the pairs of distinct ranks (only the pair 0, 1 for a
// homogeneous model, one pair of each kind under a placement); 0 for count 0.
template <typename PairTime>
Time least_over_pairs(const CollectiveSpec& spec, const CostModel& model, Count count,
                      PairTime time) {
  if (count <= 0 || spec.nranks < 2) return 0;
  if (model.homogeneous()) return time(0, 1);
  Time least = std::numeric_limits<Time>::infinity();
  if (model.placement) {
    for (const auto& [from, to] : placement_pairs(*model.placement)) {
      least = std::min({least, time(from, to), time(to, from)});
    }
    return least;
  }
  for (Rank from = 0; from < spec.nranks; ++from) {
    for (Rank to = 0; to < spec.nranks; ++to) {
      if (from != to) least = std::min(least, time(from, to));
    }
  }
  return least;
}
}  // namespace

Time least_transfer_time(const CollectiveSpec& spec, const CostModel& model, Count count) {
  return least_over_pairs(spec, model, count, [&](Rank from, Rank to) {
    return model.least_transfer_time(from, to, count, spec.elem_bytes);
  });
}

Time least_receive_port_time(const CollectiveSpec& spec, const CostModel& model, Count count) {
  return least_over_pairs(spec, model, count, [&](Rank from, Rank to) {
    return std::min(model.receive_port_time(from, to, count, spec.elem_bytes),
                    model.least_transfer_time(from, to, count, spec.elem_bytes));
  });
}

Time chain_bound(const CollectiveSpec& spec, const CostModel& model, Count hops, Count count) {
  return static_cast<Time>(hops) * least_transfer_time(spec, model, count);
}

Time fan_in_bound(const CollectiveSpec& spec, const CostModel& model, Count messages, Count count) {
  const Count ports = std::max(1, model.ports);
  const Count rounds = (messages + ports - 1) / ports;
  if (rounds == 0) return 0;
  // The busiest receive port takes `rounds` messages in turn, each holding it at least the
  // receive port time (the whole transfer without a receive gap); the last still takes a
  // whole transfer time from its start.
  return static_cast<Time>(rounds - 1) * least_receive_port_time(spec, model, count) +
         least_transfer_time(spec, model, count);
}

Count largest_block(const CollectiveSpec& spec) {
  if (spec.counts.empty()) return spec.count;
  return *std::max_element(spec.counts.begin(), spec.counts.end());
}

}  // namespace optcoll::algorithms
