// SPDX-License-Identifier: Apache-2.0
// File: Open MPI's coll/tuned dynamic rules file (rules_export.h, to_ompi_rules), in the
// classic format every Open MPI 4.x and 5.x reads:
//
//   number of collectives
//   per collective: its id; the number of communicator sizes; per size: the size, the
//     number of message rules; per rule: "key algorithm fan-in/out segment-size"
//
// Open MPI 4.x takes, per collective, the communicator-size entry with the largest size not
// above the communicator's (the first entry below it), and within it the rule with the
// largest key not above the call's (the first rule must have key 0); `#` starts a comment
// to the end of the line. Numbers are written in decimal without leading zeros (Open MPI
// reads them with %li, which would take a leading 0 for octal).
#include <map>
#include <vector>

#include <fmt/format.h>

#include "optcoll/plan/rules_export.h"

namespace optcoll {
namespace {

struct CommSizeRules {
  Rank nranks = 0;
  std::vector<const LibraryRule*> rules;
};

// The rules of each collective, by Open MPI collective id, then p.
std::map<int, std::vector<CommSizeRules>> group_rules(const LibraryRules& rules) {
  std::map<int, std::vector<CommSizeRules>> grouped;
  for (const auto& r : rules.rules) {
    auto& sizes = grouped[ompi_collective_id(r.kind)];
    if (sizes.empty() || sizes.back().nranks != r.nranks) sizes.push_back({r.nranks, {}});
    sizes.back().rules.push_back(&r);
  }
  return grouped;
}

}  // namespace

std::string to_ompi_rules(const LibraryRules& rules, std::string_view source) {
  const auto grouped = group_rules(rules);
  std::string out;
  out += "# Open MPI coll/tuned dynamic rules, written by optcoll export\n";
  out += fmt::format("# chosen by: {}\n", source);
  out +=
      "# use: mpirun --mca coll_tuned_use_dynamic_rules 1 "
      "--mca coll_tuned_dynamic_rules_filename THIS_FILE ...\n";
  out +=
      "# per rule: message size key (bytes, as coll/tuned counts it), algorithm id, "
      "fan-in/out, segment size (bytes, 0: none)\n";
  out += fmt::format("{} # collectives\n", grouped.size());
  for (const auto& [id, sizes] : grouped) {
    const CollectiveKind kind = sizes.front().rules.front()->kind;
    out += fmt::format("{} # {}\n", id, collective_name(kind));
    out += fmt::format("{} # communicator sizes\n", sizes.size());
    for (const auto& size : sizes) {
      out += fmt::format("{} # communicator size (and larger, up to the next)\n", size.nranks);
      out += fmt::format("{} # message rules\n", size.rules.size());
      for (const auto* r : size.rules) {
        if (r->algorithm->id == 0) {
          out += fmt::format("{} 0 0 0 # Open MPI's own decision (its fixed rules)\n", r->from_key);
          continue;
        }
        out += fmt::format("{} {} {} {} # {} as optcoll's {}{}\n", r->from_key, r->algorithm->id, 0,
                           r->segment_bytes, r->algorithm->name, r->algorithm->registry,
                           r->registry_params.empty() ? "" : " (" + r->registry_params + ")");
      }
    }
  }
  return out;
}

}  // namespace optcoll
