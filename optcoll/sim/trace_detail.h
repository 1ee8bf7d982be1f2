// SPDX-License-Identifier: Apache-2.0
// File: small helpers shared by the trace exporters (internal).
#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>

#include "optcoll/model/error.h"
#include "optcoll/schedule/schedule.h"
#include "optcoll/sim/simulator.h"

namespace optcoll::sim::detail {

// "send", "recv", "recv-reduce", "copy", "reduce": the kind names the exporters show.
inline std::string_view kind_name(const Action& action) {
  switch (action.index()) {
    case 0:
      return "send";
    case 1:
      return "recv";
    case 2:
      return "recv-reduce";
    case 3:
      return "copy";
    default:
      return "reduce";
  }
}

// Elements moved or combined by the op.
inline Count element_count(const Action& action) {
  return std::visit(
      [](const auto& a) -> Count {
        if constexpr (requires { a.src; }) {
          return a.src.count;
        } else {
          return a.dst.count;
        }
      },
      action);
}

// "send to 3", "recv from 2", "copy".
inline std::string op_label(const Action& action) {
  const Rank peer = peer_of(action);
  if (peer == kNoRank) return std::string(kind_name(action));
  const bool to = std::holds_alternative<Send>(action);
  return fmt::format("{} {} {}", kind_name(action), to ? "to" : "from", peer);
}

// The exporters need per-op timing of the same schedule.
inline void require_timing(const Schedule& schedule, const SimResult& result) {
  bool ok = result.timing.size() == schedule.ranks.size();
  for (std::size_t r = 0; ok && r < schedule.ranks.size(); ++r) {
    ok = result.timing[r].size() == schedule.ranks[r].ops.size();
  }
  if (!ok) {
    throw_invalid(
        "trace export needs a SimResult of this schedule computed with "
        "SimOptions::trace = true");
  }
}

}  // namespace optcoll::sim::detail
