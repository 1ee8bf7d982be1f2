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

// The op's kind as the exporters group ops: 0 send, 1 recv, 2 recv-reduce, 3 copy, 4 reduce.
// A SendSlices is a send and a RecvSlices a receive (one message each; their descriptions
// list the slices).
inline std::size_t kind_index(const Action& action) {
  return std::visit(
      [](const auto& a) -> std::size_t {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<A, Send> || std::is_same_v<A, SendSlices>) {
          return 0;
        } else if constexpr (std::is_same_v<A, Recv> || std::is_same_v<A, RecvSlices>) {
          return 1;
        } else if constexpr (std::is_same_v<A, RecvReduce>) {
          return 2;
        } else if constexpr (std::is_same_v<A, Copy>) {
          return 3;
        } else {
          static_assert(std::is_same_v<A, Reduce>);
          return 4;
        }
      },
      action);
}

// "send", "recv", "recv-reduce", "copy", "reduce": the kind names the exporters show.
inline std::string_view kind_name(const Action& action) {
  constexpr std::string_view kNames[] = {"send", "recv", "recv-reduce", "copy", "reduce"};
  return kNames[kind_index(action)];
}

// Elements moved or combined by the op.
inline Count element_count(const Action& action) {
  return std::visit(
      [](const auto& a) -> Count {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<A, SendSlices>) {
          return total_count(a.src);
        } else if constexpr (std::is_same_v<A, RecvSlices>) {
          return total_count(a.dst);
        } else if constexpr (requires { a.src; }) {
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
  const bool to = is_send(action);
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
