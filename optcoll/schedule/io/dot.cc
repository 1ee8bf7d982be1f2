// SPDX-License-Identifier: Apache-2.0
// File: Graphviz export of a schedule, for looking at small schedules.
#include <fmt/format.h>

#include "optcoll/schedule/io/io.h"
#include "optcoll/schedule/validate.h"

namespace optcoll::io {

std::string to_dot(const Schedule& s) {
  require_well_formed(s);
  std::string out = fmt::format(
      "digraph \"{}\" {{\n  rankdir=TB;\n  node [shape=box, fontsize=10];\n", s.algorithm);
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    out += fmt::format("  subgraph cluster_{} {{\n    label=\"rank {}\";\n", r, r);
    const auto& ops = s.ranks[r].ops;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const std::string release =
          ops[i].not_before != 0 ? fmt::format(", not before {}", ops[i].not_before) : "";
      out += fmt::format("    r{}_{} [label=\"{}: {}{}\"];\n", r, i, i, describe(ops[i].action),
                         release);
      for (const OpId dep : ops[i].after)
        out += fmt::format("    r{}_{} -> r{}_{};\n", r, dep, r, i);
    }
    out += "  }\n";
  }
  const auto match = match_messages(s);
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    const auto& ops = s.ranks[r].ops;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (is_send(ops[i].action)) {
        const OpRef other = match[r][i];
        out += fmt::format("  r{}_{} -> r{}_{} [style=dashed, label=\"seq {}\"];\n", r, i,
                           other.rank, other.op, ops[i].seq);
      }
    }
  }
  out += "}\n";
  return out;
}

}  // namespace optcoll::io
