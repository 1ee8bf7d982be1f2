// SPDX-License-Identifier: Apache-2.0
// File: tuning over MPI_COMM_WORLD (tune.h).
#include "optcoll/api/mpi/tune.h"

#include <utility>
#include <vector>

#include <fmt/format.h>
#include <mpi.h>

#include "optcoll/api/mpi/world.h"
#include "optcoll/exec/mpi/mpi_transport.h"

namespace optcoll {

TuneReport tune_on_mpi(const TuneOptions& options, const TuneProgress& progress) {
  require_mpi_initialized("tune_on_mpi");
  std::vector<TunePointPlan> plans = plan_tune(options, mpi_world_size());
  mpi::MpiTransport transport(MPI_COMM_WORLD);
  TuneReport report = measure_tune(transport, plans, options, progress);
  report.plans = std::move(plans);
  report.ran_on = fmt::format("{} MPI processes", transport.size());
  report.table.source = report.ran_on;
  return report;
}

}  // namespace optcoll
