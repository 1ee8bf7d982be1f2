// SPDX-License-Identifier: Apache-2.0
// File: `optcoll run --backend mpi`: every process of the mpirun world runs its rank of the
// schedule on MpiTransport with the same generated data as the thread run, times it, and
// checks its own output against the naive reference; the verdict and the times are agreed
// with MPI_Allreduce (a call is as slow as its slowest rank).
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "optcoll/api/threads_check.h"
#include "optcoll/api/tune.h"
#include "optcoll/exec/calibrate.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll::cli {

// Whether this build has the MPI backend.
bool mpi_backend_available();

// MPI_Init (once) and MPI_Finalize when the program ends.
void ensure_mpi_initialized();
Rank mpi_world_rank();
Rank mpi_world_size();

// As run_checked_on_threads, over the processes of MPI_COMM_WORLD (their number must equal
// the schedule's rank count). Mismatch texts name only this rank's first differences.
CheckedRun run_checked_on_mpi(const Schedule& schedule, const Datatype& scalar,
                              std::string_view op_name, int iterations,
                              std::chrono::milliseconds timeout);

// measure_ping_pong and measure_send_gap between MPI ranks 0 and 1 of MPI_COMM_WORLD (at least 2
// processes); the samples on rank 0, empty elsewhere. `shared_send_min_bytes` (rank 0): the
// same-node channel's threshold when every rank of the world is on rank 0's node and the channel is
// on (sends of one buffer to several ranks then share their copy: design.md 30), else unset.
// `send_gap` (rank 0): measure_send_gap of 8-byte messages in bursts of `burst`.
struct MpiPingPong {
  std::vector<PingPongSample> samples;
  std::optional<std::size_t> shared_send_min_bytes;
  std::optional<SendGapSample> send_gap;
  // Every rank on one node: the processors they may run on together (the union of their
  // affinity masks), the model's `cores`; unset when the ranks span nodes or it is unknown.
  std::optional<int> node_cores;
};
MpiPingPong ping_pong_on_mpi(std::span<const std::size_t> sizes, int repetitions, int burst,
                             std::chrono::milliseconds timeout);

// optcoll tune over the processes of MPI_COMM_WORLD: every rank plans the grid (plan_tune,
// deterministic) and measures it on MpiTransport; every rank returns the report.
TuneReport tune_on_mpi(const TuneOptions& options, const TuneProgress& progress);

}  // namespace optcoll::cli
