// SPDX-License-Identifier: Apache-2.0
// File: MPI_COMM_WORLD for the API's MPI calls (optcoll/api/mpi/): the check that MPI is
// usable, and this process's rank and the world's size.
//
// The library neither initializes nor finalizes MPI: that is the program's (`optcoll` calls
// MPI_Init on first use and MPI_Finalize at exit, cli/commands/mpi_backend.h). Every call of
// this folder needs MPI initialized and not yet finalized, at any thread level (they run on
// the calling thread), and throws Error(kInvalidArgument) naming itself otherwise.
#pragma once

#include <string_view>

#include "optcoll/model/cost_model.h"
#include "optcoll/model/types.h"

namespace optcoll {

// Throws Error(kInvalidArgument) naming `caller` unless MPI is initialized and not finalized.
void require_mpi_initialized(std::string_view caller);

// This process's rank in MPI_COMM_WORLD, and the world's size (require_mpi_initialized).
Rank mpi_world_rank();
Rank mpi_world_size();

// The model a Communicator on MPI_COMM_WORLD plans with when given none: default_model of
// an MpiTransport over it (default_mpi_model of its placement and same-node channel), made
// for the purpose and freed. Collective over MPI_COMM_WORLD: every process calls it.
CostModel mpi_world_default_model();

}  // namespace optcoll
