// SPDX-License-Identifier: Apache-2.0
// File: MPI_COMM_WORLD for the API's MPI calls (world.h).
#include "optcoll/api/mpi/world.h"

#include <mpi.h>

#include "optcoll/api/communicator.h"
#include "optcoll/exec/mpi/mpi_transport.h"
#include "optcoll/model/error.h"

namespace optcoll {

void require_mpi_initialized(std::string_view caller) {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized == 0 || finalized != 0) {
    throw_invalid("{} needs MPI initialized and not finalized (call MPI_Init first), but MPI is {}",
                  caller, initialized == 0 ? "not initialized" : "already finalized");
  }
}

Rank mpi_world_rank() {
  require_mpi_initialized("mpi_world_rank");
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

Rank mpi_world_size() {
  require_mpi_initialized("mpi_world_size");
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

CostModel mpi_world_default_model() {
  require_mpi_initialized("mpi_world_default_model");
  const mpi::MpiTransport transport(MPI_COMM_WORLD);
  return default_model(transport);
}

}  // namespace optcoll
