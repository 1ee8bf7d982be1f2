// SPDX-License-Identifier: Apache-2.0
// File: calibration over MPI_COMM_WORLD (calibrate.h).
#include "optcoll/api/mpi/calibrate.h"

#include <cstdint>
#include <optional>

#include <mpi.h>
#if defined(__linux__)
#include <sched.h>
#endif

#include "optcoll/api/mpi/world.h"
#include "optcoll/exec/mpi/mpi_transport.h"
#include "optcoll/exec/threads/world.h"

namespace optcoll {
namespace {

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

}  // namespace

NodeCalibration calibrate_on_mpi(NodeCalibrationOptions options) {
  require_mpi_initialized("calibrate_on_mpi");
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
    options.own_protocol_from = threshold;
  }
  // The library's own eager limit, where every message is the library's or the channel's on
  // one node (between nodes the network's protocol differs from the node's: not searched).
  const auto placement = transport.placement();
  const bool several_nodes = placement && placement->nodes() > 1;
  options.find_handshake = !several_nodes;
  NodeCalibration calibration = calibrate_node(transport, options);
  // Several nodes: the two levels and the placement (calibrate_node.h).
  if (several_nodes) calibrate_levels(transport, *placement, options, calibration);
  return calibration;
}

}  // namespace optcoll
