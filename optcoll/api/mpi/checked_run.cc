// SPDX-License-Identifier: Apache-2.0
// File: a checked run over MPI_COMM_WORLD (checked_run.h).
#include "optcoll/api/mpi/checked_run.h"

#include <fmt/format.h>
#include <mpi.h>

#include "optcoll/api/mpi/world.h"
#include "optcoll/exec/mpi/mpi_transport.h"

namespace optcoll {

CheckedRun run_checked_on_mpi(const Schedule& schedule, const Datatype& scalar,
                              std::string_view op_name, const CheckedRunOptions& options) {
  require_mpi_initialized("run_checked_on_mpi");
  mpi::MpiTransport transport(MPI_COMM_WORLD);
  CheckedRun result = run_checked(transport, schedule, scalar, op_name, options);
  const Rank p = transport.size();
  result.ran_on = fmt::format("{} MPI process{}", p, p == 1 ? "" : "es");
  return result;
}

}  // namespace optcoll
