// SPDX-License-Identifier: Apache-2.0
// File: barrier and maximum over the ranks of a transport (rank_sync.h).
#include "optcoll/api/rank_sync.h"

#include <algorithm>
#include <span>

#include "optcoll/algorithms/registry.h"
#include "optcoll/schedule/builder.h"

namespace optcoll {
namespace {

// Rank `me`'s program of a registry algorithm (a OneRankBuild): every rank of a thread world
// makes its own, and whole schedules made p times took O(p^2 log p) in all (p = 1,000: most
// of a checked run's 25 s and 6 GB). A registry builder's schedule is well formed (the
// registry tests verify every algorithm over the grid), and a one-rank build is the same
// rank's program, so the Executions below skip the whole-schedule check (as a
// Communicator's prepared calls do). The build waits for nothing, so a fiber does not move
// to another worker thread while the thread's OneRankBuild holds.
Schedule rank_program(const char* algorithm, const CollectiveSpec& spec, Rank me) {
  const OneRankBuild only(me);
  return algorithms::build(algorithm, spec);
}

Schedule barrier_program(const Transport& transport) {
  return rank_program("barrier/dissemination",
                      make_spec(CollectiveKind::kBarrier, transport.size(), 0), transport.rank());
}

Schedule max_program(const Transport& transport) {
  CollectiveSpec spec = make_spec(CollectiveKind::kAllreduce, transport.size(), 1);
  spec.elem_bytes = sizeof(double);
  return rank_program("allreduce/recursive_doubling", spec, transport.rank());
}

}  // namespace

RankSync::RankSync(Transport& transport, std::chrono::milliseconds timeout,
                   std::uint32_t first_epoch)
    : transport_(transport),
      timeout_(timeout),
      barrier_(barrier_program(transport)),
      maximum_(max_program(transport)),
      barrier_run_(barrier_, transport.rank(), /*known_well_formed=*/true),
      maximum_run_(maximum_, transport.rank(), /*known_well_formed=*/true),
      type_(Datatype::float64()),
      max_op_(ReduceOp::builtin("max", type_)),
      epoch_(first_epoch) {}

ExecOptions RankSync::options() { return ExecOptions{timeout_, epoch_++, true}; }

void RankSync::barrier() { barrier_run_.run(transport_, {}, type_, max_op_, options()); }

double RankSync::max(double mine) {
  double result = 0;
  maximum_run_.run(transport_,
                   {std::as_bytes(std::span<const double>(&mine, 1)),
                    std::as_writable_bytes(std::span<double>(&result, 1))},
                   type_, max_op_, options());
  return result;
}

double slowest_per_call(RankSync& sync, Execution& run, BufferBinding buffers, const Datatype& type,
                        const ReduceOp& op, int calls) {
  sync.barrier();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) run.run(sync.transport(), buffers, type, op, sync.options());
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  return sync.max(took.count() / calls);
}

int calls_per_round(RankSync& sync, Execution& run, BufferBinding buffers, const Datatype& type,
                    const ReduceOp& op, double round_seconds, int max_calls) {
  slowest_per_call(sync, run, buffers, type, op, 1);
  const double one = slowest_per_call(sync, run, buffers, type, op, 1);
  const double wanted = one > 0 ? round_seconds / one : max_calls;
  return static_cast<int>(std::clamp(wanted, 1.0, static_cast<double>(max_calls)));
}

}  // namespace optcoll
