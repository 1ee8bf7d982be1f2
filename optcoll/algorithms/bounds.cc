// SPDX-License-Identifier: Apache-2.0
// File: the building blocks of the registry's lower bounds (bounds.h).
#include "optcoll/algorithms/bounds.h"

#include <algorithm>
#include <limits>

namespace optcoll::algorithms {

Time least_transfer_time(const CollectiveSpec& spec, const CostModel& model, Count count) {
  if (count <= 0 || spec.nranks < 2) return 0;
  if (model.homogeneous()) return model.transfer_time(0, 1, count, spec.elem_bytes);
  Time least = std::numeric_limits<Time>::infinity();
  for (Rank from = 0; from < spec.nranks; ++from) {
    for (Rank to = 0; to < spec.nranks; ++to) {
      if (from != to)
        least = std::min(least, model.transfer_time(from, to, count, spec.elem_bytes));
    }
  }
  return least;
}

Time chain_bound(const CollectiveSpec& spec, const CostModel& model, Count hops, Count count) {
  return static_cast<Time>(hops) * least_transfer_time(spec, model, count);
}

Time fan_in_bound(const CollectiveSpec& spec, const CostModel& model, Count messages, Count count) {
  const Count ports = std::max(1, model.ports);
  const Count rounds = (messages + ports - 1) / ports;
  return static_cast<Time>(rounds) * least_transfer_time(spec, model, count);
}

Count largest_block(const CollectiveSpec& spec) {
  if (spec.counts.empty()) return spec.count;
  return *std::max_element(spec.counts.begin(), spec.counts.end());
}

}  // namespace optcoll::algorithms
