// SPDX-License-Identifier: Apache-2.0
// File: the CLI's side of `--backend mpi` (mpi_backend.h): MPI_Init on first use and
// MPI_Finalize at exit; without MPI in the build, a clear error.
#include "cli/commands/mpi_backend.h"

#ifdef OPTCOLL_WITH_MPI
#include <cstdlib>

#include <mpi.h>
#else
#include "optcoll/model/error.h"
#endif

namespace optcoll::cli {

#ifdef OPTCOLL_WITH_MPI

bool mpi_backend_available() { return true; }

void ensure_mpi_initialized() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized != 0) return;
  MPI_Init(nullptr, nullptr);
  // Every rank enters MPI_Finalize together: MPICH over UCX (TCP) disconnects its endpoints
  // in MPI_Finalize and needs the peers to answer; a peer already blocked in finalize's PMI
  // barrier does not, and the job never ends (seen on the emulated cluster, where rank 0 of
  // `calibrate` times kernels after the ping-pong while rank 1 has finished).
  std::atexit([] {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized != 0) return;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
  });
}

#else

namespace {

[[noreturn]] void refuse() {
  throw_invalid("this optcoll was built without MPI (install libopenmpi-dev and rebuild)");
}

}  // namespace

bool mpi_backend_available() { return false; }
void ensure_mpi_initialized() { refuse(); }
Rank mpi_world_rank() { return 0; }
Rank mpi_world_size() { return 1; }

CheckedRun run_checked_on_mpi(const Schedule&, const Datatype&, std::string_view,
                              const CheckedRunOptions&) {
  refuse();
}

NodeCalibration calibrate_on_mpi(NodeCalibrationOptions) { refuse(); }

TuneReport tune_on_mpi(const TuneOptions&, const TuneProgress&) { refuse(); }

CostModel mpi_world_default_model() { refuse(); }

#endif

}  // namespace optcoll::cli
