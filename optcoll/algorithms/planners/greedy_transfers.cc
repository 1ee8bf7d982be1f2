// SPDX-License-Identifier: Apache-2.0
// File: Canon & Antoniu's Algorithm 2 (see greedy_transfers.h for the pseudocode followed).
#include "optcoll/algorithms/planners/greedy_transfers.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "optcoll/model/error.h"

namespace optcoll::algorithms::planners {

ReductionTree greedy_transfers(std::int64_t n, const ReductionCosts& costs,
                               std::int64_t transfers) {
  if (transfers < 1) {
    throw_invalid("transfers (the K of Algorithm 2) must be >= 1, got {}", transfers);
  }
  ReductionTree tree = empty_reduction_tree(n);
  const auto size = static_cast<std::size_t>(n);
  const auto k = static_cast<std::size_t>(std::min<std::int64_t>(transfers, n));
  // Argmin over (s[j], j): the smallest value, ties to the lowest index.
  using Entry = std::pair<Time, std::int32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  heap.push({0, 0});
  std::vector<Time> t(size, 0);  // reversed end of machine i's transfer
  for (std::size_t i = 1; i < size; ++i) {
    const auto [s_m, m] = heap.top();
    heap.pop();
    const Time previous = i > k ? t[i - k] : 0;  // the K-th previous transfer, if any
    t[i] = std::max(s_m + costs.c, previous) + costs.d;
    OPTCOLL_CHECK(t[i] >= t[i - 1], "Algorithm 2: t decreases at {}", i);
    heap.push({t[i], static_cast<std::int32_t>(i)});
    heap.push({std::max(s_m + costs.c, t[i] - costs.c), m});
    tree.parent[i] = m;
  }
  link_children_reversed(tree);
  tree.length = t[size - 1];
  tree.send_start.assign(size, 0);
  for (std::size_t i = 1; i < size; ++i) tree.send_start[i] = tree.length - t[i];
  return tree;
}

}  // namespace optcoll::algorithms::planners
