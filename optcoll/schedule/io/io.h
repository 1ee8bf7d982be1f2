// SPDX-License-Identifier: Apache-2.0
// File: schedule serialization. Text (docs/schedule_format.md) and JSON round-trip exactly:
// parse(to_x(s)) == s and to_x(parse(t)) == t for every text t that to_x produced. DOT is
// output only. Parsers check syntax and the spec, not the schedule's correctness: that is
// the verifier's job (a well-formed file can describe a wrong schedule).
#pragma once

#include <string>
#include <string_view>

#include "optcoll/schedule/schedule.h"

namespace optcoll::io {

inline constexpr int kScheduleFormatVersion = 1;

std::string to_text(const Schedule& schedule);
// Throws Error(kParse) naming the line and what was expected; Error(kInvalidArgument) for a
// syntactically fine but invalid collective spec.
Schedule parse_text(std::string_view text);

std::string to_json(const Schedule& schedule);
Schedule parse_json(std::string_view text);

// Graphviz: one cluster per rank, program dependencies as edges, messages as dashed edges.
std::string to_dot(const Schedule& schedule);

// Either format: JSON when the first non-blank character is '{', text otherwise.
Schedule parse_schedule(std::string_view text);

}  // namespace optcoll::io
