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

#include <fmt/format.h>
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

// The MPI library's own one-way time between ranks 0 and 1 (an MPI_Send / MPI_Recv
// ping-pong on a duplicate of MPI_COMM_WORLD, no optcoll channel in the way), from 64 KiB to
// `max_bytes` by doubling: its messages past the handshake on one node, which the model's
// rendezvous_beta describes. Collective; every rank returns rank 0's medians.
std::vector<PingPongSample> library_ping_pong(std::size_t max_bytes, int repetitions) {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<char> buffer(max_bytes);
  std::vector<PingPongSample> samples;
  for (std::size_t bytes = std::size_t{64} << 10; bytes <= max_bytes; bytes *= 2) {
    const int count = static_cast<int>(bytes);
    std::vector<double> one_way;
    for (int r = 0; r <= repetitions; ++r) {  // the first is a warm-up
      MPI_Barrier(comm);
      const double start = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(buffer.data(), count, MPI_CHAR, 1, 0, comm);
        MPI_Recv(buffer.data(), count, MPI_CHAR, 1, 0, comm, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(buffer.data(), count, MPI_CHAR, 0, 0, comm, MPI_STATUS_IGNORE);
        MPI_Send(buffer.data(), count, MPI_CHAR, 0, 0, comm);
      }
      if (r > 0) one_way.push_back((MPI_Wtime() - start) / 2);
    }
    std::nth_element(one_way.begin(),
                     one_way.begin() + static_cast<std::ptrdiff_t>(one_way.size() / 2),
                     one_way.end());
    double median = one_way[one_way.size() / 2];
    MPI_Bcast(&median, 1, MPI_DOUBLE, 0, comm);
    samples.push_back({bytes, median});
  }
  MPI_Comm_free(&comm);
  return samples;
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
  // One node, where the handshake was found: the library's own messages past it, beside
  // the channel that replaces the large ones. Only rank 0 holds the fitted model
  // (calibrate_node.h), so its verdict is sent to every rank: the ping-pong is collective.
  int handshake_found = calibration.model.rendezvous_bytes ? 1 : 0;
  MPI_Bcast(&handshake_found, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (one_node && transport.size() >= 2 && handshake_found != 0 &&
      options.max_bytes >= (std::size_t{128} << 10)) {
    const std::vector<PingPongSample> samples =
        library_ping_pong(options.max_bytes, options.repetitions);
    const LinearFit line = fit_latency_bandwidth(samples);
    calibration.model.rendezvous_beta = line.slope;
    calibration.fitted.push_back(
        {"rendezvous_beta", line.slope,
         fmt::format("the MPI library's own ping-pong of ranks 0 and 1 (MPI_Send, MPI_Recv) "
                     "from 64 KiB up to {} B",
                     options.max_bytes),
         line.max_relative_error});
  }
  return calibration;
}

}  // namespace optcoll
