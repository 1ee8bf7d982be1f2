// SPDX-License-Identifier: Apache-2.0
// File: exporters of a simulated timeline: Chrome trace JSON (chrome://tracing, Perfetto),
// CSV, and an SVG Gantt chart. They need a SimResult computed with SimOptions::trace.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "optcoll/sim/simulator.h"

namespace optcoll {

// {"traceEvents": [{"name", "cat", "ph": "X", "ts", "dur", "pid": 0, "tid": rank, "args"}]}
// Times are exported in microseconds of model time (ts = time * time_scale).
std::string chrome_trace_json(const Schedule& schedule, const SimResult& result,
                              double time_scale = 1.0);
// rank,op,kind,peer,count,ready,start,end
std::string trace_csv(const Schedule& schedule, const SimResult& result);
struct GanttOptions {
  std::string caption;          // a line under the title, e.g. the model's description
  std::size_t max_ops = 20000;  // above this many ops, or
  Rank max_rows = 128;          // this many ranks, the chart aggregates (see GanttSvg)
};

struct GanttSvg {
  std::string svg;
  // Set when the chart aggregated: each row is a band of `band` consecutive ranks, and a
  // band's ops of one kind that lie under a pixel apart are merged into one bar.
  bool aggregated = false;
  Rank band = 1;
};

// One row per rank, one bar per op (coloured by kind), critical path outlined, time axis.
// Times are shown in `model`'s units: us, ms or s for a per-byte model, plain numbers
// ("model units") for an abstract one.
GanttSvg gantt_svg(const Schedule& schedule, const SimResult& result, const CostModel& model,
                   const GanttOptions& options = {});

// `text` with &, <, > and " replaced by their entities, for SVG text and attribute values
// (the Gantt chart's and experiments/svg_chart's).
std::string svg_escape(std::string_view text);

}  // namespace optcoll
