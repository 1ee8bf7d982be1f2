// SPDX-License-Identifier: Apache-2.0
// File: the paper reproductions behind `optcoll experiment NAME` (docs/experiments.md). An
// experiment computes; it never prints or writes files: it returns a table for people, a
// JSON document for scripts, and named files (CSV, SVG) that the CLI writes into --out.
// experiments.def is the one list.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace optcoll::experiments {

struct ExperimentOptions {
  bool quick = false;      // a smaller instance for tests (say so in the output)
  std::uint64_t seed = 1;  // for random inputs
  // Called with a line of progress as a long experiment goes (traff-tables: each row of
  // its tables); the CLI prints it on stderr. Empty: none. Not part of the result.
  std::function<void(const std::string&)> progress;
};

struct ExperimentResult {
  std::string table;                                       // markdown, printed by the CLI
  std::string json;                                        // one JSON document (for --json)
  std::vector<std::pair<std::string, std::string>> files;  // file name -> contents
};

struct ExperimentInfo {
  std::string_view name;       // "crossover", "traff-tables", ...
  std::string_view directory;  // its folder under docs/results/: "crossover", "traff_tables"
  std::string_view summary;    // one line: what it regenerates
  ExperimentResult (*run)(const ExperimentOptions& options);
};

std::span<const ExperimentInfo> all_experiments();
// Throws Error(kInvalidArgument) naming the known experiments.
const ExperimentInfo& find_experiment(std::string_view name);

}  // namespace optcoll::experiments
