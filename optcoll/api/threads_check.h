// SPDX-License-Identifier: Apache-2.0
// File: run a schedule on a ThreadWorld with generated data, time it, and check every rank's
// output against the naive reference (reference.h). Used by `optcoll run` and the demo.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "optcoll/exec/reduce_kernels.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll {

struct CheckedRun {
  bool correct = false;
  std::vector<std::string> mismatches;  // the first few: "rank 3 element 17 differs"
  std::vector<double> seconds;          // wall time of each iteration (all ranks)
  double median_seconds = 0;
  std::string ran_on;  // ThreadWorld::describe(): "8 threads", "8 ranks as fibers on 2 threads"
};

// Runs `iterations` (>= 1) back-to-back executions of `schedule` on threads. `scalar` and
// `op_name` are as for the CLI (--dtype, --op; "matmul2" = 2x2 integer matrix product).
// Throws like ThreadWorld::run when a rank fails or stalls past `timeout`.
CheckedRun run_checked_on_threads(const Schedule& schedule, const Datatype& scalar,
                                  std::string_view op_name, int iterations,
                                  std::chrono::milliseconds timeout);

}  // namespace optcoll
