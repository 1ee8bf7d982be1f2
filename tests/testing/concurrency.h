// SPDX-License-Identifier: Apache-2.0
// File: test helper: how many transfers a simulated schedule has in progress at once, read
// off the simulator's trace (the greedy planners' transfer limits are checked against it).
#pragma once

#include <algorithm>
#include <utility>
#include <variant>
#include <vector>

#include "optcoll/schedule/schedule.h"
#include "optcoll/sim/simulator.h"

namespace optcoll::testing {

// The largest number of transfers (sends of positive duration) in progress at once in a
// simulation run with SimOptions::trace; a transfer ending at the instant another starts is
// not counted with it.
inline int most_concurrent_transfers(const Schedule& schedule, const SimResult& result) {
  std::vector<std::pair<Time, int>> events;  // (time, +1 start / -1 end); ends sort first
  for (std::size_t r = 0; r < schedule.ranks.size(); ++r) {
    const auto& ops = schedule.ranks[r].ops;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (!std::holds_alternative<Send>(ops[i].action)) continue;
      const auto& t = result.timing[r][i];
      if (t.end > t.start) {
        events.push_back({t.start, +1});
        events.push_back({t.end, -1});
      }
    }
  }
  std::sort(events.begin(), events.end());
  int open = 0;
  int most = 0;
  for (const auto& [time, delta] : events) {
    open += delta;
    most = std::max(most, open);
  }
  return most;
}

}  // namespace optcoll::testing
