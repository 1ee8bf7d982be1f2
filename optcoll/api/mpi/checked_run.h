// SPDX-License-Identifier: Apache-2.0
// File: a checked, timed run of a schedule over the processes of MPI_COMM_WORLD
// (`optcoll run --backend mpi`): every process runs its rank of the schedule on MpiTransport
// with the same generated data as the thread run (run_checked, optcoll/api/threads_check.h),
// times it, and checks its own output against the naive reference; the verdict and the times
// are agreed between the processes (a call is as slow as its slowest rank).
//
//   MPI_Init(&argc, &argv);
//   const Schedule s = algorithms::build("allreduce/ring", spec);  // spec.nranks = -np
//   const CheckedRun run = run_checked_on_mpi(s, Datatype::int64(), "sum", {});
//   // run.correct and run.median_seconds are the same on every process
#pragma once

#include <string_view>

#include "optcoll/api/threads_check.h"
#include "optcoll/exec/reduce_kernels.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll {

// run_checked on MpiTransport over MPI_COMM_WORLD; collective: every process calls it with
// the same schedule, whose rank count must be the world's size (Error(kInvalidArgument),
// "the schedule has {p} ranks but the transport {n}", on every process, before any message).
// Needs MPI initialized (world.h). Mismatch texts name only this rank's first differences;
// ran_on is "{p} MPI process(es)". Throws as run_checked does otherwise.
CheckedRun run_checked_on_mpi(const Schedule& schedule, const Datatype& scalar,
                              std::string_view op_name, const CheckedRunOptions& options);

}  // namespace optcoll
