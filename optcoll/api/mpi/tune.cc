// SPDX-License-Identifier: Apache-2.0
// File: tuning over MPI_COMM_WORLD (tune.h).
#include "optcoll/api/mpi/tune.h"

#include <utility>
#include <vector>

#include <fmt/format.h>
#include <mpi.h>

#include "optcoll/api/communicator.h"
#include "optcoll/api/mpi/world.h"
#include "optcoll/exec/mpi/mpi_transport.h"

namespace optcoll {

TuneReport tune_on_mpi(const TuneOptions& options, const TuneProgress& progress) {
  require_mpi_initialized("tune_on_mpi");
  mpi::MpiTransport transport(MPI_COMM_WORLD);
  // Unset, the model is the one a Communicator on this transport plans with.
  TuneOptions planned = options;
  if (!planned.model) planned.model = default_model(transport);
  std::vector<TunePointPlan> plans = plan_tune(planned, transport.size());
  TuneReport report = measure_tune(transport, plans, planned, progress);
  report.plans = std::move(plans);
  report.ran_on = fmt::format("{} MPI processes", transport.size());
  report.table.source = report.ran_on;
  return report;
}

}  // namespace optcoll
