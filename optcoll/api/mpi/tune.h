// SPDX-License-Identifier: Apache-2.0
// File: `optcoll tune`'s engine (optcoll/api/tune.h) over the processes of MPI_COMM_WORLD
// (`optcoll tune --backend mpi`).
#pragma once

#include "optcoll/api/tune.h"

namespace optcoll {

// plan_tune for the world's size on every process (deterministic: every process plans the
// same grid; without options.model under default_model of the transport, as a Communicator
// on it plans), then measure_tune on MpiTransport over MPI_COMM_WORLD; collective: every
// process calls it with the same options. Needs MPI initialized (world.h). Every process
// returns the report (its plans included); ran_on and the table's source are
// "{p} MPI processes". Throws as plan_tune and measure_tune do.
TuneReport tune_on_mpi(const TuneOptions& options, const TuneProgress& progress = {});

}  // namespace optcoll
