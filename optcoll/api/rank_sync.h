// SPDX-License-Identifier: Apache-2.0
// File: the small collectives that measuring code needs on every rank of a Transport: a
// barrier before a timed section, and the maximum of one double over the ranks (the slowest
// rank's time, or an agreed decision). Prepared once (registry schedules run as Executions),
// each call with the next epoch of this rank's sequence, so that measurements interleave
// with other schedules on the same transport only through RankSync::options().
//
//   RankSync sync(transport, timeout);
//   sync.barrier();
//   ... timed work ...
//   const double slowest = sync.max(my_seconds);
#pragma once

#include <chrono>
#include <cstdint>

#include "optcoll/exec/executor.h"
#include "optcoll/exec/reduce_kernels.h"
#include "optcoll/exec/transport.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll {

class RankSync {
 public:
  // `first_epoch`: where this rank's sequence of epochs starts (away from the epochs other
  // code uses on the same transport).
  RankSync(Transport& transport, std::chrono::milliseconds timeout, std::uint32_t first_epoch = 0);

  // Options for the next collective this rank runs on the transport (a fresh epoch).
  ExecOptions options();
  void barrier();
  double max(double mine);
  Transport& transport() { return transport_; }

 private:
  Transport& transport_;
  std::chrono::milliseconds timeout_;
  Schedule barrier_;
  Schedule maximum_;
  Execution barrier_run_;
  Execution maximum_run_;
  Datatype type_;
  ReduceOp max_op_;
  std::uint32_t epoch_ = 0;
};

// `calls` runs of `run` back to back after a barrier: the slowest rank's seconds per call
// (collective: every rank calls it alike).
double slowest_per_call(RankSync& sync, Execution& run, BufferBinding buffers, const Datatype& type,
                        const ReduceOp& op, int calls);

// A warm-up call and a probe call of `run`: how many back-to-back calls take about
// `round_seconds` (at least 1, at most `max_calls`).
int calls_per_round(RankSync& sync, Execution& run, BufferBinding buffers, const Datatype& type,
                    const ReduceOp& op, double round_seconds, int max_calls);

}  // namespace optcoll
