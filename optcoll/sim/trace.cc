// SPDX-License-Identifier: Apache-2.0
// File: the Chrome trace JSON (chrome://tracing, Perfetto) and CSV exporters of a simulated
// timeline. The SVG Gantt chart is in gantt_svg.cc.
#include "optcoll/sim/trace.h"

#include <nlohmann/json.hpp>

#include "optcoll/sim/trace_detail.h"

namespace optcoll {

std::string chrome_trace_json(const Schedule& schedule, const SimResult& result,
                              double time_scale) {
  sim::detail::require_timing(schedule, result);
  if (!(time_scale > 0)) throw_invalid("trace time scale must be positive, got {}", time_scale);
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", 0},
                    {"args", {{"name", schedule.algorithm}}}});
  for (std::size_t r = 0; r < schedule.ranks.size(); ++r) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", r},
                      {"args", {{"name", fmt::format("rank {}", r)}}}});
  }
  for (std::size_t r = 0; r < schedule.ranks.size(); ++r) {
    const auto& ops = schedule.ranks[r].ops;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const OpTiming& t = result.timing[r][i];
      if (t.start < 0 || t.end < 0) continue;  // never ran (deadlock)
      const Action& action = ops[i].action;
      nlohmann::json args = {{"op", i},
                             {"count", sim::detail::element_count(action)},
                             {"ready", t.ready * time_scale},
                             {"detail", describe(action)}};
      if (is_communication(action)) {
        args["peer"] = peer_of(action);
        args["seq"] = ops[i].seq;
      }
      if (t.port_release >= 0) args["port_release"] = t.port_release * time_scale;
      events.push_back({{"name", sim::detail::op_label(action)},
                        {"cat", sim::detail::kind_name(action)},
                        {"ph", "X"},
                        {"ts", t.start * time_scale},
                        {"dur", (t.end - t.start) * time_scale},
                        {"pid", 0},
                        {"tid", r},
                        {"args", std::move(args)}});
    }
  }
  nlohmann::json doc = {{"traceEvents", std::move(events)}};
  return doc.dump();
}

std::string trace_csv(const Schedule& schedule, const SimResult& result) {
  sim::detail::require_timing(schedule, result);
  std::string text = "rank,op,kind,peer,count,ready,start,end\n";
  for (std::size_t r = 0; r < schedule.ranks.size(); ++r) {
    const auto& ops = schedule.ranks[r].ops;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const OpTiming& t = result.timing[r][i];
      const Action& action = ops[i].action;
      const Rank peer = peer_of(action);
      text += fmt::format("{},{},{},{},{},{},{},{}\n", r, i, sim::detail::kind_name(action),
                          peer == kNoRank ? std::string() : std::to_string(peer),
                          sim::detail::element_count(action), t.ready, t.start, t.end);
    }
  }
  return text;
}

}  // namespace optcoll
