// SPDX-License-Identifier: Apache-2.0
// File: `optcoll run --backend mpi` (run_mpi.h); without MPI in the build, a clear error.
#include "cli/commands/run_mpi.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "optcoll/api/reference.h"
#include "optcoll/exec/calibrate.h"
#include "optcoll/exec/executor.h"
#include "optcoll/exec/threads/world.h"
#include "optcoll/model/error.h"

#ifdef OPTCOLL_WITH_MPI
#include <mpi.h>
#if defined(__linux__)
#include <sched.h>
#endif

#include "optcoll/exec/mpi/mpi_transport.h"
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

Rank mpi_world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

Rank mpi_world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

CheckedRun run_checked_on_mpi(const Schedule& schedule, const Datatype& scalar,
                              std::string_view op_name, const CheckedRunOptions& options) {
  const Rank p = schedule.spec.nranks;
  if (p != mpi_world_size()) {
    throw_invalid("--backend mpi runs one rank per MPI process: -p {} but mpirun started {}", p,
                  mpi_world_size());
  }
  mpi::MpiTransport transport(MPI_COMM_WORLD);
  CheckedRun result = run_checked(transport, schedule, scalar, op_name, options);
  result.ran_on = fmt::format("{} MPI process{}", p, p == 1 ? "" : "es");
  return result;
}

// Collective over MPI_COMM_WORLD: when every rank is on one node, the processors they may
// run on together (the union of their affinity masks: bound with --bind-to core, each rank
// alone sees one), else unset.
std::optional<int> processors_of_one_node() {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  int cores = 0;
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) CPU_ZERO(&set);
  MPI_Allreduce(MPI_IN_PLACE, &set, static_cast<int>(sizeof(set)), MPI_BYTE, MPI_BOR, node);
  cores = CPU_COUNT(&set);
#else
  cores = allowed_processors();
#endif
  MPI_Comm_free(&node);
  if (node_size != mpi_world_size() || cores < 1) return std::nullopt;
  return cores;
}

NodeCalibration calibrate_on_mpi(NodeCalibrationOptions options) {
  if (mpi_world_size() < 2) {
    throw_invalid(
        "calibrate --backend mpi measures between MPI processes: start it with mpirun -np 2 "
        "(or more), got {}",
        mpi_world_size());
  }
  mpi::MpiTransport transport(MPI_COMM_WORLD);
  const std::size_t threshold = transport.shm_min_bytes();
  bool one_node = threshold != SIZE_MAX;
  for (Rank peer = 0; one_node && peer < transport.size(); ++peer) {
    if (peer != transport.rank()) one_node = transport.through_shared_memory(peer, threshold);
  }
  options.cores = processors_of_one_node();
  options.send_modes = {SendMode::kPort};
  if (one_node) {
    options.send_modes.push_back(SendMode::kShared);
    options.send_mode_min_bytes = threshold;
  }
  NodeCalibration calibration = calibrate_node(transport, options);
  // Several nodes: the two levels and the placement (calibrate_node.h).
  if (const auto placement = transport.placement(); placement && placement->nodes() > 1) {
    calibrate_levels(transport, *placement, options, calibration);
  }
  return calibration;
}

TuneReport tune_on_mpi(const TuneOptions& options, const TuneProgress& progress) {
  ensure_mpi_initialized();
  std::vector<TunePointPlan> plans = plan_tune(options, mpi_world_size());
  mpi::MpiTransport transport(MPI_COMM_WORLD);
  TuneReport report = measure_tune(transport, plans, options, progress);
  report.plans = std::move(plans);
  report.ran_on = fmt::format("{} MPI processes", mpi_world_size());
  report.table.source = report.ran_on;
  return report;
}

#else

bool mpi_backend_available() { return false; }

TuneReport tune_on_mpi(const TuneOptions&, const TuneProgress&) {
  throw_invalid("this optcoll was built without MPI (install libopenmpi-dev and rebuild)");
}
void ensure_mpi_initialized() {}
Rank mpi_world_rank() { return 0; }
Rank mpi_world_size() { return 1; }

CheckedRun run_checked_on_mpi(const Schedule&, const Datatype&, std::string_view,
                              const CheckedRunOptions&) {
  throw_invalid("this optcoll was built without MPI (install libopenmpi-dev and rebuild)");
}

NodeCalibration calibrate_on_mpi(NodeCalibrationOptions) {
  throw_invalid("this optcoll was built without MPI (install libopenmpi-dev and rebuild)");
}

#endif

}  // namespace optcoll::cli
