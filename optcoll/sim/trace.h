// SPDX-License-Identifier: Apache-2.0
// File: exporters of a simulated timeline: Chrome trace JSON (chrome://tracing, Perfetto),
// CSV, and an SVG Gantt chart. They need a SimResult computed with SimOptions::trace.
#pragma once

#include <string>

#include "optcoll/sim/simulator.h"

namespace optcoll {

// {"traceEvents": [{"name", "cat", "ph": "X", "ts", "dur", "pid": 0, "tid": rank, "args"}]}
// Times are exported in microseconds of model time (ts = time * time_scale).
std::string chrome_trace_json(const Schedule& schedule, const SimResult& result,
                              double time_scale = 1.0);
// rank,op,kind,peer,count,ready,start,end
std::string trace_csv(const Schedule& schedule, const SimResult& result);
// One row per rank, one bar per op (coloured by kind), critical path outlined, time axis.
std::string gantt_svg(const Schedule& schedule, const SimResult& result);

}  // namespace optcoll
