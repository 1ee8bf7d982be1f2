// SPDX-License-Identifier: Apache-2.0
// File: a checked, timed run of a schedule with generated data: every rank's output compared
// with the naive reference (reference.h), and the time per call measured as the OSU
// benchmarks measure it, on the path users call: the schedule prepared once per rank (an
// Execution, as a Communicator keeps one), one untimed call, then `rounds` rounds of
// `calls` back-to-back calls after a barrier; a round's time is the slowest rank's elapsed
// time / calls, and the result the median over rounds. Used by `optcoll run` (threads and
// MPI), and the demo.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "optcoll/exec/reduce_kernels.h"
#include "optcoll/exec/transport.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll {

struct CheckedRun {
  bool correct = false;
  std::vector<std::string> mismatches;  // the first few: "rank 3 element 17 differs"
  std::vector<double> seconds;          // per round: seconds per call (the slowest rank)
  double median_seconds = 0;
  std::string ran_on;  // "8 threads", "8 ranks as fibers on 2 threads", "4 MPI processes"
};

struct CheckedRunOptions {
  int calls = 10;  // back to back per round (`optcoll run --iterations`)
  int rounds = 5;  // the median over them counts
  std::chrono::milliseconds timeout{30000};
};

// Collective: every rank of `transport` runs `schedule` (its rank count must be the
// transport's) with the data of make_input and checks its own output. `scalar` and `op_name`
// are as for the CLI (--dtype, --op; "matmul2" = 2x2 integer matrix product). Every rank
// returns the same verdict and times (its own mismatches only). Throws Error(kInvalidArgument)
// for bad arguments before running, TransportError when a rank fails or stalls.
CheckedRun run_checked(Transport& transport, const Schedule& schedule, const Datatype& scalar,
                       std::string_view op_name, const CheckedRunOptions& options);

// run_checked on a ThreadWorld of the schedule's rank count (every rank's mismatches).
CheckedRun run_checked_on_threads(const Schedule& schedule, const Datatype& scalar,
                                  std::string_view op_name, const CheckedRunOptions& options);

}  // namespace optcoll
