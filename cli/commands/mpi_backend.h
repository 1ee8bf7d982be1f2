// SPDX-License-Identifier: Apache-2.0
// File: the CLI's side of `--backend mpi`: whether the build has MPI, the CLI's MPI_Init and
// MPI_Finalize policy, and the library's MPI calls (optcoll/api/mpi/, library
// optcoll_api_mpi) or, in a build without MPI, stand-ins that refuse with a clear error, so
// that the commands call run_checked_on_mpi, calibrate_on_mpi and tune_on_mpi either way.
#pragma once

#include <string_view>

#include "optcoll/api/calibrate_node.h"
#include "optcoll/api/threads_check.h"
#include "optcoll/api/tune.h"
#include "optcoll/exec/reduce_kernels.h"
#include "optcoll/model/types.h"
#include "optcoll/schedule/schedule.h"

#ifdef OPTCOLL_WITH_MPI
#include "optcoll/api/mpi/calibrate.h"
#include "optcoll/api/mpi/checked_run.h"
#include "optcoll/api/mpi/tune.h"
#include "optcoll/api/mpi/world.h"
#endif

namespace optcoll::cli {

// Whether this build has the MPI backend.
bool mpi_backend_available();

// MPI_Init (once) and MPI_Finalize when the program ends: the library's MPI calls need MPI
// initialized and leave both to the program (optcoll/api/mpi/world.h). Every command's MPI
// path calls it first; without MPI it throws Error(kInvalidArgument), "this optcoll was
// built without MPI".
void ensure_mpi_initialized();

#ifndef OPTCOLL_WITH_MPI
// Without MPI: one process (rank 0 of 1), and the three calls throw as
// ensure_mpi_initialized does.
Rank mpi_world_rank();
Rank mpi_world_size();
CheckedRun run_checked_on_mpi(const Schedule& schedule, const Datatype& scalar,
                              std::string_view op_name, const CheckedRunOptions& options);
NodeCalibration calibrate_on_mpi(NodeCalibrationOptions options);
TuneReport tune_on_mpi(const TuneOptions& options, const TuneProgress& progress);
CostModel mpi_world_default_model();
#endif

}  // namespace optcoll::cli
