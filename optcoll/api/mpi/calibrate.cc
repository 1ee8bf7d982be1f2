// SPDX-License-Identifier: Apache-2.0
// File: calibration over MPI_COMM_WORLD (calibrate.h).
#include "optcoll/api/mpi/calibrate.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>
#if defined(__linux__)
#include <sched.h>
#endif

#include "optcoll/api/mpi/world.h"
#include "optcoll/exec/mpi/mpi_transport.h"
#include "optcoll/exec/threads/world.h"

namespace optcoll {
namespace {

// Room for a machine's identity (a boot id has 36 characters) or MPI's processor name.
constexpr int kMachineIdBytes = MPI_MAX_PROCESSOR_NAME + 1;

// This machine's identity: its kernel's boot id where Linux has one (network namespaces and
// containers on one machine share it, whatever host name each has), else MPI's processor
// name. Zero-padded, so that equal identities compare equal byte by byte.
std::array<char, kMachineIdBytes> machine_id() {
  std::array<char, kMachineIdBytes> id{};
  std::string text;
  std::ifstream boot_id("/proc/sys/kernel/random/boot_id");
  if (!std::getline(boot_id, text) || text.empty()) {
    int length = 0;
    MPI_Get_processor_name(id.data(), &length);
    return id;
  }
  text.copy(id.data(), id.size() - 1);
  return id;
}

// Collective over `comm`: the processors its ranks may run on together (the union of their
// affinity masks: bound with --bind-to core, each rank alone sees one), or 0 if unknown.
int processors_of(MPI_Comm comm) {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) CPU_ZERO(&set);
  MPI_Allreduce(MPI_IN_PLACE, &set, static_cast<int>(sizeof(set)), MPI_BYTE, MPI_BOR, comm);
  return CPU_COUNT(&set);
#else
  (void)comm;
  return allowed_processors();
#endif
}

// Collective over MPI_COMM_WORLD: the processors of the whole job (CostModel::cores): the
// ranks on one machine (the same machine_id()) share the processors of their affinity
// masks' union, and the machines' counts add up; unset where a machine's is unknown. Nodes
// that MPI tells apart but that run on one kernel (the emulated cluster's namespaces) count
// once.
std::optional<int> processors_of_job() {
  const auto id = machine_id();
  const auto p = static_cast<std::size_t>(mpi_world_size());
  std::vector<char> ids(p * id.size());
  MPI_Allgather(id.data(), kMachineIdBytes, MPI_CHAR, ids.data(), kMachineIdBytes, MPI_CHAR,
                MPI_COMM_WORLD);
  int first = 0;  // the first rank on this machine names it
  while (!std::equal(id.begin(), id.end(), ids.begin() + first * kMachineIdBytes)) ++first;
  MPI_Comm machine = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, first, 0, &machine);
  int machine_rank = 0;
  MPI_Comm_rank(machine, &machine_rank);
  const int mine = processors_of(machine);
  MPI_Comm_free(&machine);
  int job = machine_rank == 0 ? mine : 0;
  MPI_Allreduce(MPI_IN_PLACE, &job, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int least = mine;
  MPI_Allreduce(MPI_IN_PLACE, &least, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (least < 1) return std::nullopt;
  return job;
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
  options.cores = processors_of_job();
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
