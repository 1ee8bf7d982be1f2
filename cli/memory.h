// SPDX-License-Identifier: Apache-2.0
// File: the memory a command needs, estimated before it builds anything, against a limit
// (--max-memory; by default 3/4 of this machine's memory): a schedule too large to fit is
// refused at once with the estimate and the limit, instead of being built for minutes and
// ending in std::bad_alloc. And what the command is doing, for the message of an
// out-of-memory failure that the estimate did not foresee (main.cc: exit status 3).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "optcoll/algorithms/params.h"
#include "optcoll/model/collective.h"
#include "optcoll/model/cost_model.h"

namespace optcoll::cli {

// The practical limits of p, for the --help of plan, simulate and run (docs/design.md, "Memory
// estimated before building").
extern const char* const kLimitsHelp;

struct MemoryOptions {
  std::optional<std::size_t> max_memory;  // --max-memory BYTES; 0: no check

  void add_to(CLI::App& app);
  std::size_t limit() const;  // 0: no limit
};

// Throws Error(kInvalidArgument) when planning `spec` with `algorithm` (a registry name; for
// "auto" the schedule is not estimated) needs more than the limit: the schedule and its
// simulation. With `threads_run`, also running it on a thread world: the world's rank pairs
// and the data (every rank's input and output, and the reference outputs).
void check_memory(const MemoryOptions& options, const CollectiveSpec& spec,
                  std::string_view algorithm, const algorithms::Params& params,
                  const CostModel& model, bool threads_run);

// What the command is doing while this object lives ("planning bcast p=20000 ... with
// binomial"); main.cc names it when memory runs out (an exception's unwinding leaves it set).
class Activity {
 public:
  explicit Activity(std::string what);
  ~Activity();
  Activity(const Activity&) = delete;
  Activity& operator=(const Activity&) = delete;
  static const std::string& current();  // "" outside any

 private:
  std::string previous_;
  int exceptions_;
};

}  // namespace optcoll::cli
