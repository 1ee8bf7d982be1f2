// SPDX-License-Identifier: Apache-2.0
// File: barrier and maximum over the ranks of a transport (rank_sync.h).
#include "optcoll/api/rank_sync.h"

#include <algorithm>
#include <span>

#include "optcoll/algorithms/registry.h"

namespace optcoll {
namespace {

Schedule max_schedule(Rank p) {
  CollectiveSpec spec = make_spec(CollectiveKind::kAllreduce, p, 1);
  spec.elem_bytes = sizeof(double);
  return algorithms::build("allreduce/recursive_doubling", spec);
}

}  // namespace

RankSync::RankSync(Transport& transport, std::chrono::milliseconds timeout,
                   std::uint32_t first_epoch)
    : transport_(transport),
      timeout_(timeout),
      barrier_(algorithms::build("barrier/dissemination",
                                 make_spec(CollectiveKind::kBarrier, transport.size(), 0))),
      maximum_(max_schedule(transport.size())),
      barrier_run_(barrier_, transport.rank()),
      maximum_run_(maximum_, transport.rank()),
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
