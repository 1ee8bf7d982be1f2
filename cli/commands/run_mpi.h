// SPDX-License-Identifier: Apache-2.0
// File: `optcoll run --backend mpi`: every process of the mpirun world runs its rank of the
// schedule on MpiTransport with the same generated data as the thread run, times it, and
// checks its own output against the naive reference; the verdict and the times are agreed
// with MPI_Allreduce (a call is as slow as its slowest rank).
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "optcoll/api/calibrate_node.h"
#include "optcoll/api/threads_check.h"
#include "optcoll/api/tune.h"
#include "optcoll/exec/calibrate.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll::cli {

// Whether this build has the MPI backend.
bool mpi_backend_available();

// MPI_Init (once) and MPI_Finalize when the program ends.
void ensure_mpi_initialized();
Rank mpi_world_rank();
Rank mpi_world_size();

// As run_checked_on_threads, over the processes of MPI_COMM_WORLD (their number must equal
// the schedule's rank count). Mismatch texts name only this rank's first differences.
CheckedRun run_checked_on_mpi(const Schedule& schedule, const Datatype& scalar,
                              std::string_view op_name, const CheckedRunOptions& options);

// calibrate_node over MPI_COMM_WORLD (at least 2 processes). The caller's options get, when
// every rank is on one node, the processors they share (`cores`) and the send modes the MPI
// backend may have there (port, or shared from the same-node channel's threshold: sends of
// one buffer to several ranks share their copy, docs/design.md, "The same-node channel"). The
// result on rank 0.
NodeCalibration calibrate_on_mpi(NodeCalibrationOptions options);

// optcoll tune over the processes of MPI_COMM_WORLD: every rank plans the grid (plan_tune,
// deterministic) and measures it on MpiTransport; every rank returns the report.
TuneReport tune_on_mpi(const TuneOptions& options, const TuneProgress& progress);

}  // namespace optcoll::cli
